package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuf is a buffer the signal goroutine writes while the test reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The first signal ends the command's context; the second ends the process
// at once (130), saying so; while a command takes the second for itself,
// the third does. Real signals to this process, each waited for (a
// signal sent while the same one is pending is merged into it).
func TestInterruptible(t *testing.T) {
	for _, taken := range []bool{false, true} {
		t.Run(fmt.Sprintf("taken=%v", taken), func(t *testing.T) {
			exited := make(chan int, 1)
			exit = func(code int) { exited <- code }
			defer func() { exit = os.Exit }()
			if taken {
				defer TakeSecondSignal()()
			}
			seen := make(chan os.Signal, 4)
			signal.Notify(seen, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(seen)
			var errw syncBuf
			ctx, stop := Interruptible(context.Background(), &errw)
			defer stop()
			send := func(s syscall.Signal) {
				t.Helper()
				if err := syscall.Kill(os.Getpid(), s); err != nil {
					t.Fatal(err)
				}
				select {
				case <-seen:
				case <-time.After(time.Minute):
					t.Fatalf("%v was not delivered within a minute", s)
				}
			}
			send(syscall.SIGINT)
			select {
			case <-ctx.Done():
			case <-time.After(time.Minute):
				t.Fatal("the first SIGINT did not end the context")
			}
			if len(exited) > 0 {
				t.Fatal("the first signal ended the process")
			}
			last := syscall.SIGINT
			send(syscall.SIGINT)
			if taken {
				last = syscall.SIGTERM
				send(last)
			}
			select {
			case code := <-exited:
				if code != 130 {
					t.Errorf("exit status %d", code)
				}
			case <-time.After(time.Minute):
				t.Fatal("no exit after the last signal")
			}
			want := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[last] + " again: exiting now"
			if !strings.Contains(errw.String(), want) {
				t.Errorf("said %q, want %q", errw.String(), want)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	var w bytes.Buffer
	if ExitCode(context.Background(), nil, &w) != 0 || w.Len() > 0 {
		t.Errorf("no error: %q", w.String())
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if c := ExitCode(ended, fmt.Errorf("import: %w", context.Canceled), &w); c != 130 || !strings.Contains(w.String(), "interrupted") {
		t.Errorf("interrupted: %d %q", c, w.String())
	}
	w.Reset()
	if c := ExitCode(context.Background(), errors.New("a\nb"), &w); c != 1 || w.String() != "qpslab: a b\n" {
		t.Errorf("an error: %d %q", c, w.String())
	}
}
