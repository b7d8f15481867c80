package serve

import (
	"html/template"
	"strings"

	"github.com/qpslab/qpslab/internal/result"
)

// Names on pages. A name a user stored (a label, build, config, host,
// test, suite, version, engine, series, metric…) can be 10 KB long or hold
// characters that reorder the text around them (abc\u202Eexe.png). Every
// page shows each name through the one template function name: a
// <bdi class="name"> (isolated: its text cannot reorder its neighbours),
// whose title holds the full name and whose text is the name cut at
// nameRunes runes, its bidirectional and other control characters shown as
// their code points; serve.css cuts it again, with an ellipsis, at the
// width of its column.

// nameRunes is how many runes of a name a page shows at most.
const nameRunes = 120

// templateFuncs are the functions every page template can call.
var templateFuncs = template.FuncMap{
	"name":  nameHTML,
	"short": shortName,
	"words": wordsHTML,
}

// wordsHTML is a series' name (suite, test, thr=, config=, host= …) as
// a page shows it: each word a name of its own, so that a cut at
// nameRunes never hides the words after a long one (the threads, config
// and host that tell a series from its neighbours).
func wordsHTML(s string) template.HTML {
	var b strings.Builder
	for i, w := range strings.Fields(s) {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(string(nameHTML(w)))
	}
	return template.HTML(b.String()) // each word through nameHTML
}

// nameHTML is a name as a page shows it: <bdi class="name"
// title="FULL">SHORT</bdi>, both escaped.
func nameHTML(s string) template.HTML {
	return template.HTML(`<bdi class="name" title="` + template.HTMLEscapeString(s) + `">` + template.HTMLEscapeString(shortName(s)) + `</bdi>`)
}

// shortName is a name cut at nameRunes runes (at a rune boundary, with an
// ellipsis), each control or bidirectional formatting character in it
// written as its code point, [U+202E], so that it shows and acts on
// nothing.
func shortName(s string) string {
	if r := []rune(s); len(r) > nameRunes {
		s = string(r[:nameRunes]) + "…"
	}
	return result.Shown(s)
}
