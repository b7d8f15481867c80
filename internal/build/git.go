package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Commit is one commit of a source tree's git history, as builds compiled
// from it and bisections name it.
type Commit struct {
	Hash    string    // the full hash
	Time    time.Time // the committer's time: commits order by it, as released builds order by version
	Subject string    // the first line of its message
}

// Short is the commit's hash as builds are named by it (8 hex digits, as
// the reference's ma1104_240723_2ee061c2).
func (c Commit) Short() string {
	if len(c.Hash) > 8 {
		return c.Hash[:8]
	}
	return c.Hash
}

// IsGitTree says whether dir is the top of a git working tree (or a bare
// repository's folder), as `git -C dir rev-parse` finds it.
func IsGitTree(ctx context.Context, dir string) bool {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return false
	}
	out, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree", "--is-bare-repository")
	return err == nil && strings.Contains(out, "true")
}

// Resolve names rev (a hash, a tag, a branch, HEAD~3) in the git tree at
// dir as the commit it is.
func Resolve(ctx context.Context, dir, rev string) (Commit, error) {
	if !IsGitTree(ctx, dir) {
		return Commit{}, fmt.Errorf("%s is not a git tree: give a git checkout (git clone …), or compile an unpacked source tree without --commit", dir)
	}
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, " \t\n\x00") {
		return Commit{}, fmt.Errorf("%q is not a revision: give a commit hash, tag or branch of %s", rev, dir)
	}
	for _, r := range []string{"..", "^@", "^!", "^-"} { // ranges name many commits
		if strings.Contains(rev, r) {
			return Commit{}, fmt.Errorf("%q is a range of commits, not one: give one commit hash, tag or branch of %s", rev, dir)
		}
	}
	hash, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || strings.TrimSpace(hash) == "" {
		return Commit{}, fmt.Errorf("%s has no commit %q: give a commit hash, tag or branch of it", dir, rev)
	}
	out, err := git(ctx, dir, "log", "-1", "--no-walk", "--format=%H%x00%ct%x00%s", strings.TrimSpace(hash), "--")
	if err != nil {
		return Commit{}, fmt.Errorf("%s has no commit %q: %v", dir, rev, err)
	}
	cs, err := parseCommits(out)
	if err != nil || len(cs) != 1 {
		return Commit{}, fmt.Errorf("%s: git log of %q printed %q", dir, rev, out)
	}
	return cs[0], nil
}

// Range is the commits after good up to and including bad, oldest first:
// what a bisection walks. First-parent follows only the first parent of a
// merge (the mainline: each commit on it was a state of the branch), as
// git bisect --first-parent does. Good must be an ancestor of bad.
func Range(ctx context.Context, dir, good, bad string, firstParent bool) (Commit, []Commit, error) {
	g, err := Resolve(ctx, dir, good)
	if err != nil {
		return Commit{}, nil, err
	}
	b, err := Resolve(ctx, dir, bad)
	if err != nil {
		return Commit{}, nil, err
	}
	if g.Hash == b.Hash {
		return Commit{}, nil, fmt.Errorf("GOOD and BAD are the same commit %s: give the last good commit and the first known bad one", g.Short())
	}
	if _, err := git(ctx, dir, "merge-base", "--is-ancestor", g.Hash, b.Hash); err != nil {
		return Commit{}, nil, fmt.Errorf("GOOD %s is not an ancestor of BAD %s: give the older, good commit first", good, bad)
	}
	args := []string{"log", "--reverse", "--format=%H%x00%ct%x00%s"}
	if firstParent {
		args = append(args, "--first-parent")
	}
	out, err := git(ctx, dir, append(args, g.Hash+".."+b.Hash, "--")...)
	if err != nil {
		return Commit{}, nil, fmt.Errorf("%s: list the commits from %s to %s: %v", dir, good, bad, err)
	}
	cs, err := parseCommits(out)
	if err != nil {
		return Commit{}, nil, fmt.Errorf("%s: %v", dir, err)
	}
	return g, cs, nil
}

func parseCommits(out string) ([]Commit, error) {
	var cs []Commit
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\x00", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("git log printed %q", line)
		}
		sec, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("git log printed the time %q", f[1])
		}
		cs = append(cs, Commit{Hash: f[0], Time: time.Unix(sec, 0).UTC(), Subject: f[2]})
	}
	return cs, nil
}

// git runs git in dir with a fixed locale and no user configuration that
// changes its output, and returns what it printed.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", fmt.Errorf("git is not installed: install it (apt-get install git)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", abs, "-c", "log.showSignature=false", "-c", "safe.directory=" + abs}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return out.String(), errors.New(firstLine(msg))
		}
		return out.String(), err
	}
	return out.String(), nil
}
