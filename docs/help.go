// Package docs holds the command reference: the long help each qpslab
// command prints (help/<its path, words joined by ->.txt), kept beside the
// manual pages it points to so that the two are read and changed together.
// usage.txt holds the one-line texts: each command's short help and its
// flags' usage. It holds text only: no behaviour, no imports of qpslab.
package docs

import (
	"embed"
	"fmt"
	"strings"
	"sync"
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

//go:embed usage.txt
var usage string

// Short is the one-line help of the command whose path (without
// "qpslab", words joined by spaces; "qpslab" for the root) is name, from
// usage.txt, and whether it has one.
func Short(name string) (string, bool) {
	s, ok := usages()[name]
	return s, ok
}

// Usage is the one-line usage of flag --flag of the command at path, from
// usage.txt, and whether it has one.
func Usage(path, flag string) (string, bool) {
	s, ok := usages()[path+" --"+flag]
	return s, ok
}

// Usages are usage.txt's keys (a command's path for its short help, PATH
// --FLAG for a flag's usage), for a test to find entries no command uses.
func Usages() []string {
	var keys []string
	for k := range usages() {
		keys = append(keys, k)
	}
	return keys
}

var usages = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	section := ""
	for i, line := range strings.Split(usage, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
		case strings.HasPrefix(line, "short: "):
			m[section] = strings.TrimPrefix(line, "short: ")
		case strings.HasPrefix(line, "--"):
			name, text, ok := strings.Cut(line[2:], ": ")
			if !ok {
				panic(fmt.Sprintf("docs/usage.txt:%d: a flag's line is --NAME: its usage", i+1))
			}
			m[section+" --"+name] = text
		default:
			panic(fmt.Sprintf("docs/usage.txt:%d: not [PATH], short: … or --NAME: …", i+1))
		}
	}
	return m
})
