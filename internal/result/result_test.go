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
