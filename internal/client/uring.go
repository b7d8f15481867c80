package client

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The io_uring transport: a ring of its own per connection. A statement's
// request is not written when the driver writes it but kept, and sent when
// the driver then reads the reply: the send and the receive go to the
// kernel linked, in one io_uring_enter(2) that also waits for the reply.
// One system call per statement where the blocking transport makes three
// (write, poll, read).
//
// Written by hand: the Go module proxy here serves no io_uring package
// (giouring, iouring-go, go-uring and dshulyak/uring were all refused), and
// liburing through cgo would put every call through cgo's
// entersyscall/exitsyscall, the hand-off of the P to another thread that
// the raw calls below exist to avoid (see rawRead). What is used of the
// ABI is small: setup, the two rings, SEND, RECV, ASYNC_CANCEL, and enter
// with a timeout (IORING_FEAT_EXT_ARG, Linux 5.11).
//
// No kernel polling thread (IORING_SETUP_SQPOLL) is used: it would take a
// core. Socket operations here never go to io_uring's worker threads (a
// receive with nothing to read waits on the socket's poll), and if the
// kernel ever used them they are threads of this process, counted in its
// CPU time like any other.

const (
	sysIoUringSetup = 425
	sysIoUringEnter = 426

	uringOpAsyncCancel = 14
	uringOpSend        = 26
	uringOpRecv        = 27

	uringSqeIOLink = 1 << 2 // IOSQE_IO_LINK

	uringRecvPollFirst = 1 << 0 // IORING_RECVSEND_POLL_FIRST, in the SQE's ioprio

	uringEnterGetEvents = 1 << 0
	uringEnterExtArg    = 1 << 3

	uringFeatSingleMmap = 1 << 0
	uringFeatExtArg     = 1 << 8
	uringFeatNoIOWait   = 1 << 17

	// IORING_ENTER_NO_IOWAIT (Linux 6.15): the wait is not I/O wait.
	// Without it a thread waiting on the ring sleeps marked as in I/O
	// wait; measured on the project VM (point-query, 1 thread, MariaDB, 7
	// paired rounds), that cost 1.10× the blocking transport's CPU per
	// statement, and 1.00× without.
	uringEnterNoIOWait = 1 << 7

	uringOffSqRing = 0
	uringOffSqes   = 0x10000000

	msgNoSignal = 0x4000
	msgWaitAll  = 0x100

	uringEntries = 4
)

type uringSqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type uringCqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  uringSqringOffsets
	cqOff                                                                  uringCqringOffsets
}

type uringSqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	_           uint64
}

type uringCqe struct {
	userData uint64
	res      int32
	flags    uint32
}

type uringGeteventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// ring is one io_uring instance, used by one call at a time.
type ring struct {
	fd                     int
	mem, sqesMem           []byte
	sqHead, sqTail, sqMask *uint32
	sqArray                unsafe.Pointer
	sqes                   unsafe.Pointer
	cqHead, cqTail, cqMask *uint32
	cqes                   unsafe.Pointer
	ts                     syscall.Timespec
	arg                    uringGeteventsArg
	enterFlags             uintptr
}

func newRing() (*ring, error) { return newRingSize(uringEntries) }

// newRingSize makes a ring of at least entries submission entries.
func newRingSize(entries uint32) (*ring, error) {
	var p uringParams
	fd, _, e := syscall.RawSyscall(sysIoUringSetup, uintptr(max(entries, uringEntries)), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, os.NewSyscallError("io_uring_setup", e)
	}
	r := &ring{fd: int(fd)}
	if p.features&uringFeatSingleMmap == 0 || p.features&uringFeatExtArg == 0 {
		syscall.Close(r.fd)
		return nil, errors.New("io_uring: this kernel lacks single mmap or enter's timeout (Linux 5.11 or later)")
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(uringCqe{})))
	mem, err := syscall.Mmap(r.fd, uringOffSqRing, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		syscall.Close(r.fd)
		return nil, os.NewSyscallError("mmap io_uring", err)
	}
	sqes, err := syscall.Mmap(r.fd, uringOffSqes, int(p.sqEntries)*int(unsafe.Sizeof(uringSqe{})), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		syscall.Munmap(mem)
		syscall.Close(r.fd)
		return nil, os.NewSyscallError("mmap io_uring sqes", err)
	}
	base := unsafe.Pointer(&mem[0])
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Add(base, off)) }
	r.mem, r.sqesMem = mem, sqes
	r.sqHead, r.sqTail, r.sqMask, r.sqArray = at(p.sqOff.head), at(p.sqOff.tail), at(p.sqOff.ringMask), unsafe.Add(base, p.sqOff.array)
	r.cqHead, r.cqTail, r.cqMask, r.cqes = at(p.cqOff.head), at(p.cqOff.tail), at(p.cqOff.ringMask), unsafe.Add(base, p.cqOff.cqes)
	r.sqes = unsafe.Pointer(&sqes[0])
	r.arg.ts = uint64(uintptr(unsafe.Pointer(&r.ts)))
	r.enterFlags = uringEnterGetEvents | uringEnterExtArg
	if p.features&uringFeatNoIOWait != 0 {
		r.enterFlags |= uringEnterNoIOWait
	}
	return r, nil
}

func (r *ring) close() {
	syscall.Munmap(r.sqesMem)
	syscall.Munmap(r.mem)
	syscall.Close(r.fd)
}

// push queues one SQE (not yet submitted). The ring has room: a call
// queues at most three entries and reaps all of them before it returns.
func (r *ring) push(s uringSqe) {
	tail := atomic.LoadUint32(r.sqTail)
	i := tail & *r.sqMask
	*(*uringSqe)(unsafe.Add(r.sqes, uintptr(i)*unsafe.Sizeof(uringSqe{}))) = s
	*(*uint32)(unsafe.Add(r.sqArray, uintptr(i)*4)) = i
	atomic.StoreUint32(r.sqTail, tail+1)
}

// reap takes one completion if there is one.
func (r *ring) reap() (uringCqe, bool) {
	head := atomic.LoadUint32(r.cqHead)
	if head == atomic.LoadUint32(r.cqTail) {
		return uringCqe{}, false
	}
	c := *(*uringCqe)(unsafe.Add(r.cqes, uintptr(head&*r.cqMask)*unsafe.Sizeof(uringCqe{})))
	atomic.StoreUint32(r.cqHead, head+1)
	return c, true
}

// enter submits what is queued and waits up to d for wait completions. raw
// is how the blocking transport waits (see rawRead): the thread keeps its
// P, so d must be short; otherwise the runtime sees the wait.
func (r *ring) enter(submit, wait uint32, d time.Duration, raw bool) syscall.Errno {
	r.ts = syscall.NsecToTimespec(d.Nanoseconds())
	r.arg.sigmaskSz = 8
	call := syscall.Syscall6
	if raw {
		call = syscall.RawSyscall6
	}
	_, _, e := call(sysIoUringEnter, uintptr(r.fd), uintptr(submit), uintptr(wait), r.enterFlags,
		uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg))
	return e
}

// uringConn is a net.Conn whose statements go through a ring: a Write of
// up to uringKeep bytes is kept and sent with the next Read's receive. The
// socket is the blocking transport's (non-blocking, dialled by
// dialBlocking), whose raw calls carry everything else: larger writes, the
// kept request when Close or a concurrent reader flushes it.
type uringConn struct {
	*blockingConn
	r       *ring
	mu      sync.Mutex // the kept request, and the ring
	pend    []byte
	reading bool // a Read waits on the ring with nothing of ours to send
	err     error
	slot    *slot  // the loop worker whose statement is running on it (Loops), set by the canceller
	through bool   // no keeping: every write goes out at once (see passThrough)
	spare   []byte // the other kept-request buffer, while one is written
}

// bindLoop has the statement about to run on nc go through the loop worker
// that ctx carries, if any (a look-up per statement, a few ns).
func bindLoop(nc net.Conn, ctx context.Context) {
	if c, ok := nc.(*uringConn); ok {
		c.slot, _ = ctx.Value(loopKey{}).(*slot)
	}
}

// uringKeep bounds the request kept for the next read: a statement's.
const uringKeep = 64 << 10

var _ net.Conn = (*uringConn)(nil)

// uringOK says whether this process can make rings (decided once).
var uringOK = sync.OnceValue(uringProbe)

// uringProbe makes a ring and runs the round trip the transports use, with
// their exact flags (a linked send whose success is skipped, a receive
// that polls first, enter's timeout) on a socket pair: a kernel that lacks
// any of them (5.11 to 5.18, or stable kernels that refuse a receive's
// ioprio) answers no.
func uringProbe() bool {
	r, err := newRing()
	if err != nil {
		return false
	}
	defer r.close()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	req, b := []byte("q"), make([]byte, 8)
	if _, err := syscall.Write(fds[1], []byte("a")); err != nil { // the answer is waiting
		return false
	}
	r.push(uringSqe{opcode: uringOpSend, flags: uringSqeIOLink | uringSqeSkipSuccess, fd: int32(fds[0]), addr: uint64(uintptr(unsafe.Pointer(&req[0]))),
		len: 1, opFlags: msgNoSignal | msgWaitAll, userData: uringSendTag})
	r.push(uringSqe{opcode: uringOpRecv, ioprio: uringRecvPollFirst, fd: int32(fds[0]), addr: uint64(uintptr(unsafe.Pointer(&b[0]))),
		len: uint32(len(b)), userData: uringRecvTag})
	if e := r.enter(2, 1, time.Second, false); e != 0 {
		return false
	}
	cqe, ok := r.reap()
	_, more := r.reap()
	runtime.KeepAlive(req)
	runtime.KeepAlive(b)
	got := make([]byte, 1)
	n, _ := syscall.Read(fds[1], got)
	return ok && !more && cqe.userData == uringRecvTag && cqe.res == 1 && b[0] == 'a' && n == 1 && got[0] == 'q'
}

// dialUring dials a connection of the uring transport (own: a ring of its
// own) or of the loop transport (none: its statements use a loop worker's
// ring, and off a loop, for the load and the setup, it is the blocking
// transport, measured cheaper there).
func dialUring(ctx context.Context, network, addr string, own bool) (net.Conn, error) {
	nc, err := dialBlocking(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if !own {
		return &uringConn{blockingConn: nc.(*blockingConn), pend: make([]byte, 0, 512)}, nil
	}
	r, err := newRing()
	if err != nil {
		nc.Close()
		return nil, err
	}
	bc := nc.(*blockingConn)
	bc.last = r.close // once the last call is out: no receive can be in flight
	return &uringConn{blockingConn: bc, r: r, pend: make([]byte, 0, 512)}, nil
}

func (c *uringConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	if c.err != nil {
		c.mu.Unlock()
		return 0, c.err
	}
	if !c.reading && !c.through && (c.r != nil || c.slot != nil) && len(c.pend)+len(b) <= uringKeep {
		c.pend = append(c.pend, b...)
		c.mu.Unlock()
		return len(b), nil
	}
	// Written now, with the raw calls, and without holding c.mu: a write
	// that waits for the server to read may need a reader meanwhile
	// (pgx's background reader). What was kept goes first. The rest of
	// the statement leaves the loop: a reader in another goroutine must
	// not take the loop worker's place.
	pend := c.pend
	c.pend, c.spare = c.spare[:0], nil
	c.slot = nil
	c.mu.Unlock()
	var err error
	if len(pend) > 0 {
		_, err = c.blockingConn.Write(pend)
	}
	n := 0
	if err == nil {
		n, err = c.blockingConn.Write(b)
	}
	c.mu.Lock()
	c.spare = pend[:0]
	if err != nil && c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	return n, err
}

// passThrough turns keeping off (on) or back on (off): pgx's COPY writes
// from one goroutine while another reads, so that no write may wait for a
// read to end. The loop is left for the statement as well.
func passThrough(nc net.Conn, on bool) {
	if c, ok := nc.(*uringConn); ok {
		c.mu.Lock()
		c.through = on
		c.slot = nil
		c.mu.Unlock()
	}
}

func (c *uringConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	// The kept request is taken out, and c.mu is not held while the
	// statement waits: another worker on the same loop thread, or the
	// canceller, may close the connection meanwhile (go-sql-driver's Close
	// writes COM_QUIT). A write made while a read waits goes out at once.
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, err
	}
	req := c.pend
	c.pend, c.spare = c.spare[:0], nil
	c.reading = true
	s := c.slot
	if c.through || (s != nil && !s.running) {
		s = nil
	}
	c.mu.Unlock()
	var n int
	var err error
	switch {
	case s != nil:
		// On a loop: queue the send and the receive on its ring and let
		// the thread's other workers run meanwhile.
		n, err = s.roundTrip(c, req, b)
	case c.r == nil: // a loop connection off its loop: the blocking transport
		if len(req) > 0 {
			_, err = c.blockingConn.Write(req)
		}
		if err == nil {
			n, err = c.blockingConn.Read(b)
		}
	default:
		// Send (if anything was kept) and receive in one enter.
		n, err = c.roundTrip(req, b)
	}
	c.mu.Lock()
	c.reading = false
	c.spare = req[:0]
	c.mu.Unlock()
	return n, err
}

const (
	uringSendTag   = 1
	uringRecvTag   = 2
	uringCancelTag = 3
)

// roundTrip sends req (if any) and receives into b, linked, and waits for
// both to complete. The ring is idle before and after.
func (c *uringConn) roundTrip(req, b []byte) (int, error) {
	r := c.r
	sent, got, n := len(req) == 0, false, 0
	var sendErr, recvErr syscall.Errno
	submit := uint32(1)
	if !sent {
		r.push(uringSqe{opcode: uringOpSend, flags: uringSqeIOLink, fd: int32(c.fd), addr: uint64(uintptr(unsafe.Pointer(&req[0]))),
			len: uint32(len(req)), opFlags: msgNoSignal | msgWaitAll, userData: uringSendTag})
		submit = 2
	}
	r.push(uringSqe{opcode: uringOpRecv, ioprio: uringRecvPollFirst, fd: int32(c.fd), addr: uint64(uintptr(unsafe.Pointer(&b[0]))),
		len: uint32(len(b)), userData: uringRecvTag})
	asked, cancelOut, timedOut, finished := false, false, false, false
	raw := true
	for !(sent && got && !cancelOut) {
		wait := uint32(0)
		if !sent {
			wait++
		}
		if !got {
			wait++
		}
		if cancelOut {
			wait++
		}
		e := r.enter(submit, wait, rawPollMs*time.Millisecond, raw)
		if e == 0 || e == syscall.ETIME || e == syscall.EINTR || e == syscall.EAGAIN || e == syscall.EBUSY {
			if e == 0 || e == syscall.ETIME {
				submit = 0 // taken (an enter that fails before submitting returns an error other than these)
			}
		} else {
			// The ring refuses: nothing was queued for the kernel.
			c.err = os.NewSyscallError("io_uring_enter", e)
			return 0, c.err
		}
		for {
			cqe, ok := r.reap()
			if !ok {
				break
			}
			switch cqe.userData {
			case uringSendTag:
				sent = true
				if cqe.res < 0 {
					sendErr = syscall.Errno(-cqe.res)
				} else if int(cqe.res) < len(req) {
					// A short send ends the link: the receive completes
					// cancelled, and is made again once the rest is written.
					if _, err := c.blockingConn.Write(req[cqe.res:]); err != nil {
						sendErr = syscall.EPIPE
					} else {
						finished = true
					}
				}
			case uringCancelTag:
				cancelOut = false
			case uringRecvTag:
				got = true
				if cqe.res < 0 {
					recvErr = syscall.Errno(-cqe.res)
				} else {
					n = int(cqe.res)
				}
			}
		}
		if sent && got && !cancelOut {
			break
		}
		if e == syscall.ETIME && !asked && (c.closed.Load() || c.expired(&c.readDL)) {
			// Give the receive up: cancel it and wait for both to end (the
			// kernel may still write into b until then).
			r.push(uringSqe{opcode: uringOpAsyncCancel, addr: uringRecvTag, userData: uringCancelTag})
			submit, asked, cancelOut, timedOut = 1, true, true, !c.closed.Load()
		}
		raw = false // longer waits where the runtime sees them
	}
	runtime.KeepAlive(req)
	runtime.KeepAlive(b)
	if recvErr == syscall.ECANCELED && finished {
		return c.roundTrip(nil, b)
	}
	return c.result(sendErr, recvErr, n, timedOut)
}

// result turns a round trip's completions into Read's return values.
func (c *uringConn) result(sendErr, recvErr syscall.Errno, n int, timedOut bool) (int, error) {
	switch {
	case sendErr != 0 && sendErr != syscall.ECANCELED:
		return 0, c.fail("write", sendErr)
	case recvErr == syscall.ECANCELED || recvErr == syscall.EINTR:
		if timedOut && n == 0 {
			return 0, &net.OpError{Op: "read", Net: c.remote.Network(), Addr: c.remote, Err: timeoutError{}}
		}
		if c.closed.Load() {
			return 0, net.ErrClosed
		}
		return 0, c.fail("read", recvErr)
	case recvErr != 0:
		return 0, c.fail("read", recvErr)
	case n == 0:
		if c.closed.Load() {
			return 0, net.ErrClosed
		}
		return 0, io.EOF
	}
	return n, nil
}

func (c *uringConn) fail(op string, e syscall.Errno) error {
	if c.closed.Load() {
		return net.ErrClosed
	}
	return &net.OpError{Op: op, Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError(op, e)}
}

// Close sends a kept request (COM_QUIT, Terminate) as the blocking
// transport would have, then closes the socket; the ring goes with the
// last call in progress.
func (c *uringConn) Close() error {
	if c.mu.TryLock() {
		if c.err == nil && len(c.pend) > 0 && c.acquire() {
			rawWrite(c.fd, c.pend) // best effort, never waits
			c.release()
		}
		c.pend = c.pend[:0]
		c.mu.Unlock()
	}
	if c.closed.Load() {
		return nil
	}
	return c.blockingConn.Close()
}

// UringWorks says whether this kernel lets the process use io_uring (the
// Uring transport, and Auto's choice of it).
func UringWorks() bool { return uringOK() }
