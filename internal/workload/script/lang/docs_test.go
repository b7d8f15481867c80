package lang

import (
	"os"
	"strings"
	"testing"
)

// docs/script.md stays true: its example parses, every function and every
// refused meta-command has its row, and no row names a function the
// language lacks.
func TestDocsScript(t *testing.T) {
	b, err := os.ReadFile("../../../../docs/script.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## The script language")
	if i < 0 {
		t.Fatal(`docs/script.md has no "## The script language"`)
	}
	doc = doc[i:]
	if j := strings.Index(doc[3:], "\n## "); j >= 0 {
		doc = doc[:j+3]
	}
	_, ex, ok := strings.Cut(doc, "```sql\n")
	ex, _, _ = strings.Cut(ex, "```")
	if !ok {
		t.Fatal("no example")
	}
	if _, err := Parse("example.sql", ex); err != nil {
		t.Errorf("the example: %v", err)
	}
	documented := map[string]bool{}
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		cell := strings.Split(l, "|")[1]
		for _, f := range strings.Split(cell, "`") {
			if name, _, ok := strings.Cut(f, "("); ok && name != "" && !strings.ContainsAny(name, " \\:") {
				documented[name] = true
			}
		}
	}
	for _, f := range FunctionNames() {
		if !documented[f] {
			t.Errorf("function %s has no row in docs/script.md", f)
		}
		delete(documented, f)
	}
	for f := range documented {
		t.Errorf("docs/script.md documents %s(), which the language lacks", f)
	}
	for c := range refused {
		if !strings.Contains(doc, "`\\"+c+"`") {
			t.Errorf(`\%s is refused but not in docs/script.md`, c)
		}
	}
}
