package client

import (
	"context"
	"errors"
	"iter"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Loops run several workers on each OS thread, over one io_uring ring per
// thread: the Loop transport. Each worker is a coroutine (iter.Pull, a
// direct switch between goroutines that bypasses the scheduler's queues).
// A worker's statement queues its send and its receive on its thread's
// ring and yields; once every worker of the thread waits, the thread
// submits everything queued and sleeps in one io_uring_enter(2) until a
// completion arrives, then resumes each worker whose statement completed.
// One wake-up completes every statement whose reply has come in by then,
// where the blocking transport wakes one thread per statement.
//
// Closed-loop semantics are unchanged: a worker has one statement in flight,
// and its next starts as soon as it is resumed. Latency stays per statement:
// the thread stamps each completion as it reaps it, before it resumes any
// worker of the batch, and the engine ends an event there (Completed), not
// when its worker runs again. What a worker's next statement waits behind
// is the other workers' user-space work on the same thread (a few µs
// each), as it would wait for a CPU with one thread each.
//
// Written by hand: no library offers coroutine workers over a ring (see
// uring.go for the ring itself).
type Loops struct {
	// Threads is how many OS threads (rings) serve the workers; 0 means
	// one per CPU. Workers are dealt out in turn.
	Threads int
}

type loopKey struct{}

// slot is one worker's place on a loop.
type slot struct {
	l       *loop
	id      uint64
	seq     uint64 // numbers its waits: a completion of an earlier one is ignored
	yield   func(struct{}) bool
	running bool // its coroutine is the one running on the loop's thread
	wait    int  // completions it waits for
	queued  bool // it is on the loop's resume list
	// results of its last round trip
	short     int // bytes of a short send
	n         int
	sendErr   syscall.Errno
	recvErr   syscall.Errno
	conn      *uringConn // the connection of the round trip in flight
	cancelAsk bool
	ts        syscall.Timespec
	doneAt    time.Time // when the loop reaped the completion that ended its last round trip
}

type loop struct {
	r      *ring
	slots  []*slot
	resume []*slot
	queued uint32 // SQEs pushed, not yet submitted
}

// user_data: the wait's number (32 bits), the slot (24), the operation (8).
func (s *slot) tag(op uint64) uint64 { return s.seq<<32 | s.id<<8 | op }

const (
	loopOpTimeout       = 11
	loopTagTimer        = 4
	loopMaxPerThread    = 64
	uringSqeSkipSuccess = 1 << 6 // IOSQE_CQE_SKIP_SUCCESS (Linux 5.17)
)

// Run calls work(ctx, i) for i in 0..n-1, as coroutines on Threads OS
// threads, and returns when every call has returned. ctx given to work
// carries the worker's place: statements of connections of the Uring or
// Loop transport made with it (or a context derived from it) go through
// the thread's ring. A worker that blocks on anything else (a lock, a
// channel) holds its thread's other workers up meanwhile, which is correct
// but slow.
func (ls Loops) Run(ctx context.Context, n int, work func(ctx context.Context, i int)) error {
	threads := ls.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	threads = max(min(threads, n), (n+loopMaxPerThread-1)/loopMaxPerThread)
	var wg sync.WaitGroup
	errs := make([]error, threads)
	for t := range threads {
		var ids []int
		for i := t; i < n; i += threads {
			ids = append(ids, i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One thread submits and waits: io_uring completes a request's
			// work on the thread that submitted it, which would otherwise
			// have to be woken for it.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			r, err := newRingSize(uint32(4 * len(ids)))
			if err != nil {
				errs[t] = err
				return
			}
			l := &loop{r: r}
			errs[t] = l.run(ctx, ids, work)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// SleepUntil waits until t, or until ctx ends, within a worker of Run,
// letting its thread's other workers run; false if the worker is not on a
// loop (the caller then waits its own way).
func (Loops) SleepUntil(ctx context.Context, t time.Time) bool { return SleepOnLoop(ctx, t) }

// OnLoop says whether ctx is a running loop worker's.
func OnLoop(ctx context.Context) bool {
	s, _ := ctx.Value(loopKey{}).(*slot)
	return s != nil && s.running
}

// Sleeper waits d on a worker's behalf, within an event (a script's
// \sleep, TPC-C's keying and think times): on the loop transport through
// its thread (SleepOnLoop), else on a timer it keeps, so that a wait
// allocates nothing. It returns ctx's error when ctx ends first.
type Sleeper struct{ t *time.Timer }

func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	if SleepOnLoop(ctx, time.Now().Add(d)) {
		return ctx.Err()
	}
	if s.t == nil {
		s.t = time.NewTimer(d)
	} else {
		s.t.Reset(d)
	}
	select {
	case <-s.t.C:
		return nil
	case <-ctx.Done():
		if !s.t.Stop() {
			<-s.t.C
		}
		return ctx.Err()
	}
}

// SleepOnLoop is Loops.SleepUntil for workloads that wait within an event
// (a paced writer, a script's \sleep): on a loop they must not block the
// thread their neighbours share.
func SleepOnLoop(ctx context.Context, t time.Time) bool {
	s, _ := ctx.Value(loopKey{}).(*slot)
	if s == nil || !s.running {
		return false
	}
	// Each wait on the ring is at most 50 ms, so that an ended ctx is seen.
	for d := time.Until(t); d > 0 && ctx.Err() == nil; d = time.Until(t) {
		s.seq++
		s.ts = syscall.NsecToTimespec(min(d, rawPollMs*time.Millisecond).Nanoseconds())
		s.l.push(uringSqe{opcode: loopOpTimeout, addr: uint64(uintptr(unsafe.Pointer(&s.ts))), len: 1, userData: s.tag(loopTagTimer)})
		s.wait = 1
		if !s.park() {
			break
		}
	}
	return true
}

func (l *loop) push(q uringSqe) {
	l.r.push(q)
	l.queued++
}

// park yields to the loop until the slot's completions are in; false if
// the loop is gone (it failed: the wait's I/O was ended first).
func (s *slot) park() bool {
	s.running = false
	ok := s.yield(struct{}{})
	s.running = ok
	return ok
}

func (l *loop) run(ctx context.Context, ids []int, work func(ctx context.Context, i int)) error {
	type co struct {
		next func() (struct{}, bool)
		stop func()
	}
	cos := make([]co, len(ids))
	live := len(ids)
	for k, i := range ids {
		s := &slot{l: l, id: uint64(k)}
		l.slots = append(l.slots, s)
		wctx := context.WithValue(ctx, loopKey{}, s)
		next, stop := iter.Pull(func(yield func(struct{}) bool) {
			s.yield = yield
			s.running = true
			defer func() { s.running = false }()
			work(wctx, i)
		})
		cos[k] = co{next, stop}
		s.queued = true
		l.resume = append(l.resume, s)
	}
	defer func() {
		l.drain()
		for _, c := range cos {
			c.stop()
		}
		l.r.close()
	}()
	raw := true
	for live > 0 {
		// Completions are only reaped here, so none is added while the
		// list is being resumed.
		for _, s := range l.resume {
			s.queued = false
			if _, ok := cos[s.id].next(); !ok {
				live--
			}
		}
		l.resume = l.resume[:0]
		if live == 0 {
			break
		}
		l.expire()
		e := l.r.enter(l.queued, 1, rawPollMs*time.Millisecond, raw)
		switch e {
		case 0:
			l.queued = 0
		case syscall.ETIME:
			l.queued = 0
			raw = false // a long wait: where the runtime sees it
		case syscall.EINTR, syscall.EAGAIN, syscall.EBUSY:
		default:
			return os.NewSyscallError("io_uring_enter", e)
		}
		l.reap()
		if len(l.resume) > 0 {
			raw = true
		}
	}
	return nil
}

func (l *loop) reap() {
	for {
		cqe, ok := l.r.reap()
		if !ok {
			return
		}
		if id := cqe.userData >> 8 & (1<<24 - 1); id < uint64(len(l.slots)) {
			l.slots[id].complete(cqe)
		}
	}
}

// drain ends what is still in flight when the loop stops early (its ring
// failed): the connections are shut down, so that their receives
// complete, and the completions reaped, for a while, before the ring goes.
func (l *loop) drain() {
	busy := func() bool {
		for _, s := range l.slots {
			if s.wait > 0 {
				return true
			}
		}
		return false
	}
	for _, s := range l.slots {
		if s.wait > 0 && s.conn != nil {
			s.conn.Close()
		}
	}
	for try := 0; try < 100 && busy(); try++ {
		l.r.enter(l.queued, 1, 10*time.Millisecond, false)
		l.queued = 0
		l.reap()
	}
	l.resume = l.resume[:0]
}

// expire cancels the receives of connections past their read deadline
// (closed ones need nothing: the shutdown ends the receive).
func (l *loop) expire() {
	for _, s := range l.slots {
		c := s.conn
		if c == nil || s.wait == 0 || s.cancelAsk || c.readDL.Load() == 0 || !c.expired(&c.readDL) {
			continue
		}
		s.cancelAsk = true
		s.wait++
		l.push(uringSqe{opcode: uringOpAsyncCancel, addr: s.tag(uringRecvTag), userData: s.tag(uringCancelTag)})
	}
}

func (s *slot) complete(cqe uringCqe) {
	if cqe.userData>>32 != s.seq&(1<<32-1) || s.wait == 0 {
		return // of a wait that is over
	}
	switch cqe.userData & 0xff {
	case uringSendTag:
		// Posted only when the send failed or was short (a success is
		// skipped); the kernel then skips the linked receive's completion
		// too, so this one ends the round trip.
		s.recvErr = syscall.ECANCELED
		if cqe.res < 0 {
			s.sendErr = syscall.Errno(-cqe.res)
		} else {
			s.short = int(cqe.res) // finished by hand after
			s.sendErr = syscall.EMSGSIZE
		}
		s.wait = 0
	case uringRecvTag:
		if cqe.res < 0 {
			s.recvErr = syscall.Errno(-cqe.res)
		} else {
			s.n = int(cqe.res)
		}
		s.wait--
		if s.cancelAsk {
			s.wait = 0 // the cancel's own completion, if any, is of no interest now
		}
	case uringCancelTag:
		s.wait--
	case loopTagTimer:
		s.wait = 0
	}
	if s.wait <= 0 && !s.queued {
		s.wait = 0
		s.queued = true
		s.doneAt = time.Now() // its own completion's time, before any worker of the batch runs
		s.l.resume = append(s.l.resume, s)
	}
}

// Completed is when the loop reaped the completion of the last statement
// of the worker ctx carries: a statement's end, which the worker itself
// only sees once the workers resumed before it in the same batch have
// run. False off a loop.
func (Loops) Completed(ctx context.Context) (time.Time, bool) {
	s, _ := ctx.Value(loopKey{}).(*slot)
	if s == nil || s.doneAt.IsZero() {
		return time.Time{}, false
	}
	return s.doneAt, true
}

// roundTrip is uringConn.roundTrip on the worker's loop: queue, yield,
// and read the results when resumed.
func (s *slot) roundTrip(c *uringConn, req, b []byte) (int, error) {
	l := s.l
	s.seq++
	s.conn, s.short, s.n, s.sendErr, s.recvErr, s.cancelAsk = c, 0, 0, 0, 0, false
	s.wait = 1
	if len(req) > 0 {
		l.push(uringSqe{opcode: uringOpSend, flags: uringSqeIOLink | uringSqeSkipSuccess, fd: int32(c.fd), addr: uint64(uintptr(unsafe.Pointer(&req[0]))),
			len: uint32(len(req)), opFlags: msgNoSignal | msgWaitAll, userData: s.tag(uringSendTag)})
	}
	l.push(uringSqe{opcode: uringOpRecv, ioprio: uringRecvPollFirst, fd: int32(c.fd), addr: uint64(uintptr(unsafe.Pointer(&b[0]))),
		len: uint32(len(b)), userData: s.tag(uringRecvTag)})
	ok := s.park()
	s.conn = nil
	runtime.KeepAlive(req)
	runtime.KeepAlive(b)
	if !ok {
		return 0, net.ErrClosed
	}
	if s.sendErr == syscall.EMSGSIZE { // a short send: the receive was cancelled with it
		if _, err := c.blockingConn.Write(req[s.short:]); err != nil {
			return 0, err
		}
		return s.roundTrip(c, nil, b)
	}
	return c.result(s.sendErr, s.recvErr, s.n, s.cancelAsk && !c.closed.Load())
}
