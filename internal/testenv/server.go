package testenv

import (
	"context"
	"fmt"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/sandbox"
)

// StartServer starts the named build with the shipped default config in a new
// test home, and at the end of the test stops it and fails the test if any
// process started under that home is left (QPSLAB_HOME is set for the test, so
// every server and server child carries the home's path in its environment).
func StartServer(t testing.TB, build string) (*sandbox.Server, home.Home) {
	t.Helper()
	return StartServerWith(t, build, "default")
}

// StartServerWith is StartServer with the named shipped config (myrocks:
// MyRocks beside InnoDB).
func StartServerWith(t testing.TB, build, configName string) (*sandbox.Server, home.Home) {
	t.Helper()
	return StartServerFrom(t, build, configName, config.Store{Dir: t.TempDir()})
}

// StartServerFrom is StartServerWith with the config read from cs (one
// sized to a given host's memory, say).
func StartServerFrom(t testing.TB, build, configName string, cs config.Store) (*sandbox.Server, home.Home) {
	t.Helper()
	h := Home(t)
	t.Setenv("QPSLAB_HOME", h.Root)
	t.Cleanup(func() {
		sandbox.StopAll()
		if left := Processes(h.Root); len(left) > 0 {
			t.Errorf("processes left behind: %q", left)
		}
	})
	b := Build(t, h, build)
	cfg, err := cs.Get(configName, config.Family(b.Flavor.Describe().Family))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sandbox.Start(context.Background(), h, sandbox.Spec{Build: b, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return srv, h
}

// FleetDatabase starts PostgreSQL as StartServer does, with a database
// named fleet in it: a shared store for the fleet's tests. It gives the
// server's endpoint and the store's DSN that names the database.
func FleetDatabase(t testing.TB) (client.Endpoint, string) {
	t.Helper()
	srv, _ := StartServer(t, "postgres-system")
	ep := srv.Endpoint()
	db, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE DATABASE fleet`); err != nil {
		t.Fatal(err)
	}
	return ep, fmt.Sprintf("postgres://%s@127.0.0.1:%d/fleet?sslmode=disable", ep.User, ep.Port)
}
