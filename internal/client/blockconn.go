package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Transport chooses how a connection waits for the network.
type Transport string

const (
	// Auto is Blocking for up to BlockingMax connections, else Netpoll.
	Auto Transport = "auto"
	// Blocking reads and writes a blocking file descriptor directly: two
	// syscalls per query (write, read). Each waiting connection holds an OS
	// thread, so it suits up to a few hundred workers.
	Blocking Transport = "blocking"
	// Netpoll is Go's ordinary net.Conn over the runtime's netpoller: about
	// 4.5 syscalls per query (epoll_pwait, futex and nanosleep on top of read
	// and write), but thousands of connections cost no threads.
	Netpoll Transport = "netpoll"
)

// BlockingMax is the connection count up to which Auto picks Blocking.
const BlockingMax = 256

// Resolve turns Auto into a concrete transport for n connections.
func (t Transport) Resolve(n int) Transport {
	if t == "" || t == Auto {
		if n <= BlockingMax {
			return Blocking
		}
		return Netpoll
	}
	return t
}

// ParseTransport checks a --transport value.
func ParseTransport(s string) (Transport, error) {
	switch Transport(s) {
	case Auto, Blocking, Netpoll:
		return Transport(s), nil
	}
	return "", fmt.Errorf("unknown transport %q: use auto, blocking or netpoll", s)
}

// blockingConn is a net.Conn over a blocking socket. No library offers this:
// net.Conn always goes through the netpoller, and os.File over a socket does
// too once it is set non-blocking. Written by hand for the syscall count above.
type blockingConn struct {
	fd     int
	local  net.Addr
	remote net.Addr
	closed atomic.Bool
	// Deadlines are kept as socket timeouts (SO_RCVTIMEO/SO_SNDTIMEO); a
	// deadline in the past (how drivers cancel a query) shuts the socket down,
	// which wakes a blocked read.
	hasTimeout atomic.Bool
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
	for {
		err = syscall.Connect(fd, sa)
		if err != syscall.EINTR {
			break
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
	c := &blockingConn{fd: fd, remote: remote, local: remote}
	return c, nil
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
	for {
		n, err := syscall.Read(c.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, &net.OpError{Op: "read", Net: c.remote.Network(), Addr: c.remote, Err: timeoutError{}}
		case err != nil:
			if c.closed.Load() {
				return 0, net.ErrClosed
			}
			return 0, &net.OpError{Op: "read", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("read", err)}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		n, err := syscall.Write(c.fd, b[written:])
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return written, &net.OpError{Op: "write", Net: c.remote.Network(), Addr: c.remote, Err: timeoutError{}}
		}
		if err != nil {
			if c.closed.Load() {
				return written, net.ErrClosed
			}
			return written, &net.OpError{Op: "write", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("write", err)}
		}
		written += n
	}
	return written, nil
}

func (c *blockingConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	syscall.Shutdown(c.fd, syscall.SHUT_RDWR) // wake a read blocked in another goroutine
	return syscall.Close(c.fd)
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	return errors.Join(c.setDeadline(syscall.SO_RCVTIMEO, t), c.setDeadline(syscall.SO_SNDTIMEO, t))
}
func (c *blockingConn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(syscall.SO_RCVTIMEO, t)
}
func (c *blockingConn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(syscall.SO_SNDTIMEO, t)
}

func (c *blockingConn) setDeadline(opt int, t time.Time) error {
	switch {
	case t.IsZero():
		if c.hasTimeout.Load() {
			return setTimeout(c.fd, opt, 0)
		}
		return nil
	case !t.After(time.Now()):
		// A cancelled query: the only way to wake a blocking read.
		return syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	default:
		c.hasTimeout.Store(true)
		return setTimeout(c.fd, opt, time.Until(t))
	}
}
