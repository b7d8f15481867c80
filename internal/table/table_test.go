package table

import (
	"bytes"
	"strings"
	"testing"
)

func sample() *Table {
	t := &Table{Columns: []Column{{Name: "TEST"}, {Name: "REL", Key: "rel", Number: true, Better: Higher, Unit: "ratio"}}}
	t.Titled(Plain("Relative QPS of "), Code("a|b"), Plain(" to base"))
	t.AddCells(Cell{Text: "point-query"}, Cell{Text: "0.81", Colour: "red", Value: 0.81})
	t.Add("odd|name\nsecond line", "1.00")
	t.Note("a note")
	return t
}

// Every registered format renders the same table as its readers expect:
// each output whole, so that a change to any renderer shows here.
func TestRenderEveryFormat(t *testing.T) {
	want := map[Format]string{
		Text: "Relative QPS of a|b to base\n" +
			"TEST                   REL\n" +
			"point-query            \x1b[41;97m0.81\x1b[0m\n" +
			"odd|name\\nsecond line  1.00\n" +
			"a note\n",
		Markdown: "Relative QPS of `a|b` to base\n\n" +
			"| TEST | REL |\n|---|---:|\n" +
			"| point-query | **0.81** |\n" +
			"| odd\\|name\\nsecond line | 1.00 |\n\na note\n",
		CSV:  "test,rel\npoint-query,0.81\n\"odd|name\nsecond line\",1.00\n",
		TSV:  "test\trel\npoint-query\t0.81\n\"odd|name\nsecond line\"\t1.00\n",
		JSON: "[\n {\n  \"test\": \"point-query\",\n  \"rel\": 0.81\n },\n {\n  \"test\": \"odd|name\\nsecond line\",\n  \"rel\": \"1.00\"\n }\n]\n",
		HTML: "<table>\n<caption>Relative QPS of <code>a|b</code> to base</caption>\n" +
			"<thead><tr><th>TEST</th><th title=\"ratio, higher is better\">REL</th></tr></thead>\n<tbody>\n" +
			"<tr><td>point-query</td><td class=\"num worse\">0.81</td></tr>\n" +
			"<tr><td>odd|name\nsecond line</td><td class=\"num\">1.00</td></tr>\n</tbody>\n</table>\n<p>a note</p>\n",
	}
	for _, f := range Formats() {
		w, ok := want[f]
		if !ok {
			t.Errorf("format %s is registered but this test does not know what it should print: add it", f)
			continue
		}
		var b bytes.Buffer
		if err := Render(&b, f, sample(), Options{Colour: true}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if b.String() != w {
			t.Errorf("%s:\ngot  %q\nwant %q", f, b.String(), w)
		}
	}
	if len(Formats()) != len(want) {
		t.Errorf("registered %v, want the %d formats above", Formats(), len(want))
	}
}

// An empty table prints its Empty line instead of a bare header, in the
// formats that print prose; csv keeps its header, json is [].
func TestEmpty(t *testing.T) {
	tb := New("ID", "NAME")
	tb.Empty = "no tokens: qpslab tokens create NAME makes one"
	for f, want := range map[Format]string{Text: tb.Empty + "\n", CSV: "id,name\n", JSON: "[]\n"} {
		var b bytes.Buffer
		if err := Render(&b, f, tb, Options{}); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("%s: got %q, want %q", f, b.String(), want)
		}
	}
}

// Hostile cells (markup, control characters) are escaped where the format
// would read them as its own.
func TestHostileCells(t *testing.T) {
	tb := New("NAME")
	tb.Add("<script>x</script>")
	var b bytes.Buffer
	if err := Render(&b, HTML, tb, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>") {
		t.Errorf("html kept markup from a cell: %s", b.String())
	}
	if err := Render(&b, "yaml", tb, Options{}); err == nil || !strings.Contains(err.Error(), "use one of") {
		t.Errorf("an unknown format: %v, want an error naming the formats", err)
	}
}

// A row whose cells do not match the columns is a programming error.
func TestRowWidth(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a row of 1 cell in a table of 2 columns was accepted")
		}
	}()
	New("A", "B").Add("x")
}
