package config

import (
	"strings"
	"testing"
)

// A build runs with the config of the first rule that matches it: its name,
// a glob over names, or a version range on the parts its ends give.
func TestPerBuild(t *testing.T) {
	m, err := ParsePerBuild([]string{"mariadb-10.2.11=old", "10.2..10.11=cz11a_bee", "mariadb-11.*=cz11b_bee", "12..=new"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, version, want string }{
		{"mariadb-10.2.11", "10.2.11", "old"},
		{"ma100433_rel", "10.4.33", "cz11a_bee"},
		{"mariadb-10.11", "10.11.9", "cz11a_bee"},
		{"mariadb-11.4", "11.4.5", "cz11b_bee"},
		{"ma120001", "12.0.1", "new"},
		{"ma110401_rel", "11.4.1", ""}, // a range that skips 11 and a glob on another name
		{"mariadb-10.1", "10.1.48", ""},
		{"mysql-8.0", "", ""},
	} {
		got, ok := m.ConfigFor(c.name, c.version)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s (%s): %q %v, want %q", c.name, c.version, got, ok, c.want)
		}
	}
	if got := strings.Join(m.Configs(), ","); got != "old,cz11a_bee,cz11b_bee,new" {
		t.Errorf("configs %s", got)
	}
	// The shipped map: the reference's small-server MariaDB configs per
	// major version.
	sm, err := ParsePerBuild([]string{"cz11_bee"})
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]string{"10.2.11": "cz11a_bee", "10.11.9": "cz11a_bee", "11.0.2": "cz11b_bee", "11.8.1": "cz11b_bee"} {
		if got, _ := sm.ConfigFor("mariadb-"+v, v); got != want {
			t.Errorf("cz11_bee: %s gets %q, want %s", v, got, want)
		}
	}
}

// Bad rules are refused in one line naming the fix; hostile ones too.
func TestPerBuildRefuses(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"nosuchmap", "nor a shipped map (cz11_bee"},
		{"=cz11a_bee", "name the builds before '='"},
		{"..=x", "names no version"},
		{"10.x..11=x", "is not a version"},
		{"1e9..=x", "is not a version"},
		{"99999999999..=x", "is not a version"},
		{"mariadb-10.*=../etc", "config name"},
		{"mariadb-10.*=a\x1b[31m", "config name"},
		{"ma[=x", "takes letters, digits"},
		{"a/b=x", "takes letters, digits"},
		{strings.Repeat("a", 300) + "=x", "at most 200"},
		{"a=" + strings.Repeat("b", 300), "config name"},
	} {
		_, err := ParsePerBuild([]string{c.in})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", c.in, err, c.want)
		}
	}
	many := make([]string, maxRules+1)
	for i := range many {
		many[i] = "a=b"
	}
	if _, err := ParsePerBuild(many); err == nil {
		t.Error("a map of too many rules is taken")
	}
}
