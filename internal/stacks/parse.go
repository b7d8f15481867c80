// Package stacks owns where a server's threads were during a measured
// window: poor man's profiler captures (every thread's stack every N
// seconds, with eu-stack from elfutils, or gdb in batch mode where eu-stack
// is missing) and on-CPU profiles (perf record at a low frequency), each
// collapsed as pt-pmp does (function names only, argument lists dropped,
// identical stacks counted), with the thread's state where /proc says it.
// It also compares them (the top stacks, the stacks whose share grew or
// shrank most between two sets, those present in only one) and exports
// them as folded stacks (flamegraph.pl, speedscope) and pprof profiles.
//
// It runs the capture tools against the server's processes and reads
// /proc; it never changes the server.
package stacks

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Thread is one thread's stack in one capture.
type Thread struct {
	TID    int
	Comm   string   // perf's command name; "" for pmp captures
	Frames []string // function names, innermost first
}

// Function reduces a frame's symbol as pt-pmp does: the function's name
// without its argument list (demangled C++ names carry one: "do_command(THD*)"
// → "do_command"), its symbol version (clock_nanosleep@GLIBC_2.2.5) or its
// offset (func+0x1a); "??" for an unknown one.
func Function(sym string) string {
	s := strings.TrimSpace(sym)
	if s == "" || s == "??" || s == "[unknown]" {
		return "??"
	}
	s = strings.TrimSuffix(s, " (inlined)") // perf's frames of inlined functions
	if i := strings.Index(s, "+0x"); i > 0 {
		s = s[:i]
	}
	for _, q := range []string{" const", " volatile", " &&", " &"} {
		s = strings.TrimSuffix(s, q)
	}
	// The argument list is the balanced group that ends the name; one
	// inside it (a function pointer type) or before it ("(anonymous
	// namespace)::f") stays.
	if strings.HasSuffix(s, ")") {
		depth := 0
		for i := len(s) - 1; i >= 0; i-- {
			switch s[i] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				// "operator()" names the call operator: its "()" is no
				// argument list.
				if i > 0 && !strings.HasSuffix(s[:i], "operator") {
					s = s[:i]
				}
				break
			}
		}
	}
	if i := strings.IndexByte(s, '@'); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "??"
	}
	// ";" separates frames in the folded format.
	return strings.ReplaceAll(s, ";", ":")
}

var (
	euTID  = regexp.MustCompile(`^TID (\d+):`)
	gdbLWP = regexp.MustCompile(`^Thread .*\(LWP (\d+)\)`)
)

// ParseEuStack reads `eu-stack -p PID`: "TID n:" then frames "#k  0xADDR
// NAME", NAME missing where the binary has no symbol for the address.
func ParseEuStack(r io.Reader) ([]Thread, error) {
	var out []Thread
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := euTID.FindStringSubmatch(line); m != nil {
			tid, _ := strconv.Atoi(m[1])
			out = append(out, Thread{TID: tid})
			continue
		}
		if !strings.HasPrefix(line, "#") || len(out) == 0 {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[1], "0x") {
			continue
		}
		name := ""
		if i := strings.Index(line, f[1]); i >= 0 {
			name = line[i+len(f[1]):]
		}
		t := &out[len(out)-1]
		t.Frames = append(t.Frames, Function(name))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read eu-stack output: %w", err)
	}
	return out, nil
}

// ParseGDB reads gdb's `thread apply all bt`: "Thread n (… (LWP tid) …):"
// then frames "#k  0xADDR in NAME (args) at …" or, for a frame at the start
// of its line or an inlined one, "#k  NAME (args) at …".
func ParseGDB(r io.Reader) ([]Thread, error) {
	var out []Thread
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := gdbLWP.FindStringSubmatch(line); m != nil {
			tid, _ := strconv.Atoi(m[1])
			out = append(out, Thread{TID: tid})
			continue
		}
		if !strings.HasPrefix(line, "#") || len(out) == 0 {
			continue
		}
		rest := strings.TrimSpace(strings.TrimLeft(line, "#0123456789"))
		if f := strings.Fields(rest); len(f) >= 3 && strings.HasPrefix(f[0], "0x") && f[1] == "in" {
			rest = strings.TrimSpace(rest[strings.Index(rest, " in ")+4:])
		}
		t := &out[len(out)-1]
		t.Frames = append(t.Frames, Function(gdbName(rest)))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read gdb output: %w", err)
	}
	return out, nil
}

// gdbName is the function name that starts s, up to the " (" of its
// arguments outside any template's angle brackets.
func gdbName(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
		case ' ':
			if depth <= 0 && i+1 < len(s) && s[i+1] == '(' {
				return s[:i]
			}
		}
	}
	return s
}

// ParsePerfScript reads `perf script -F comm,tid,ip,sym`: a sample's header
// line ("comm tid"), its frames indented ("addr sym", innermost first), a
// blank line after each sample.
func ParsePerfScript(r io.Reader) ([]Thread, error) {
	var out []Thread
	in := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			in = false
		case line[0] != ' ' && line[0] != '\t':
			f := strings.Fields(line)
			t := Thread{}
			if len(f) >= 2 {
				t.Comm = strings.Join(f[:len(f)-1], " ")
				t.TID, _ = strconv.Atoi(f[len(f)-1])
			}
			out = append(out, t)
			in = true
		case in:
			f := strings.Fields(line)
			name := ""
			if len(f) > 1 {
				name = strings.Join(f[1:], " ")
			}
			t := &out[len(out)-1]
			t.Frames = append(t.Frames, Function(name))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read perf script output: %w", err)
	}
	return out, nil
}
