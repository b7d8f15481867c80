package result

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReadRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	in := []Run{{SchemaVersion: SchemaVersion, Test: "point-query_range=100", Threads: 4, Status: OK,
		Totals:  Totals{Events: 10, Statements: 10, QPS: 5, ServiceHist: []byte{1, 2, 3}},
		Samples: []Sample{{Second: 0, Events: 10, Service: Latency{P99: 123}}},
		Host:    []byte(`{"cpus":2}`)}}
	if err := Write(p, in); err != nil {
		t.Fatal(err)
	}
	f, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Runs[0]
	var host bytes.Buffer
	json.Compact(&host, got.Host) // the file is indented; the JSON is the same
	if got.Test != in[0].Test || got.Totals.Events != 10 || string(got.Totals.ServiceHist) != "\x01\x02\x03" ||
		got.Samples[0].Service.P99 != 123 || host.String() != `{"cpus":2}` {
		t.Errorf("round trip changed the run: %+v", got)
	}
}

func TestReadRefusesOtherSchemaVersions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(p, []byte(`{"schema_version": 99, "runs": []}`), 0o644)
	_, err := Read(p)
	if err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("want a schema version error, got %v", err)
	}
	os.WriteFile(p, []byte(`not json`), 0o644)
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("want an error naming the file, got %v", err)
	}
}

// The storage engine is a condition and part of the label unless it is
// InnoDB, which every MySQL-family run that records no engine was: an
// InnoDB run repeats those, a MyRocks run repeats neither.
func TestEngineConditionsAndLabel(t *testing.T) {
	run := func(engine string) Run {
		r := Run{Build: "mariadb-system", Config: "myrocks@0123456789ab", Params: map[string]string{"rows": "1000", "tcp": "false"}}
		if engine != "" {
			r.Params["engine"] = engine
		}
		return r
	}
	old, inno, rocks := run(""), run("innodb"), run("rocksdb")
	if old.Conditions() != inno.Conditions() {
		t.Errorf("an InnoDB run (%s) is not a repeat of a run that records no engine (%s)", inno.Conditions(), old.Conditions())
	}
	if rocks.Conditions() == inno.Conditions() || !strings.Contains(rocks.Conditions(), "engine=rocksdb") {
		t.Errorf("a MyRocks run's conditions %q must differ from InnoDB's %q and name the engine", rocks.Conditions(), inno.Conditions())
	}
	if rocks.LabelConditions() != inno.LabelConditions() || inno.LabelConditions() != inno.Conditions() {
		t.Errorf("between labels the engine is no condition: %q against %q", rocks.LabelConditions(), inno.LabelConditions())
	}
	if d := ConditionsDiff(inno.Conditions(), rocks.Conditions()); !strings.Contains(d, "engine") {
		t.Errorf("ConditionsDiff = %q, want the engine named", d)
	}
	for r, want := range map[*Run]string{&old: "mariadb-system.myrocks", &inno: "mariadb-system.myrocks", &rocks: "mariadb-system.myrocks:rocksdb"} {
		if got := r.Label(); got != want {
			t.Errorf("Label of a run of engine %q = %s, want %s", r.StorageEngine(), got, want)
		}
	}
}
