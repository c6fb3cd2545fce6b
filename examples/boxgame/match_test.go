package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/examples/boxgame/sim"
	"github.com/rewindgo/rewind/fixed"
	"github.com/rewindgo/rewind/rollback"
)

// freePorts returns n UDP ports that were free on loopback a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var conns []*net.UDPConn
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	for _, c := range conns {
		c.Close()
	}
	return ports
}

// TestMatchModes wires matches from command lines, as the game does, and
// plays them without a window over loopback UDP: two peers (one sending
// through the link conditioner with 10% loss) and a spectator of the first.
// All three must complete frames 0..90 with the same digest.
// play updates every match in real time (they talk over loopback UDP)
// until done reports true, failing with why() after 20 seconds.
func play(t *testing.T, ms []*match, done func() bool, why func() string) {
	t.Helper()
	playFor(t, ms, done, why, 20*time.Second)
}

// playFor is play with a time limit of its own.
func playFor(t *testing.T, ms []*match, done func() bool, why func() string, limit time.Duration) {
	t.Helper()
	start, last := time.Now(), time.Now()
	for !done() {
		if time.Since(start) > limit {
			t.Fatalf("after %v: %s", limit, why())
		}
		time.Sleep(2 * time.Millisecond)
		now := time.Now()
		for _, m := range ms {
			if err := m.update(now.Sub(last)); err != nil {
				t.Fatal(err)
			}
		}
		last = now
	}
}

func TestMatchModes(t *testing.T) {
	ports := freePorts(t, 3)
	p := func(i int) string { return fmt.Sprint(ports[i]) }
	a := func(i int) string { return "127.0.0.1:" + p(i) }
	common := []string{"--frames", "90", "--script"}
	lines := [][]string{
		{"--port", p(0), "--players", "local," + a(1), "--spectators", a(2), "--loss", "0.1", "--latency", "5ms"},
		{"--port", p(1), "--players", a(0) + ",local"},
		{"--port", p(2), "--spectate", a(0), "--num-players", "2"},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ms []*match
	for _, l := range lines {
		o, err := parseOptions(append(l, common...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		m, err := newMatch(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer m.close()
		ms = append(ms, m)
	}
	play(t, ms, func() bool { return ms[0].complete() && ms[1].complete() && ms[2].complete() }, func() string {
		return fmt.Sprintf("not complete: frames confirmed %d %d %d", ms[0].digest.Frames(), ms[1].digest.Frames(), ms[2].digest.Frames())
	})
	for i, m := range ms {
		s := m.summary(nil, nil)
		t.Logf("%s: digest %s over %d frames, %d rollbacks, link lost %d", s.Mode, s.Digest, s.DigestFrames, s.Rollbacks, s.LinkLost)
		if !s.OK || s.Digest != ms[0].digest.String() {
			t.Errorf("match %d: %+v", i, s)
		}
	}
	if ms[0].summary(nil, nil).LinkLost == 0 {
		t.Error("nothing lost with --loss 0.1")
	}
}

// TestMatchDesync: when one peer's game differs from the other's (a box
// moved by one unit behind the simulation's back), both peers detect the
// desync, the HUD's banner names the type, and the summary fails.
func TestMatchDesync(t *testing.T) {
	ports := freePorts(t, 2)
	a := func(i int) string { return fmt.Sprint("127.0.0.1:", ports[i]) }
	lines := [][]string{
		{"--port", fmt.Sprint(ports[0]), "--players", "local," + a(1)},
		{"--port", fmt.Sprint(ports[1]), "--players", a(0) + ",local"},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ms []*match
	for _, l := range lines {
		o, err := parseOptions(append(l, "--frames", "60", "--script", "--desync-interval", "10"), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		m, err := newMatch(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer m.close()
		ms = append(ms, m)
	}
	for _, b := range ecs.StoreOf[sim.Box](ms[1].game.World()).All() {
		b.Pos.X = b.Pos.X.Add(fixed.One)
		break
	}
	play(t, ms, func() bool { return len(ms[0].desyncs) > 0 && len(ms[1].desyncs) > 0 }, func() string {
		return fmt.Sprintf("desync not detected: %q %q", ms[0].desyncs, ms[1].desyncs)
	})
	for i, m := range ms {
		s := m.summary(nil, nil)
		t.Logf("peer %d: %s; ok %v, %q", i, s.DesyncEvents[0], s.OK, s.Failure)
		if s.OK || s.Desyncs == 0 || !strings.Contains(s.DesyncEvents[0], "sim.Box") || !strings.Contains(m.alarm, "differing: sim.Box") {
			t.Errorf("peer %d: %+v", i, s)
		}
	}
}

// TestSyncTestMode: the --synctest command line plays 4 local players under
// SyncTest's rollbacks to frame 120.
func TestSyncTestMode(t *testing.T) {
	o, err := parseOptions([]string{"--synctest", "--num-players", "4", "--frames", "120", "--script"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newMatch(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	for i := 0; !m.complete(); i++ {
		if i > 1000 {
			t.Fatalf("not finished after %d updates: frame %d", i, m.currentFrame())
		}
		if err := m.update(time.Second / 60); err != nil {
			t.Fatal(err)
		}
	}
	s := m.summary(nil, nil)
	if !s.OK || s.Rollbacks < 100 || len(s.Local) != 4 {
		t.Fatalf("%+v", s)
	}
	// The HUD's "rollbacks N (F frames, deepest D)": every check goes back
	// --check-distance (7) frames and re-simulates them.
	st := m.stats()
	if st.MaxRollback != 7 || st.RollbackFrames < 6*st.Rollbacks || st.RollbackFrames > 7*st.Rollbacks {
		t.Errorf("SyncTest stats: %d rollbacks, %d frames re-simulated, deepest %d; want 7 deep, about 7 frames each",
			st.Rollbacks, st.RollbackFrames, st.MaxRollback)
	}
}

func TestOptions(t *testing.T) {
	bad := [][]string{
		{"--players", "local"},
		{"--players", "local,local,local,local,local"},
		{"--players", "local,nosuchhost.invalid:1"},
		{"--synctest", "--spectate", "127.0.0.1:1"},
		{"--spectate", "127.0.0.1:1", "--num-players", "9"},
		{"--headless"},
		{"--loss", "2"},
	}
	for _, args := range bad {
		if _, err := parseOptions(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	o, err := parseOptions([]string{"--players", "local,127.0.0.1:7001,local", "--headless", "--frames", "10"}, io.Discard)
	if err != nil || len(o.Players) != 3 || o.Players[0].IsValid() || !o.Players[1].IsValid() || !o.Script || o.Mode != modeP2P {
		t.Fatalf("%+v, %v", o, err)
	}
}

// TestYouLabel: the HUD's first line says which boxes this window plays
// and with which keys, so a player finds their box at a glance.
func TestYouLabel(t *testing.T) {
	cases := []struct {
		local  []rollback.PlayerHandle
		script bool
		want   string
	}{
		{[]rollback.PlayerHandle{0}, false, "you: P1 (WASD)"},
		{[]rollback.PlayerHandle{1}, false, "you: P2 (WASD)"},
		{[]rollback.PlayerHandle{0, 1}, false, "you: P1 (WASD), P2 (arrows)"},
		{[]rollback.PlayerHandle{2}, true, "you: P3 (scripted)"},
		{nil, false, "spectating"},
	}
	for _, c := range cases {
		if got := youLabel(c.local, c.script); got != c.want {
			t.Errorf("youLabel(%v, %v) = %q, want %q", c.local, c.script, got, c.want)
		}
	}
	m := &match{local: []rollback.PlayerHandle{1}}
	if m.isLocal(0) || !m.isLocal(1) {
		t.Error("isLocal does not follow the local players")
	}
}
