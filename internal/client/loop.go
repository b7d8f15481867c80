package client

import (
	"context"
	"errors"
	"iter"
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
// the worker stamps its statement's end when it is resumed, which is when
// the thread reaps that completion; completions are reaped in arrival order
// and each worker is resumed right after the one before it is done. What a
// worker waits behind is the other workers' user-space work on the same
// thread (a few µs each), as it would wait for a CPU with one thread each.
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
	yield   func(struct{}) bool
	running bool // its coroutine is the one running on the loop's thread
	wait    int  // completions it waits for
	queued  bool // it is on the loop's resume list
	ready   bool // its wait is over: resume it
	// results of its last round trip
	sent       int // bytes of a short send
	got        bool
	n          int
	sendErr    syscall.Errno
	recvErr    syscall.Errno
	conn       *uringConn // the connection of the round trip in flight
	cancelOut  bool
	cancelAsk  bool
	ts         syscall.Timespec
	sleeping   bool
	sleepUntil time.Time
}

type loop struct {
	r      *ring
	slots  []*slot
	resume []*slot
	queued uint32 // SQEs pushed, not yet submitted
}

const loopTags = 8 // user_data = slot id * loopTags + tag

const (
	loopOpTimeout       = 11
	uringSqeSkipSuccess = 1 << 6 // IOSQE_CQE_SKIP_SUCCESS (Linux 5.17)
	loopTagTimer        = 4
	loopMaxPerThread    = 64
)

// Run calls work(ctx, i) for i in 0..n-1, as coroutines on Threads OS
// threads, and returns when every call has returned. ctx given to work
// carries the worker's place: statements of connections of the Uring
// transport made with it (or a context derived from it) go through the
// thread's ring. A worker that blocks on anything else (a lock, a channel)
// holds its thread's other workers up meanwhile, which is correct but slow.
func (ls Loops) Run(ctx context.Context, n int, work func(ctx context.Context, i int)) error {
	threads := ls.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	threads = max(min(threads, n), (n+loopMaxPerThread-1)/loopMaxPerThread)
	loops := make([]*loop, threads)
	for t := range loops {
		per := (n - t + threads - 1) / threads
		r, err := newRingSize(uint32(4 * per))
		if err != nil {
			for _, l := range loops[:t] {
				l.r.close()
			}
			return err
		}
		loops[t] = &loop{r: r}
	}
	var wg sync.WaitGroup
	errs := make([]error, threads)
	for t, l := range loops {
		var ids []int
		for i := t; i < n; i += threads {
			ids = append(ids, i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer l.r.close()
			errs[t] = l.run(ctx, ids, work)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// SleepUntil waits until t within a worker of Run, letting its thread's
// other workers run; false if the worker is not on a loop (the caller
// then waits its own way). A wait is at most 50 ms: the caller checks
// its context and calls again.
func (Loops) SleepUntil(ctx context.Context, t time.Time) bool { return SleepOnLoop(ctx, t) }

// OnLoop says whether ctx is a running loop worker's.
func OnLoop(ctx context.Context) bool {
	s, _ := ctx.Value(loopKey{}).(*slot)
	return s != nil && s.running
}

// SleepOnLoop is Loops.SleepUntil for workloads that wait within an event
// (a paced writer, a script's \sleep): on a loop they must not block the
// thread their neighbours share.
func SleepOnLoop(ctx context.Context, t time.Time) bool {
	s, _ := ctx.Value(loopKey{}).(*slot)
	if s == nil || !s.running {
		return false
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	s.ts = syscall.NsecToTimespec(min(d, rawPollMs*time.Millisecond).Nanoseconds())
	s.l.push(uringSqe{opcode: loopOpTimeout, addr: uint64(uintptr(unsafe.Pointer(&s.ts))), len: 1, userData: s.id*loopTags + loopTagTimer})
	s.wait, s.sleeping = 1, true
	s.park()
	runtime.KeepAlive(s)
	return true
}

func (l *loop) push(q uringSqe) {
	l.r.push(q)
	l.queued++
}

// park yields to the loop until the slot's completions are in.
func (s *slot) park() {
	s.ready = false
	s.running = false
	s.yield(struct{}{})
	s.running = true
}

func (l *loop) run(ctx context.Context, ids []int, work func(ctx context.Context, i int)) error {
	type co struct {
		s    *slot
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
			work(wctx, i)
		})
		cos[k] = co{s, next, stop}
		s.ready = true
		l.resume = append(l.resume, s)
	}
	defer func() {
		for _, c := range cos {
			c.stop()
		}
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
		e := l.r.enter(l.queued, 1, rawPollMs*time.Millisecond, raw)
		switch e {
		case 0:
			l.queued = 0
		case syscall.ETIME:
			l.queued = 0
			raw = false // a long wait: where the runtime sees it
			l.expire()
		case syscall.EINTR, syscall.EAGAIN, syscall.EBUSY:
		default:
			return os.NewSyscallError("io_uring_enter", e)
		}
		for {
			cqe, ok := l.r.reap()
			if !ok {
				break
			}
			raw = true
			s := l.slots[cqe.userData/loopTags]
			s.complete(cqe)
		}
	}
	return nil
}

// expire cancels the receives of connections closed or past their read
// deadline (a wait the loop's timeout interrupted).
func (l *loop) expire() {
	for _, s := range l.slots {
		c := s.conn
		if c == nil || s.got || s.cancelAsk || !(c.closed.Load() || c.expired(&c.readDL)) {
			continue
		}
		s.cancelAsk, s.cancelOut = true, true
		s.wait++
		l.push(uringSqe{opcode: uringOpAsyncCancel, addr: s.id*loopTags + uringRecvTag, userData: s.id*loopTags + uringCancelTag})
	}
}

func (s *slot) complete(cqe uringCqe) {
	switch cqe.userData % loopTags {
	case uringSendTag:
		// Posted only when the send failed or was short (its success is
		// skipped); the linked receive then completes cancelled, and is
		// what the slot waits for.
		if cqe.res < 0 {
			s.sendErr = syscall.Errno(-cqe.res)
		} else {
			s.sent = int(cqe.res) // short: finished by hand below
			s.sendErr = syscall.EMSGSIZE
		}
		return
	case uringRecvTag:
		s.got = true
		if cqe.res < 0 {
			s.recvErr = syscall.Errno(-cqe.res)
		} else {
			s.n = int(cqe.res)
		}
	case uringCancelTag:
		s.cancelOut = false
	case loopTagTimer:
		s.sleeping = false
	}
	s.wait--
	if s.wait == 0 && !s.queued {
		s.ready, s.queued = true, true
		s.l.resume = append(s.l.resume, s)
	}
}

// roundTrip is uringConn.roundTrip on the worker's loop: queue, yield,
// and read the results when resumed.
func (s *slot) roundTrip(c *uringConn, req, b []byte) (int, error) {
	l := s.l
	s.conn, s.sent, s.got, s.n, s.sendErr, s.recvErr, s.cancelAsk, s.cancelOut = c, 0, false, 0, 0, 0, false, false
	s.wait = 1
	if len(req) > 0 {
		l.push(uringSqe{opcode: uringOpSend, flags: uringSqeIOLink | uringSqeSkipSuccess, fd: int32(c.fd), addr: uint64(uintptr(unsafe.Pointer(&req[0]))),
			len: uint32(len(req)), opFlags: msgNoSignal | msgWaitAll, userData: s.id*loopTags + uringSendTag})
	}
	l.push(uringSqe{opcode: uringOpRecv, ioprio: uringRecvPollFirst, fd: int32(c.fd), addr: uint64(uintptr(unsafe.Pointer(&b[0]))),
		len: uint32(len(b)), userData: s.id*loopTags + uringRecvTag})
	s.park()
	s.conn = nil
	runtime.KeepAlive(req)
	runtime.KeepAlive(b)
	if s.sendErr == syscall.EMSGSIZE { // a short send: the receive was cancelled with it
		if _, err := c.blockingConn.Write(req[s.sent:]); err != nil {
			return 0, err
		}
		return s.roundTrip(c, nil, b)
	}
	return c.result(s.sendErr, s.recvErr, s.n, s.cancelAsk && !c.closed.Load())
}
