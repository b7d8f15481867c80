package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// The fuzz targets feed the parsers arbitrary bytes (seeds in
// testdata/fuzz/FuzzXxx: the fixtures, and the figures an import refuses)
// and hold them to what an import promises: no panic; an error is one line
// that names the file; whatever is accepted holds only finite,
// non-negative figures, which the store can encode. `make fuzz` runs them.

// figures checks every number in v (structs, pointers, slices and maps,
// followed all the way down): floats finite and not negative, integers not
// negative.
func figures(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return fmt.Errorf("%s = %v", path, f)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() < 0 {
			return fmt.Errorf("%s = %d", path, v.Int())
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return figures(v.Elem(), path)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if err := figures(v.Field(i), path+"."+v.Type().Field(i).Name); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := figures(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if err := figures(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// accepted checks what a parser returned without error.
func accepted(t *testing.T, what string, v any) {
	t.Helper()
	if err := figures(reflect.ValueOf(v), what); err != nil {
		t.Fatalf("accepted a figure that is negative or not finite: %v", err)
	}
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("accepted what the store cannot encode: %v", err)
	}
}

// refused checks an error: one line, naming the file.
func refused(t *testing.T, err error, file string) {
	t.Helper()
	if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, file) {
		t.Fatalf("the error is not one line naming %s: %q", file, msg)
	}
}

// FuzzSysbench: sysbench 1.0/1.1 run output, as `import sysbench` and the
// sb.o files of `import mytools` read it; scan also takes the table size
// from the command line at the top.
func FuzzSysbench(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, scan bool) {
		label := "point-query_range=100"
		if scan {
			label = "scan_range=100"
		}
		test, err := lookup(label)
		if err != nil {
			t.Fatal(err)
		}
		run, err := sysbenchRun("sb.o.fuzz", bytes.NewReader(data), src, test)
		if err != nil {
			refused(t, err, "sb.o.fuzz")
			return
		}
		accepted(t, "run", run)
		if run.Threads < 1 {
			t.Fatalf("accepted a run of %d threads", run.Threads)
		}
	})
}

// FuzzReadR: an sb.r.* file of the reference harness (one line of values
// per thread count, then "<engine> <testType> range=<R>").
func FuzzReadR(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const p = "sb.r.qps.point-query.pre.range100.pk1"
		l, err := parseR(p, data, "point-query.pre", 100)
		if err != nil {
			refused(t, err, p)
			return
		}
		accepted(t, "values", l.values)
		for _, v := range l.values {
			if v > maxFigure {
				t.Fatalf("accepted %g, above %g", v, maxFigure)
			}
		}
	})
}

// FuzzReadMet: an an.sh sb.met file (iostat and vmstat averages).
func FuzzReadMet(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const p = "sb.met.point-query.pre.range100.pk1.dop1"
		m, err := parseMet(p, bytes.NewReader(data))
		if err != nil {
			refused(t, err, p)
			return
		}
		accepted(t, "met", m)
		accepted(t, "hw", m.hw("statement"))
	})
}
