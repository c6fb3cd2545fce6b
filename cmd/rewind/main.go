package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = `rewind: rollback netcode demos and tools

Usage:
  rewind demo [p2p] [flags]   play the demo game between peers over UDP on loopback
  rewind demo server [flags]  replication demo: a server and clients over QUIC on loopback
  rewind demo predict [flags] prediction demo: predicting clients of a server over QUIC
  rewind peer [flags]         one peer of the demo match, against peers in other processes
  rewind replay [flags] FILE  play a recording back and verify its checksums
  rewind netsim [flags]       link-conditioning UDP proxy (latency, loss, ...)
  rewind vet [packages]       check simulation code for non-determinism
  rewind diff A B             compare two desync dumps entity by entity, field by field
  rewind load [flags]         thin clients against match servers (load testing)
  rewind load serve [flags]   match servers to load, with tick duration statistics
  rewind signal [flags]       WebRTC signalling server: rooms of peers over WebSocket
  rewind help [command]       help for a command

Run "rewind help <command>" for the flags of a command.
`

// errFailed reports a run that completed but whose result is a failure (a
// desync, differing checksums, a replay mismatch); the details have been
// printed already.
var errFailed = errors.New("failed")

func main() {
	if isVetTool(os.Args[1:]) { // "rewind vet" runs go vet with this program
		vetTool()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit status: 0 on
// success, 1 when the command failed, 2 for usage errors.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "demo":
		err = demoCommand(ctx, rest, stdout, stderr)
	case "peer":
		err = peerCommand(ctx, rest, stdout, stderr)
	case "replay":
		err = replayCommand(rest, stdout, stderr)
	case "netsim":
		err = netsimCommand(ctx, rest, stdout, stderr)
	case "vet":
		err = vetCommand(ctx, rest, stdout, stderr)
	case "diff":
		err = diffCommand(rest, stdout, stderr)
	case "load":
		err = loadCommand(ctx, rest, stdout, stderr)
	case "signal":
		err = signalCommand(ctx, rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		return helpCommand(rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "rewind: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errFlags):
		return 2 // the flag package printed the problem and the usage
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "rewind %s: %v\n", args[0], err)
		return 2
	case errors.Is(err, errFailed):
		return 1
	}
	fmt.Fprintf(stderr, "rewind %s: %v\n", args[0], err)
	return 1
}

// errUsage wraps command-line mistakes (exit status 2); errFlags those the
// flag package has reported already.
var (
	errUsage = errors.New("usage")
	errFlags = errors.New("bad flags")
)

func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

func helpCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return 0
	}
	var fs *flag.FlagSet
	switch args[0] {
	case "demo":
		fs, _ = demoFlags()
		if len(args) > 1 {
			switch args[1] {
			case "server":
				fs, _ = serverFlags()
			case "predict":
				fs, _ = predictFlags()
			}
		}
	case "peer":
		fs, _, _ = peerFlags()
	case "replay":
		fs, _ = replayFlags()
	case "netsim":
		fs, _ = netsimFlags()
	case "vet":
		fs, _ = vetFlags()
	case "diff":
		fs, _ = diffFlags()
	case "load":
		fs, _ = loadFlags()
		if len(args) > 1 && args[1] == "serve" {
			fs, _ = loadServeFlags()
		}
	case "signal":
		fs, _ = signalFlags()
	default:
		fmt.Fprintf(stderr, "rewind help: unknown command %q\n", args[0])
		return 2
	}
	fs.SetOutput(stdout)
	fs.Usage()
	if l := legendFor(fs.Name()); l != "" {
		fmt.Fprint(stdout, "\n"+l)
	}
	return 0
}

// parseFlags parses args with fs, sending flag errors and usage to stderr.
// A duration given without a unit gets a hint instead of the flag
// package's bare "parse error".
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	var out bytes.Buffer
	fs.SetOutput(&out)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	msg := out.String()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		if name, val, ok := durationParseError(fs, err); ok {
			hint := fmt.Sprintf("a duration needs a unit, e.g. %sms or %ss", val, val)
			if _, perr := strconv.ParseFloat(val, 64); perr != nil {
				hint = "want a duration such as 30ms, 1.5s or 2m"
			}
			msg = strings.Replace(msg, "parse error", hint, 1)
			msg = strings.Replace(msg, "-"+name+":", "--"+name+":", 1)
		}
	}
	io.WriteString(stderr, msg)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if l := legendFor(fs.Name()); l != "" {
				fmt.Fprint(stderr, "\n"+l)
			}
			return err
		}
		return fmt.Errorf("%w: %w", errFlags, err)
	}
	return nil
}

// durationParseError reports whether err is the flag package's error for
// a value of a duration flag of fs that does not parse, with the flag's
// name and the value.
func durationParseError(fs *flag.FlagSet, err error) (name, val string, ok bool) {
	// flag: `invalid value "30" for flag -latency: parse error`
	var q string
	if _, serr := fmt.Sscanf(err.Error(), "invalid value %q for flag -%s", &q, &name); serr != nil {
		return "", "", false
	}
	name = strings.TrimSuffix(name, ":")
	f := fs.Lookup(name)
	if f == nil {
		return "", "", false
	}
	g, isGetter := f.Value.(flag.Getter)
	if !isGetter {
		return "", "", false
	}
	if _, isDur := g.Get().(time.Duration); !isDur {
		return "", "", false
	}
	return name, q, true
}
