package plan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/suite"
)

// Params are the parameters a plan of suite s takes: the common ones it
// does not decline (suite.Decliner), then its own.
func Params(s suite.Suite) []suite.Param {
	var out []suite.Param
	for _, p := range Common {
		if Declined(s, p.Name) == "" {
			out = append(out, p)
		}
	}
	return append(out, s.Params()...)
}

// Declined is why suite s does not take the common parameter name; ""
// when it takes it.
func Declined(s suite.Suite, name string) string {
	if d, ok := s.(suite.Decliner); ok {
		return d.Declines()[name]
	}
	return ""
}

// ValuesOf are the parameters given (by name, as the flags of qpslab run
// SUITE name them) over the defaults of the plan's and the suite's; a
// name the suite does not take is refused. The common parameters the
// suite declines keep their defaults.
func ValuesOf(s suite.Suite, given map[string]string) (suite.Values, error) {
	v := suite.Defaults(Common, s.Params())
	taken := map[string]bool{}
	for _, p := range Params(s) {
		taken[p.Name] = true
	}
	for k, x := range given {
		if why := Declined(s, k); why != "" {
			return v, fmt.Errorf("the plan names --%s, which suite %s does not take: %s", k, s.Name(), why)
		}
		if !taken[k] {
			return v, fmt.Errorf("the plan names --%s, which suite %s does not take (qpslab run %s --help lists them)", k, s.Name(), s.Name())
		}
		v = v.With(k, recorded(s, k, x))
	}
	return v, nil
}

// recorded is the value x of parameter name as a plan records it: a
// duration in seconds (60 for --secs 1m, as for --secs 60), so that a
// history series does not split on how the duration was typed; any other
// value, and a duration the suite's check will refuse, as given.
func recorded(s suite.Suite, name, x string) string {
	for _, p := range Params(s) {
		if p.Name == name && p.Kind == suite.Seconds {
			if d, err := duration.Parse(x, true); err == nil {
				return duration.Seconds(d)
			}
		}
	}
	return x
}

// Flags offers the parameters of suite s's plan (Params) as flags on f,
// and returns how to read back those given, for ValuesOf.
func Flags(f *pflag.FlagSet, s suite.Suite) func() map[string]string {
	get := map[string]func() string{}
	for _, p := range Params(s) {
		switch p.Kind {
		case suite.Bool:
			b := f.Bool(p.Name, p.Default == "true", p.Usage)
			get[p.Name] = func() string { return strconv.FormatBool(*b) }
		case suite.List:
			var def []string
			if p.Default != "" {
				def = strings.Split(p.Default, ",")
			}
			l := f.StringSlice(p.Name, def, p.Usage)
			get[p.Name] = func() string { return strings.Join(*l, ",") }
		default:
			kind := p.Kind.String()
			if p.Kind == suite.Seconds {
				kind = "duration" // as every duration flag shows itself (internal/duration)
			}
			v := &paramValue{s: p.Default, kind: kind}
			f.Var(v, p.Name, p.Usage)
			get[p.Name] = func() string { return v.s }
		}
	}
	return func() map[string]string {
		given := map[string]string{}
		for name, g := range get {
			if f.Changed(name) {
				given[name] = g()
			}
		}
		return given
	}
}

// FlagError is the command's error for a flag error err of a command of
// suite s: a common flag the suite declines says why.
func FlagError(s suite.Suite, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	if why := Declined(s, name); why != "" {
		return errors.New(err.Error() + ": " + s.Name() + " does not take it: " + why)
	}
	return err
}

// paramValue is a parameter's flag: its text as given (the suite and the
// plan check it, every problem at once), shown in help with its kind.
type paramValue struct{ s, kind string }

func (v *paramValue) String() string     { return v.s }
func (v *paramValue) Set(s string) error { v.s = s; return nil }
func (v *paramValue) Type() string       { return v.kind }
