package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Transport chooses how a connection waits for the network.
type Transport string

const (
	// Auto is, for up to BlockingMax connections, Loop for several
	// PostgreSQL connections where io_uring works, else Blocking; Netpoll
	// beyond (see Resolve).
	Auto Transport = "auto"
	// Blocking reads and writes a blocking file descriptor directly: two
	// syscalls per query (write, read). Each waiting connection holds an OS
	// thread, so it suits up to a few hundred workers.
	Blocking Transport = "blocking"
	// Uring sends a statement and receives its reply through an io_uring
	// ring of the connection's own: one system call per statement (see
	// uring.go). Like Blocking, each waiting connection holds an OS thread.
	Uring Transport = "uring"
	// Loop serves several connections from each OS thread, one io_uring
	// ring per thread, the workers as coroutines (Loops, loop.go): one
	// wake-up completes every statement whose reply came in meanwhile.
	Loop Transport = "loop"
	// Netpoll is Go's ordinary net.Conn over the runtime's netpoller: about
	// 4.5 syscalls per query (epoll_pwait, futex and nanosleep on top of read
	// and write), but thousands of connections cost no threads.
	Netpoll Transport = "netpoll"
)

// BlockingMax is the connection count up to which Auto picks a transport
// that holds an OS thread per waiting connection (Blocking) or per CPU
// (Loop); beyond it, Netpoll.
const BlockingMax = 256

// Resolve turns Auto into a concrete transport for n connections of
// protocol p. The choice is measured (docs/perf.md, bench/client-limit.sh:
// client CPU per statement against sysbench's, point-query, 7 paired
// rounds, on the 2-core project VM): at 8 connections on PostgreSQL the
// loop transport cost 0.79–0.91× sysbench's CPU per statement where the
// blocking one cost 1.15–1.20×; on MariaDB the two were within the noise
// (1.05–1.09× against 0.94–1.09×), and at one connection the blocking one
// was never beaten, so it stays there.
func (t Transport) Resolve(n int, p Protocol) Transport {
	if t != "" && t != Auto {
		return t
	}
	switch {
	case n > BlockingMax:
		return Netpoll
	case p == Postgres && n > 1 && uringOK():
		return Loop
	}
	return Blocking
}

// ParseTransport checks a --transport value.
func ParseTransport(s string) (Transport, error) {
	switch Transport(s) {
	case Auto, Blocking, Netpoll:
		return Transport(s), nil
	case Uring, Loop:
		if !uringOK() {
			return "", fmt.Errorf("--transport %s: this kernel refuses io_uring (missing, or disabled by kernel.io_uring_disabled or a seccomp filter): use auto, blocking or netpoll", s)
		}
		return Transport(s), nil
	}
	return "", fmt.Errorf("unknown transport %q: use auto, blocking, uring, loop or netpoll", s)
}

// blockingConn is a net.Conn over a blocking socket, read and written with
// raw syscalls. No library offers this: net.Conn always goes through the
// netpoller, and os.File over a socket does too once it is set non-blocking.
// Written by hand for the syscall count above.
type blockingConn struct {
	fd              int
	local           net.Addr
	remote          net.Addr
	closed          atomic.Bool
	refs            atomic.Int64 // 1 for the open conn, +1 per call in progress; the fd is closed at 0
	readDL, writeDL atomic.Int64 // deadlines, UnixNano; 0 for none
	last            func()       // run after the fd is closed (the io_uring transport frees its ring)
}

// acquire pins the fd for one call; it fails once the conn is closed. Close
// only shuts the socket down (waking calls in progress); the last call out
// closes the fd, so that a number the kernel hands out again is never read
// or written by a call that began on the old one.
func (c *blockingConn) acquire() bool {
	for {
		r := c.refs.Load()
		if r == 0 || c.closed.Load() {
			return false
		}
		if c.refs.CompareAndSwap(r, r+1) {
			if c.closed.Load() {
				c.release()
				return false
			}
			return true
		}
	}
}

func (c *blockingConn) release() {
	if c.refs.Add(-1) == 0 {
		syscall.Close(c.fd)
		blockingConns.Add(-1)
		if c.last != nil {
			c.last()
		}
	}
}

var _ net.Conn = (*blockingConn)(nil)

// dialBlocking connects a blocking socket to a unix path or a TCP host:port.
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	var (
		domain int
		sa     syscall.Sockaddr
		remote net.Addr
	)
	switch network {
	case "unix":
		domain, sa, remote = syscall.AF_UNIX, &syscall.SockaddrUnix{Name: addr}, &net.UnixAddr{Name: addr, Net: "unix"}
	case "tcp", "tcp4":
		host, portS, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		port, err := strconv.Atoi(portS)
		if err != nil {
			return nil, fmt.Errorf("port %q: %w", portS, err)
		}
		ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", host)
		if err != nil || len(ips) == 0 {
			return nil, fmt.Errorf("resolve %s: %v", host, err)
		}
		in := &syscall.SockaddrInet4{Port: port}
		copy(in.Addr[:], ips[0].To4())
		domain, sa, remote = syscall.AF_INET, in, &net.TCPAddr{IP: ips[0], Port: port}
	default:
		return nil, fmt.Errorf("blocking transport: unsupported network %q", network)
	}
	fd, err := syscall.Socket(domain, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		setTimeout(fd, syscall.SO_SNDTIMEO, time.Until(dl)) // bounds connect(2) too
	}
	if err = syscall.Connect(fd, sa); err == syscall.EINTR {
		// The connect goes on in the kernel: wait for it, and read its result.
		for rawPoll(fd, pollOut, 1000) <= 0 {
			if ctx.Err() != nil {
				syscall.Close(fd)
				return nil, ctx.Err()
			}
		}
		var soErr int
		if soErr, err = syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ERROR); err == nil && soErr != 0 {
			err = syscall.Errno(soErr)
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: network, Addr: remote, Err: os.NewSyscallError("connect", err)}
	}
	setTimeout(fd, syscall.SO_SNDTIMEO, 0)
	if domain == syscall.AF_INET {
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	}
	// Non-blocking from here: every wait is a poll, bounded (see Read).
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	reserveP()
	c := &blockingConn{fd: fd, remote: remote, local: remote}
	c.refs.Store(1)
	return c, nil
}

// rawPollMs bounds a read's raw wait. It is long on purpose: a poll timeout
// arms a timer, and a short one is often the next timer due on its CPU, which
// on a VM costs a timer reprogramming (an exit to the hypervisor) per query;
// at 50 ms the timer tick comes first. Measured: 50 ms costs the same CPU per
// statement as no timeout at all.
const rawPollMs = 50

var blockingConns atomic.Int64

// reserveP keeps GOMAXPROCS above the number of blocking connections. A
// goroutine in a raw read keeps its P (the runtime does not know it is in the
// kernel), so with fewer Ps than connections the workers would take turns
// instead of waiting on the server at once. The Ps are not CPUs: the threads
// holding them sleep in the kernel.
func reserveP() {
	pMu.Lock()
	defer pMu.Unlock()
	n := int(blockingConns.Add(1)) + 2
	if runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
}

var pMu sync.Mutex

// rawRead and rawWrite (and rawPoll) are read(2) and write(2) without the runtime's
// entersyscall/exitsyscall: a query's round trip (tens of µs) outlasts
// sysmon's 20 µs retake tick, so an ordinary syscall.Read hands its P to
// another thread and takes one back afterwards, about two futex calls and a
// nanosleep per query. Raw calls keep the thread and its P; the cost is that
// a garbage collection waits for them, which rawPollMs bounds.
func rawRead(fd int, b []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

func rawWrite(fd int, b []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

func setTimeout(fd, opt int, d time.Duration) error {
	if d < 0 {
		d = time.Microsecond
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv)
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	for {
		// Wait with poll(POLLIN), then read: right after a query is sent
		// there is nothing to read yet. (A read blocked in the kernel on a
		// unix socket would also be woken when the server takes our request
		// off the socket, since the write-space wakeup shares the wait
		// queue: two context switches per query instead of one. poll's
		// wakeups are filtered by event.)
		if err := c.wait(pollIn, &c.readDL, "read"); err != nil {
			return 0, err
		}
		n, e := rawRead(c.fd, b)
		switch {
		case e == syscall.EAGAIN || e == syscall.EINTR:
			continue // taken by another reader, or a signal: wait again
		case e != 0:
			if c.closed.Load() {
				return 0, net.ErrClosed
			}
			return 0, &net.OpError{Op: "read", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("read", e)}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// wait polls fd for events. The raw poll waits at most rawPollMs: a
// goroutine in a raw call keeps its P, so a garbage collection (which must
// stop every P) waits for it, and one waiting for data that only comes after
// the collection (pgx's background reader, an idle connection) would wait
// forever. A longer wait goes on where the runtime can see it, watching the
// deadline.
func (c *blockingConn) wait(events int16, dl *atomic.Int64, op string) error {
	n := rawPoll(c.fd, events, rawPollMs)
	for n <= 0 {
		if c.expired(dl) {
			return &net.OpError{Op: op, Net: c.remote.Network(), Addr: c.remote, Err: timeoutError{}}
		}
		if n < 0 { // interrupted by a signal: raw again
			n = rawPoll(c.fd, events, rawPollMs)
			continue
		}
		n = slowPoll(c.fd, events, 100)
	}
	return nil
}

type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const (
	pollIn  = 0x1
	pollOut = 0x4
)

// rawPoll waits up to ms milliseconds for events on fd (or its closing, or
// an error), without telling the runtime. It returns 1 when fd is ready, 0
// on timeout and -1 when interrupted by a signal.
func rawPoll(fd int, events int16, ms int) int {
	p := pollFd{fd: int32(fd), events: events}
	n, _, e := syscall.RawSyscall(syscall.SYS_POLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(ms))
	if e != 0 {
		return -1
	}
	return int(n)
}

// slowPoll is rawPoll as an ordinary syscall: the runtime hands this thread's
// P to others while it waits.
func slowPoll(fd int, events int16, ms int) int {
	p := pollFd{fd: int32(fd), events: events}
	n, _, e := syscall.Syscall(syscall.SYS_POLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(ms))
	if e != 0 {
		return -1
	}
	return int(n)
}

func (c *blockingConn) Write(b []byte) (int, error) {
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	written := 0
	for written < len(b) {
		n, e := rawWrite(c.fd, b[written:])
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN: // the socket buffer is full: wait for room
			if err := c.wait(pollOut, &c.writeDL, "write"); err != nil {
				return written, err
			}
			continue
		case e != 0:
			if c.closed.Load() {
				return written, net.ErrClosed
			}
			return written, &net.OpError{Op: "write", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("write", e)}
		}
		written += n
	}
	return written, nil
}

// expired reports whether the deadline in dl (UnixNano, 0 for none) passed.
func (c *blockingConn) expired(dl *atomic.Int64) bool {
	d := dl.Load()
	return d != 0 && time.Now().UnixNano() >= d
}

func (c *blockingConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	syscall.Shutdown(c.fd, syscall.SHUT_RDWR) // wake a call waiting in another goroutine
	c.release()                               // the open conn's reference
	return nil
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}
func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.setDeadline(&c.readDL, t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.setDeadline(&c.writeDL, t) }

// setDeadline records a deadline, checked while a call waits. A
// deadline already past (how drivers cancel a query) shuts the socket down,
// which wakes a call blocked in another goroutine at once.
func (c *blockingConn) setDeadline(dl *atomic.Int64, t time.Time) error {
	switch {
	case t.IsZero():
		dl.Store(0)
	case !t.After(time.Now()):
		dl.Store(t.UnixNano())
		if !c.acquire() {
			return nil
		}
		defer c.release()
		return syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	default:
		dl.Store(t.UnixNano())
	}
	return nil
}
