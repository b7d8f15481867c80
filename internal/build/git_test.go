package build

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a git repository of n commits, one file each, with
// committer times a day apart, and returns its folder.
func gitRepo(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	run := func(env []string, args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	run(nil, "init", "-q", "-b", "main")
	for i := 1; i <= n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(nil, "add", ".")
		when := fmt.Sprintf("%d +0000", 1700000000+i*86400)
		run([]string{"GIT_AUTHOR_DATE=" + when, "GIT_COMMITTER_DATE=" + when, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"},
			"commit", "-q", "-m", fmt.Sprintf("commit %d", i))
	}
	return dir
}

func TestGitRange(t *testing.T) {
	ctx := context.Background()
	dir := gitRepo(t, 5)
	g, cs, err := Range(ctx, dir, "HEAD~4", "HEAD", true)
	if err != nil {
		t.Fatal(err)
	}
	if g.Subject != "commit 1" || len(cs) != 4 || cs[0].Subject != "commit 2" || cs[3].Subject != "commit 5" {
		t.Fatalf("good %+v, range %+v", g, cs)
	}
	if cs[0].Time.Unix() != 1700000000+2*86400 || len(cs[0].Hash) != 40 || cs[0].Short() != cs[0].Hash[:8] {
		t.Errorf("commit %+v", cs[0])
	}
	_, _, err = Range(ctx, dir, "HEAD", "HEAD~4", true)
	wantErr(t, err, "is not an ancestor of BAD", "older, good commit first")
	_, _, err = Range(ctx, dir, "HEAD", "main", true)
	wantErr(t, err, "the same commit")
	_, err = Resolve(ctx, dir, "nosuch")
	wantErr(t, err, `has no commit "nosuch"`)
	for _, rev := range []string{"HEAD~3..HEAD~1", "HEAD~3...HEAD", "HEAD^@", "HEAD^!", "HEAD^-"} {
		_, err = Resolve(ctx, dir, rev)
		wantErr(t, err, "is a range of commits, not one")
	}
	_, _, err = Range(ctx, dir, "HEAD~3..HEAD~1", "HEAD", true)
	wantErr(t, err, "is a range of commits")
	_, err = Resolve(ctx, dir, "--output=/tmp/x")
	wantErr(t, err, "is not a revision")
	_, err = Resolve(ctx, t.TempDir(), "HEAD")
	wantErr(t, err, "is not a git tree")
}

func wantErr(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}
