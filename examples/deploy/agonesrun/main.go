// Command agonesrun runs a match server under Agones: it starts the
// server given after "--" as a child process, speaks the Agones SDK for it
// (package ops/agones: Ready, health pings, the Allocated watch, labels),
// and ends the lifecycle with it: when the child exits (the match ended)
// or the pod is stopped (SIGTERM: passed on to the child, which drains),
// it asks Agones to shut the game server down.
//
//	agonesrun [--label k=v]... [--drain 30s] -- arena server --listen :7777
//
// A game server that imports package ops/agones needs no wrapper; this
// one lets a server that knows nothing of Agones (the arena example)
// run on a fleet unchanged.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rewindgo/rewind/ops/agones"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], agones.Config{}, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agonesrun:", err)
		os.Exit(1)
	}
}

// labels is the --label flag: key=value, repeated.
type labels map[string]string

func (l labels) String() string { return fmt.Sprint(map[string]string(l)) }
func (l labels) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	l[k] = v
	return nil
}

// run parses args, starts the child and runs the Agones lifecycle
// around it with an SDK made from sdkCfg.
func run(ctx context.Context, args []string, sdkCfg agones.Config, stderr io.Writer) error {
	fs := flag.NewFlagSet("agonesrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lbl := labels{}
	fs.Var(lbl, "label", "set a label of the GameServer `key=value` (repeatable)")
	drain := fs.Duration("drain", 30*time.Second, "how long the child may take to stop after SIGTERM")
	health := fs.Duration("health", 2*time.Second, "period of the health pings")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no server command (want: agonesrun [flags] -- command args...)")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if sdkCfg.Logger == nil {
		sdkCfg.Logger = log
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return agones.Run(ctx, agones.RunConfig{SDK: agones.New(sdkCfg), Labels: lbl, HealthEvery: *health,
		DrainTimeout: *drain, Logger: log}, c)
}

// child is the match server process as an agones.Game.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Allocated: the child accepts players from the start; nothing to do.
func (c *child) Allocated(context.Context, agones.GameServer) error { return nil }

// Done is closed when the child exits.
func (c *child) Done() <-chan struct{} { return c.done }

// Drain passes SIGTERM on and waits for the child to exit, killing it
// when ctx ends first.
func (c *child) Drain(ctx context.Context) error {
	select {
	case <-c.done:
		return c.exitErr()
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return c.exitErr()
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("killed after the drain timeout: %w", ctx.Err())
	}
}

// exitErr is the child's exit error; a child stopped by our SIGTERM
// exited as asked.
func (c *child) exitErr() error {
	var ee *exec.ExitError
	if errors.As(c.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return c.err
}
