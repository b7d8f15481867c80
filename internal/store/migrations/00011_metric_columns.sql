-- The metrics table's nine per-op columns (cpu_o … client_cpu_us_o) were
-- written and never read: every figure is read from the hw column
-- (result.HW) and named by the metric registry (result.Register), whose
-- aliases still take the columns' names. Dropping them leaves one name per
-- figure; the hw column holds everything they held.

-- +goose Up
ALTER TABLE metrics DROP COLUMN cpu_o;
ALTER TABLE metrics DROP COLUMN cs_o;
ALTER TABLE metrics DROP COLUMN r_o;
ALTER TABLE metrics DROP COLUMN rkb_o;
ALTER TABLE metrics DROP COLUMN wkb_o;
ALTER TABLE metrics DROP COLUMN o_s;
ALTER TABLE metrics DROP COLUMN host_cpu_us_o;
ALTER TABLE metrics DROP COLUMN server_cpu_us_o;
ALTER TABLE metrics DROP COLUMN client_cpu_us_o;

-- +goose Down
ALTER TABLE metrics ADD COLUMN cpu_o DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN cs_o DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN r_o DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN rkb_o DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN wkb_o DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN o_s DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN host_cpu_us_o DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN server_cpu_us_o DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN client_cpu_us_o DOUBLE PRECISION NOT NULL DEFAULT 0;
