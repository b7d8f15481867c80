package stacks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
)

// hold runs q (a statement that sleeps: SLEEP or pg_sleep) on its own
// connection until the test ends, and returns once the server shows it
// sleeping.
func hold(t *testing.T, ep client.Endpoint, q string) {
	t.Helper()
	db, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { db.ExecContext(ctx, q); close(done) }()
	t.Cleanup(func() { cancel(); <-done; db.Close() })
	look, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer look.Close()
	sleeping := "SELECT count(*) FROM information_schema.PROCESSLIST WHERE INFO = '" + q + "' AND STATE = 'User sleep'"
	if ep.Protocol == client.Postgres {
		sleeping = "SELECT count(*) FROM pg_stat_activity WHERE query = '" + q + "' AND wait_event = 'PgSleep'"
	}
	testenv.WaitFor(t, time.Minute, q+" sleeping in the server", func() bool {
		var n int
		look.QueryRow(sleeping).Scan(&n)
		return n > 0
	})
}

// captures is how many captures p has made so far.
func captures(p *PMP) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.captures
}

func has(s *result.Stacks, frame, state string) bool {
	for _, x := range s.Stacks {
		if strings.Contains(";"+x.Frames+";", ";"+frame+";") && (state == "" || x.State == state) {
			return true
		}
	}
	return false
}

// While a statement sleeps in the server, the captured stacks hold the
// server's function for it: MariaDB's Item_func_sleep::val_int,
// PostgreSQL's pg_sleep (in a backend: the tree is captured), each in a
// sleeping thread.
func TestCaptureKnownWait(t *testing.T) {
	for _, c := range []struct{ build, query, frame string }{
		{"mariadb-system", "SELECT SLEEP(10)", "Item_func_sleep::val_int"},
		{"postgres-system", "SELECT pg_sleep(10)", "pg_sleep"},
	} {
		t.Run(c.build, func(t *testing.T) {
			srv, _ := testenv.StartServer(t, c.build)
			hold(t, srv.Endpoint(), c.query)
			p, err := NewPMP(context.Background(), srv.PID, 500*time.Millisecond, "")
			if err != nil {
				t.Fatal(err)
			}
			p.Open()
			testenv.WaitFor(t, time.Minute, "two captures", func() bool { return captures(p) >= 2 })
			p.Close()
			s := p.Result()
			if s == nil || s.Captures < 1 || s.Tool != EuStack || s.PauseMaxMs <= 0 || s.PauseMeanMs > s.PauseMaxMs {
				t.Fatalf("result: %+v", s)
			}
			if !has(s, c.frame, "S") {
				t.Errorf("no sleeping stack with %s in %d stacks: %+v", c.frame, len(s.Stacks), s.Stacks)
			}
			if p.Result().Samples() != s.Samples() {
				t.Error("Result is not stable")
			}
		})
	}
}

// gdb, where eu-stack is missing, finds the same wait.
func TestCaptureWithGDB(t *testing.T) {
	srv, _ := testenv.StartServer(t, "mariadb-system")
	hold(t, srv.Endpoint(), "SELECT SLEEP(20)")
	threads, took, err := Capture(context.Background(), GDB, srv.PID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, th := range threads {
		if strings.Contains(strings.Join(th.Frames, ","), "Item_func_sleep::val_int") {
			found = true
		}
	}
	if !found || took <= 0 {
		t.Errorf("gdb: %d threads, the sleep found: %v", len(threads), found)
	}
}

// Close lets a capture in progress end (a tool killed while it holds
// threads stopped would leave them stopped) and counts it; the server goes
// on. gdb holds every thread stopped for seconds.
func TestCloseWaitsForACapture(t *testing.T) {
	srv, _ := testenv.StartServer(t, "mariadb-system")
	p, err := NewPMP(context.Background(), srv.PID, 200*time.Millisecond, GDB)
	if err != nil {
		t.Fatal(err)
	}
	p.Open()
	// Close once gdb holds the server's threads stopped (in tracing stop),
	// as it does for seconds.
	testenv.WaitFor(t, time.Minute, "gdb holding the server's threads", func() bool {
		for _, st := range threadStates(p.fs, srv.PID) {
			if st == "t" {
				return true
			}
		}
		return false
	})
	p.Close()
	s := p.Result()
	if s == nil || s.Captures < 1 || len(s.Stacks) == 0 || s.Tool != GDB {
		t.Errorf("the capture in progress at Close: %+v", s)
	}
	db, err := client.Open(srv.Endpoint(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("the server after the capture: %v", err)
	}
}

// perf records the server's CPU while it works, or, where perf cannot
// record, says so in one line.
func TestPerf(t *testing.T) {
	srv, _ := testenv.StartServer(t, "mariadb-system")
	if err := CheckPerf(context.Background()); err != nil {
		testenv.Skip(t, "perf cannot record on this machine: "+err.Error())
	}
	db, err := client.Open(srv.Endpoint(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A window of work under perf: on a loaded host perf may attach after
	// the window's work is done and record nothing, so the test waits for
	// the event, a window in which perf captured the server, each window a
	// fresh perf (the 1.5 s of statements is the work, not a wait).
	var s *result.Stacks
	testenv.WaitFor(t, 3*time.Minute, "a perf window that captured the server's CPU", func() bool {
		p := NewPerf(context.Background(), srv.PID)
		p.Open()
		for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
			var x int
			db.QueryRow("SELECT BENCHMARK(20000, MD5('qpslab'))").Scan(&x)
		}
		p.Close()
		s = p.Result()
		return s == nil || s.Captures > 0 || len(s.Notes) > 0
	})
	if s == nil || s.Captures == 0 || len(s.Stacks) == 0 || len(s.Notes) > 0 {
		t.Fatalf("perf: %+v", s)
	}
	if !has(s, "Item_func_benchmark::val_int", "R") {
		t.Errorf("no on-CPU stack through Item_func_benchmark::val_int: %+v", s.Stacks[:min(5, len(s.Stacks))])
	}

	// A process that is gone: perf cannot attach, and the result says so
	// (Open finds no such process: there is nothing to wait for).
	gone := NewPerf(context.Background(), 1<<22)
	gone.Open()
	gone.Close()
	g := gone.Result()
	if g == nil || len(g.Notes) != 1 || len(g.Stacks) != 0 {
		t.Errorf("perf on a missing process: %+v", g)
	}
}
