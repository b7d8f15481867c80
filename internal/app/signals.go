package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/qpslab/qpslab/internal/report"
)

// exit ends the process; a test replaces it.
var exit = os.Exit

// secondSignal is set while a command gives a second signal a meaning of
// its own (the fleet agent: abort the job in progress, TakeSecondSignal).
var secondSignal atomic.Bool

// Interruptible is a command's context: the first SIGINT or SIGTERM ends
// it, so that whatever the command does (a plan, an import's reads, a
// store's query) stops, cleans up and says so; the second ends the
// process at once with status 130, with a line on errw saying so, for a
// command whose clean-up is slow or stuck (the servers it started die
// with it all the same: sandbox's orphan guard). While a command takes
// the second signal for itself (TakeSecondSignal), the third does.
func Interruptible(parent context.Context, errw io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				n++
				switch {
				case n == 1:
					cancel()
				case n == 2 && secondSignal.Load():
				default:
					fmt.Fprintf(errw, "qpslab: %s again: exiting now, without finishing the clean-up (the servers this run started are stopped all the same)\n", sigName(s))
					exit(130)
					return
				}
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

func sigName(s os.Signal) string {
	if s == os.Interrupt {
		return "SIGINT"
	}
	return "SIGTERM"
}

// TakeSecondSignal makes a second SIGINT or SIGTERM the command's own (it
// watches the signals itself) until release: Interruptible then exits at
// the third.
func TakeSecondSignal() (release func()) {
	secondSignal.Store(true)
	return func() { secondSignal.Store(false) }
}

// ExitCode says how a command that ended with err ends the process: err as
// one line on errw ("interrupted" when ctx ended by a signal), and the
// exit status: 0, 130 for an interruption, detect --fail-on's status, else 1.
func ExitCode(ctx context.Context, err error, errw io.Writer) int {
	if err == nil {
		return 0
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintln(errw, "qpslab: interrupted; every server this run started has been stopped")
		return 130
	}
	fmt.Fprintln(errw, "qpslab: "+strings.Join(strings.Fields(err.Error()), " "))
	var gate *report.GateFailed // detect --fail-on
	if errors.As(err, &gate) {
		return gate.ExitCode()
	}
	return 1
}
