package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
)

// asRewind is the environment variable under which the test binary is the
// rewind command itself (TestPeerProcesses starts it as such, instead of
// building the command).
const asRewind = "REWIND_TEST_AS_COMMAND"

// TestMain runs main when the binary is started as the command, and
// otherwise the tests, which run in parallel (each real-time demo on its
// own loopback ports; all at once, as they wait on the clock rather than
// the CPU), and then checks that they left no goroutine
// running: the per-test checks (trackGoroutines) name the test, this one
// also catches a goroutine that no test's goroutine started (a timer's).
func TestMain(m *testing.M) {
	if os.Getenv(asRewind) == "1" {
		main()
		return
	}
	// The demos wait on the clock and the network, not on the CPU: run
	// them all at once, not GOMAXPROCS at a time, unless -parallel says
	// otherwise or the race detector makes them CPU-bound.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet && !raceEnabled {
		_ = flag.Set("test.parallel", "32")
	}
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				fmt.Fprintf(os.Stderr, "after the tests: %d goroutines, want at most %d:\n%s",
					runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
				code = 1
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	os.Exit(code)
}

// goroutineLabel is the profiler label that marks the goroutines a test
// started, directly or not (goroutines inherit their creator's labels).
const goroutineLabel = "rewind-test"

// trackGoroutines labels the calling test's goroutine with the test's
// name and returns a check, to call at the end of the test, that waits
// for at most a few seconds until no goroutine with that label is left
// but the test's own. Unlike a count of all goroutines, it holds while
// other tests run in parallel.
func trackGoroutines(t *testing.T) (check func()) {
	t.Helper()
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(goroutineLabel, t.Name())))
	return func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, stacks := labelled(t.Name())
			if n <= 1 { // the test's own goroutine
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d goroutines started by the test still run:\n%s", n-1, stacks)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// labelled counts the goroutines whose goroutineLabel is name and returns
// their stacks.
func labelled(name string) (int, string) {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	want := fmt.Sprintf("# labels: {%q:%q}", goroutineLabel, name)
	n := 0
	var stacks strings.Builder
	// After a "goroutine profile: total N" line, groups of goroutines with
	// the same stack and labels, separated by blank lines, each opened by
	// "N @ pc...", then "# labels: {...}" when labelled, then the frames.
	for group := range strings.SplitSeq(buf.String(), "\n\n") {
		lines := strings.Split(group, "\n")
		for i := 0; i+1 < len(lines); i++ {
			count, _, isHead := strings.Cut(lines[i], " @ ")
			k, err := strconv.Atoi(count)
			if !isHead || err != nil || lines[i+1] != want {
				continue
			}
			n += k
			stacks.WriteString(strings.Join(lines[i:], "\n"))
			stacks.WriteString("\n\n")
			break
		}
	}
	return n, stacks.String()
}
