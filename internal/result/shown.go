package result

import (
	"fmt"
	"strings"
	"unicode"
)

// Shown is s as a terminal or a page may show it: each control or
// bidirectional formatting character written as its code point, [U+202E],
// so that a stored name, commit subject or compiler line shows and acts on
// nothing.
func Shown(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "[U+%04X]", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }
