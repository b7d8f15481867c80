// Package docs holds the command reference: the long help each qpslab
// command prints (help/<its path, words joined by ->.txt), kept beside the
// manual pages it points to so that the two are read and changed together.
// A command's one-line help and its flags' usage are in the code, beside
// its flags (cmd/qpslab). It holds text only: no behaviour, no imports of
// qpslab.
package docs

import (
	"embed"
	"strings"
)

//go:embed help
var help embed.FS

// Help is the long help of the command whose path (without "qpslab",
// words joined by -) is name, and whether there is one.
func Help(name string) (string, bool) {
	b, err := help.ReadFile("help/" + name + ".txt")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}
