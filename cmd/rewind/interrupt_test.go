package main

import (
	"context"
	"strings"
	"testing"
)

// TestInterruptedVerdicts: Ctrl-C (the context cancelled) in the middle of
// "demo server" and "demo predict" exits 1 with INTERRUPTED, and says the
// states were not compared instead of calling them different: mid-run,
// the clients lag the server by the network's delay.
func TestInterruptedVerdicts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"demo", "server", "--clients", "2", "--entities", "50", "--ticks", "6000", "--latency", "5ms"},
			[]string{"random state: not compared (interrupted)", "replicated state: not compared (interrupted)", "messages not compared (interrupted)", "client 1:", ", not compared\n"}},
		{[]string{"demo", "predict", "--clients", "1", "--ticks", "6000", "--latency", "5ms"},
			[]string{"confirmed state: not compared (interrupted)", ", not compared\n"}},
	}
	for _, c := range cases {
		t.Run(c.args[1], func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := newLineWriter("] running") // the first live statistics of the run
			done := make(chan int)
			go func() { done <- run(ctx, c.args, out, out) }()
			<-out.seen
			cancel()
			code := <-done
			s := out.String()
			if code != 1 || !strings.Contains(s, "\nINTERRUPTED\n") {
				t.Errorf("exit %d, want 1 and INTERRUPTED:\n%s", code, s)
			}
			for _, w := range c.want {
				if !strings.Contains(s, w) {
					t.Errorf("no %q in:\n%s", w, s)
				}
			}
			for _, bad := range []string{"DIFFERENT", "MISSING", "OK\n", "FAILED"} {
				if strings.Contains(s, bad) {
					t.Errorf("interrupted run says %q:\n%s", bad, s)
				}
			}
		})
	}
}
