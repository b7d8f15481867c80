-- A build compiled from source (qpslab builds compile) is stored with the
-- commit it was compiled from, the commit's time (RFC 3339 UTC: commit
-- builds order by it, as released builds order by version) and the
-- recipe's flags, as its runs carry them (params commit, commit_time,
-- build_flags). Additive: builds stored before, and builds not compiled,
-- keep '' in all three. "commit" is quoted: a keyword in both databases.

-- +goose Up
ALTER TABLE builds ADD COLUMN "commit" TEXT NOT NULL DEFAULT '';
ALTER TABLE builds ADD COLUMN commit_time TEXT NOT NULL DEFAULT '';
ALTER TABLE builds ADD COLUMN flags TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE builds DROP COLUMN flags;
ALTER TABLE builds DROP COLUMN commit_time;
ALTER TABLE builds DROP COLUMN "commit";
