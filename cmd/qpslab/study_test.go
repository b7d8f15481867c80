package main_test

import "testing"

// Bad input to qpslab study stops it before anything runs, with one line
// naming the problem and the fix.
func TestStudyBadInput(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no suite", []string{"study"}, []string{"name the suite to study", "qpslab suites"}},
		{"unknown suite", []string{"study", "nosuch"}, []string{"nosuch"}},
		{"no builds", []string{"study", "sysbench"}, []string{"two builds or more", "--build B1,B2"}},
		{"one build", []string{"study", "sysbench", "--build", "postgres-system"}, []string{"two builds or more"}},
		{"unknown build", []string{"study", "sysbench", "--build", "postgres-system,nosuch-1"}, []string{`unknown build "nosuch-1"`, "qpslab builds"}},
		{"base not in the list", []string{"study", "sysbench", "--build", "postgres-system,mariadb-system", "--base", "postgres-12.22.0"}, []string{"--base postgres-12.22.0 is not one of --build's builds", "name one of them"}},
		{"hostile name", []string{"study", "sysbench", "--build", "postgres-system,../../etc/passwd"}, []string{"--build", "../../etc/passwd"}},
		{"shell in a name", []string{"study", "sysbench", "--build", "postgres-system,x;rm -rf y"}, []string{"--build"}},
		{"a build twice", []string{"study", "sysbench", "--build", "postgres-system,postgres-system"}, []string{"twice"}},
		{"two configs", []string{"study", "sysbench", "--build", "postgres-system,mariadb-system", "--config", "a,b"}, []string{"one config"}},
		{"unknown scale", []string{"study", "sysbench", "--build", "postgres-system,mariadb-system", "--scale", "huge"}, []string{"--scale huge", "tiny, small or full"}},
		{"a flag the suite does not take", []string{"study", "sysbench", "--build", "a,b", "--clients", "4"}, []string{"unknown flag: --clients"}},
	} {
		t.Run(tc.name, func(t *testing.T) { oneErrorLine(t, h, tc.args, tc.want) })
	}
}
