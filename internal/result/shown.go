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

// Invisible says whether c shows as nothing (or as nothing of its own):
// Unicode's format characters (Cf: the zero-width space, joiners and
// non-joiner, the word joiner, the soft hyphen, the byte-order mark, the
// bidirectional controls, tags), its other default-ignorable code points
// (Hangul fillers, U+034F) and its variation selectors. A name holding one
// shows exactly as another name without it: nightly\u200b-0455 as
// nightly-0455. Names refuse them (importer.Validate, layout files).
func Invisible(c rune) bool {
	return unicode.In(c, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}
