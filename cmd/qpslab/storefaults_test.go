package main_test

// The fault-injection tests of the store, the importers and the names
// (docs/reliability.md): a damaged store page, SIGKILL of qpslab at random
// points of an import and of a dashboard ingest, an import of a FIFO
// stopped by a signal, and names given twice. Each kill point is an
// event: a number of bytes drawn at random over what the process reads or
// is sent and what it writes into the store's WAL, reached.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // to damage a page of the store, as a disk would

	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

// twoLabelsHome is a home whose store holds two labels, b1.c1 and b2.c2,
// imported from sysbench's output.
func twoLabelsHome(t *testing.T) home.Home {
	t.Helper()
	h := newHome(t)
	for _, l := range [][2]string{{"b1.c1", "sysbench-1.0.20-point-select.txt"}, {"b2.c2", "sysbench-1.0.20-read-only.txt"}} {
		test := map[string]string{"b1.c1": "point-query_range=100", "b2.c2": "read-only_range=100"}[l[0]]
		if r := qpslab(t, h, "import", "sysbench", filepath.Join("..", "..", "internal", "importer", "testdata", l[1]), "--label", l[0], "--test", test); r.code != 0 {
			t.Fatalf("import %s: %+v", l[0], r)
		}
	}
	return h
}

// dropIndexCell takes the last entry off the root page of index name in the
// SQLite file at path (its cell count): the page stays readable, as a torn
// write leaves it.
func dropIndexCell(t *testing.T, path, name string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var size, root int64
	err1 := db.QueryRow(`PRAGMA page_size`).Scan(&size)
	err2 := db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = ?`, name).Scan(&root)
	db.Close()
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 2)
	if _, err := f.ReadAt(b, (root-1)*size+3); err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint16(b, binary.BigEndian.Uint16(b)-1)
	if _, err := f.WriteAt(b, (root-1)*size+3); err != nil {
		t.Fatal(err)
	}
}

// The case: a store with one damaged index page, and qpslab labels
// listed 1 of its 2 labels with exit 0. Now it lists none and says, in one
// line, which file is damaged and the way back; store check shows the
// damage, --reindex repairs it, and both labels are back.
func TestDamagedStorePage(t *testing.T) {
	h := twoLabelsHome(t)
	dropIndexCell(t, h.StoreFile(), "runs_label")
	r := qpslab(t, h, "labels")
	if r.code == 0 || strings.Contains(r.stdout, "b1.c1") || strings.Contains(r.stdout, "b2.c2") {
		t.Fatalf("labels of a damaged store: exit %d, listed:\n%s", r.code, r.stdout)
	}
	for _, want := range []string{"store " + h.StoreFile() + " is damaged", "only its indexes (runs_label)", "nothing is lost", "qpslab store check --reindex"} {
		if !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("labels of a damaged store: want one line with %q:\n%s", want, r.stderr)
		}
	}
	if r := qpslab(t, h, "store", "check"); r.code != 1 || !strings.Contains(r.stdout, "wrong # of entries in index runs_label") {
		t.Errorf("store check: %+v", r)
	}
	if r := qpslab(t, h, "store", "check", "--reindex"); r.code != 0 || !strings.Contains(r.stdout, "nothing was lost") {
		t.Fatalf("store check --reindex: %+v", r)
	}
	r = qpslab(t, h, "labels")
	if r.code != 0 || !strings.Contains(r.stdout, "b1.c1") || !strings.Contains(r.stdout, "b2.c2") {
		t.Errorf("labels after the repair: %+v", r)
	}
	if r := qpslab(t, h, "store", "check"); r.code != 0 || !strings.Contains(r.stdout, "ok") {
		t.Errorf("store check after the repair: %+v", r)
	}
}

// A folder whose only result file is a FIFO: the import refuses it by name
// and never opens it for reading, and ends non-zero; a SIGINT (or SIGTERM)
// sent once it has ended or waits on the FIFO ends it in either case.
// Before, it waited on the FIFO for ever, SIGINT or not.
func TestImportOfAFIFOAnswersSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			h := newHome(t)
			dir := t.TempDir()
			fifo := filepath.Join(dir, "sb.o.point-query.range100.pk1.dop1")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "import", "mytools", dir, "--label", "b.c")
			cmd.Env = testenv.Env(h)
			var stderr lockedBuf
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					<-done
				}
			}()
			// Ended (the refusal), or waiting on the FIFO (before: an import
			// whose command had long handled its signals).
			testenv.WaitFor(t, time.Minute, "qpslab ends, or waits on the FIFO", func() bool {
				return len(done) > 0 || waitingOnAFIFO(cmd.Process.Pid)
			})
			cmd.Process.Signal(sig) // an error: it has ended already
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("qpslab import mytools of a FIFO is still running a minute after %v:\n%s", sig, stderr.String())
			}
			if err == nil {
				t.Fatalf("exit 0:\n%s", stderr.String())
			}
			if out := stderr.String(); !strings.Contains(out, fifo+" is a named pipe (FIFO)") && !strings.Contains(out, "interrupted") {
				t.Errorf("%v: neither the refusal nor the interruption said:\n%s", err, out)
			}
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); !errors.Is(err, syscall.ENXIO) {
				if w != nil {
					w.Close()
				}
				t.Errorf("the FIFO has a reader after the import: %v", err)
			}
			if _, err := os.Stat(h.StoreFile()); err == nil {
				if r := qpslab(t, h, "labels"); strings.Contains(r.stdout, "b.c") {
					t.Errorf("something was stored:\n%s", r.stdout)
				}
			}
		})
	}
}

// waitingOnAFIFO says whether a thread of process pid waits in a FIFO's
// open for a writer (its wchan in fs/pipe.c).
func waitingOnAFIFO(pid int) bool {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, task.Name())); string(b) == "wait_for_partner" {
			return true
		}
	}
	return false
}

// --config c1,c1 and --build b,b: refused in one line, before anything
// starts (before, both labels shared one sandbox and the run failed).
func TestNamesGivenTwice(t *testing.T) {
	h := newHome(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "sysbench", "--build", "mariadb-system", "--config", "c1,c1"}, "--config names c1 twice"},
		{[]string{"run", "sysbench", "--build", "b,b"}, "--build names b twice"},
		{[]string{"run", "sysbench", "--build", "b", "--config", strings.Repeat("c", 188)}, "is 188 characters long: use at most 100"},
		{[]string{"import", "sysbench", "x", "--label", "b." + strings.Repeat("c", 188), "--test", "point-query_range=100"}, "is 188 characters long"},
	} {
		r := qpslab(t, h, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, want one line with %q:\n%s", c.args[:3], r.code, c.want, r.stderr)
		}
	}
	if left := testenv.Processes(h.Root); len(left) > 0 {
		t.Errorf("started: %q", left)
	}
}

// killResults is a results file of n runs of label BUILD.default with s
// samples each, all started after at: an import long enough to be killed
// in its middle.
func killResults(t *testing.T, build string, n, s int, at time.Time) []byte {
	t.Helper()
	var runs []result.Run
	for i := 0; i < n; i++ {
		r := result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "point-query_range=100", Build: build, Flavor: "mariadb",
			Version: "10.11.7", Config: "default@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Role: result.RoleTest,
			Started: at.Add(time.Duration(i) * time.Second), Totals: result.Totals{Reported: 1000, ReportedUnit: "qps", QPS: 1000}}
		for j := 0; j < s; j++ {
			r.Samples = append(r.Samples, result.Sample{Second: j, Events: 1000, Statements: 1000, Response: result.Latency{Mean: 100, P99: 300}})
		}
		runs = append(runs, r)
	}
	b, err := json.Marshal(result.File{SchemaVersion: result.SchemaVersion, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stored counts the runs of label BUILD.default in h's store, and checks
// that each has its s samples and that the store's quick check finds
// nothing wrong.
func stored(t *testing.T, h home.Home, build string, s int) int {
	t.Helper()
	ctx := context.Background()
	if _, err := store.CheckStore(ctx, "", h.StoreFile(), false); err != nil {
		t.Fatalf("the store after the kill: %v", err)
	}
	st, err := store.OpenRead(ctx, "", h.StoreFile())
	if errors.Is(err, store.ErrNoStore) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(ctx, store.Filter{Build: build, Config: "default", Samples: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if len(r.Samples) != s {
			t.Errorf("run started %s has %d samples of %d", r.Started, len(r.Samples), s)
		}
	}
	return len(runs)
}

// walGrowth is how far the store's WAL has grown past base.
func walGrowth(h home.Home, base int64) int64 {
	fi, err := os.Stat(h.StoreFile() + "-wal")
	if err != nil {
		return 0
	}
	return max(0, fi.Size()-base)
}

// killAt waits until the running cmd's progress reaches at (or it ends) and
// SIGKILLs it; killed says whether it was still running. progress is
// polled; between polls the loop yields (the poll's pace, not a wait).
func killAt(t *testing.T, cmd *exec.Cmd, done <-chan error, at int64, progress func() int64) (killed bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		select {
		case <-done:
			return false
		default:
		}
		if progress() >= at {
			cmd.Process.Kill()
			<-done
			return true
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no progress to %d within 5 minutes", at)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

const killPoints = 20

// SIGKILL of qpslab import at 20 random points: before, while and after it
// reads the file and writes the store. After each: all of the import's runs
// are stored, each with its samples, or none; the store checks clean; and
// the next import works (a small one after each kill, the whole file again
// at the end).
func TestKillImport(t *testing.T) {
	h := newHome(t)
	const n, s = 80, 100
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	build := func(i int) string { return fmt.Sprintf("kill%d", i) }
	file := func(i int) string {
		p := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		if _, err := os.Stat(p); err != nil {
			os.WriteFile(p, killResults(t, build(i), n, s, t0), 0o600)
		}
		return p
	}
	small := filepath.Join(dir, "small.json")
	os.WriteFile(small, killResults(t, "small", 1, s, t0), 0o600)
	if r := qpslab(t, h, "import", "results", small); r.code != 0 {
		t.Fatalf("the first import: %+v", r)
	}
	size := func(p string) int64 { fi, _ := os.Stat(p); return fi.Size() }
	start := func(p string) (*exec.Cmd, chan error) {
		cmd := exec.Command(bin, "import", "results", p)
		cmd.Env = testenv.Env(h)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, done
	}
	// The whole of one import's progress: the file's bytes and the WAL's
	// growth, measured on an import that runs to its end.
	cmd, done := start(file(0))
	var grew int64
	killAt(t, cmd, done, 1<<62, func() int64 { grew = max(grew, walGrowth(h, 0)); return 0 })
	total := size(file(0)) + grew
	if got := stored(t, h, build(0), s); got != n {
		t.Fatalf("the measured import stored %d runs of %d", got, n)
	}
	t.Logf("an import's progress: %d bytes of file, %d of WAL", size(file(0)), grew)

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 60))
	midWAL := 0
	var none []int
	for i := 1; i <= killPoints; i++ {
		at := 1 + rng.Int64N(total)
		p := file(i)
		cmd, done := start(p)
		pid := cmd.Process.Pid
		var read int64
		killed := killAt(t, cmd, done, at, func() int64 {
			read = max(read, readPos(pid, p))
			w := walGrowth(h, 0)
			if w > 0 {
				read = size(p) // the file is read whole before the store is written
			}
			return read + w
		})
		got := stored(t, h, build(i), s)
		if got != 0 && got != n {
			t.Fatalf("kill point %d (%d of %d bytes, killed %v): %d of the import's %d runs stored", i, at, total, killed, got, n)
		}
		if got == 0 {
			none = append(none, i)
			if at > size(p) {
				midWAL++
			}
		}
		// The next import works: nothing is left locked or half-done.
		if r := qpslab(t, h, "import", "results", small); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "already stored") {
			t.Fatalf("the import after kill point %d: %+v", i, r)
		}
	}
	t.Logf("%d of %d kills came while the store was being written, and left nothing of their import", midWAL, killPoints)
	if len(none) > 0 { // what a kill left out imports whole
		i := none[rng.IntN(len(none))]
		if r := qpslab(t, h, "import", "results", file(i)); r.code != 0 {
			t.Fatalf("import %d again: %+v", i, r)
		}
		if got := stored(t, h, build(i), s); got != n {
			t.Fatalf("import %d again: %d runs of %d", i, got, n)
		}
	}
}

// readPos is how far process pid has read the file at path (its fdinfo
// pos), 0 while it has it not open.
func readPos(pid int, path string) int64 {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if to, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); to != path {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if m := regexp.MustCompile(`(?m)^pos:\s*(\d+)`).FindSubmatch(b); m != nil {
			v, _ := strconv.ParseInt(string(m[1]), 10, 64)
			return v
		}
	}
	return 0
}

// serveProc is a qpslab serve that a test kills.
type serveProc struct {
	cmd  *exec.Cmd
	url  string
	done chan error
}

// ingestLeft is what the home's ingest folder holds.
func ingestLeft(t *testing.T, h home.Home) []string {
	t.Helper()
	ents, err := os.ReadDir(h.Ingest())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func startKillable(t *testing.T, h home.Home) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = testenv.Env(h)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serveProc{cmd: cmd, done: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`^qpslab serve: (https?://\S+) `)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case s.url = <-found:
	case err := <-s.done:
		t.Fatalf("qpslab serve ended: %v", err)
	case <-time.After(5 * time.Minute):
		t.Fatal("qpslab serve did not say where it listens within 5 minutes")
	}
	return s
}

// post sends body to the ingest API; each chunk written, sent(n) is told
// the bytes sent so far, and may stop the post (it killed the server).
func post(url, tok string, body []byte, sent func(n int64) bool) (int, error) {
	pr, pw := io.Pipe()
	req, err := http.NewRequest("POST", url+"/api/v1/results", pr)
	if err != nil {
		return 0, err
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	type answer struct {
		code int
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{0, err}
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got <- answer{resp.StatusCode, nil}
	}()
	for off := 0; off < len(body); {
		end := min(off+64<<10, len(body))
		if _, err := pw.Write(body[off:end]); err != nil {
			break
		}
		off = end
		if sent(int64(off)) {
			pw.CloseWithError(errors.New("the server was killed"))
			a := <-got
			return a.code, a.err
		}
	}
	pw.Close()
	a := <-got
	return a.code, a.err
}

// SIGKILL of qpslab serve at 20 random points of an ingest (while the post
// is received, read and stored): after each, all of the post's runs are
// stored or none, the store checks clean, and a new serve's next ingest
// works.
func TestKillIngest(t *testing.T) {
	h := newHome(t)
	const n, s = 80, 100
	r := qpslab(t, h, "tokens", "create", "ci", "--scope", "ingest")
	tok := strings.TrimSpace(r.stdout)
	if r.code != 0 {
		t.Fatalf("tokens create: %+v", r)
	}
	t0 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	small := killResults(t, "small", 1, s, t0)
	build := func(i int) string { return fmt.Sprintf("ingest%d", i) }
	body := func(i int) []byte { return killResults(t, build(i), n, s, t0) }

	// One whole ingest's progress: the body's bytes and the WAL's growth.
	srv := startKillable(t, h)
	var grew int64
	watch, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-watch:
				return
			default:
				grew = max(grew, walGrowth(h, 0))
				time.Sleep(200 * time.Microsecond)
			}
		}
	}()
	b0 := body(0)
	code, err := post(srv.url, tok, b0, func(int64) bool { return false })
	close(watch)
	<-watched
	if err != nil || code != http.StatusCreated {
		t.Fatalf("the measured ingest: %d %v", code, err)
	}
	total := int64(len(b0)) + grew
	t.Logf("an ingest's progress: %d bytes of body, %d of WAL", len(b0), grew)
	srv.cmd.Process.Kill()
	<-srv.done

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 61))
	left := 0 // kills that left a post unpacked
	defer func() {
		t.Logf("%d of %d kills left a post unpacked in the home, each removed by the next serve", left, killPoints)
	}()
	for i := 1; i <= killPoints; i++ {
		at := 1 + rng.Int64N(total)
		srv := startKillable(t, h)
		b := body(i)
		kill := func() { srv.cmd.Process.Kill(); <-srv.done }
		killed := false
		walAt := int64(-1)
		if at <= int64(len(b)) {
			post(srv.url, tok, b, func(sent int64) bool {
				if sent >= at {
					kill()
					killed = true
				}
				return killed
			})
		} else {
			walAt = at - int64(len(b))
			answered := make(chan struct{})
			go func() { post(srv.url, tok, b, func(int64) bool { return false }); close(answered) }()
			for !killed {
				select {
				case <-answered:
					kill() // after the ingest's end
					killed = true
				default:
					if walGrowth(h, 0) >= walAt {
						kill()
						killed = true
					} else {
						time.Sleep(200 * time.Microsecond)
					}
				}
			}
			<-answered
		}
		if got := stored(t, h, build(i), s); got != 0 && got != n {
			t.Fatalf("kill point %d (%d of %d bytes): %d of the post's %d runs stored", i, at, total, got, n)
		}
		// The next serve removes what the killed one was unpacking, and
		// its ingest works.
		if n := len(ingestLeft(t, h)); n > 0 {
			left++
		}
		srv = startKillable(t, h)
		if got := ingestLeft(t, h); len(got) != 0 {
			t.Fatalf("kill point %d: the new serve left the killed one's ingest folders %q", i, got)
		}
		if code, err := post(srv.url, tok, small, func(int64) bool { return false }); err != nil || code != http.StatusCreated && code != http.StatusOK {
			t.Fatalf("the ingest after kill point %d: %d %v", i, code, err)
		}
		srv.cmd.Process.Signal(syscall.SIGTERM)
		<-srv.done
	}
}
