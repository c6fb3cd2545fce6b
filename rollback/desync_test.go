package rollback_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// TestDesyncExactUnderLoss sweeps 2-4 peers over links with 0-30% loss,
// 0-30% duplication, jitter and reordering. The last peer's accumulator is
// corrupted at frames 150..159, so its state differs from the others' at
// every checked frame from 200 on (DesyncInterval 100, EndFrame 400: frames
// 200, 300 and 400 differ, 100 does not). Once every peer is Finished,
// each peer has raised exactly one EventDesyncDetected per (other peer,
// differing checked frame), naming the differing type "Acc", and none for
// equal pairs. Before, a lost ChecksumReport left a frame unchecked (about
// a quarter of peers at 20% loss reported nothing) and a duplicated one
// raised a second event without types.
func TestDesyncExactUnderLoss(t *testing.T) {
	type scenario struct {
		peers     int
		loss, dup float64
	}
	var cases []scenario
	for i, loss := range []float64{0, 0.1, 0.2, 0.3} {
		for j, dup := range []float64{0, 0.3} {
			cases = append(cases, scenario{peers: 2 + (i+j)%3, loss: loss, dup: dup})
		}
	}
	cases = append(cases, scenario{4, 0.3, 0.3}, scenario{3, 0.3, 0.15}, scenario{2, 0.3, 0.3})
	for k, c := range cases {
		seed := uint64(100 + k)
		t.Run(fmt.Sprintf("seed%d_%dpeers_loss%.0f_dup%.0f", seed, c.peers, 100*c.loss, 100*c.dup), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				checkDesyncEvents(t, seed, c.peers, transport.LinkConfig{Latency: 30 * time.Millisecond,
					Jitter: 20 * time.Millisecond, Loss: c.loss, Duplicate: c.dup, Reorder: 0.1})
			})
		})
	}
}

func checkDesyncEvents(t *testing.T, seed uint64, n int, link transport.LinkConfig) {
	net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: seed, Default: link})
	defer net.Close()
	const end = 400
	peers := newMatch(t, net, n, rollback.Config{DesyncInterval: 100, EndFrame: end, InputDelay: 2})
	bad := n - 1
	peers[bad].g.corrupt = func(s *stubState) {
		if s.Frame >= 150 && s.Frame < 160 {
			s.Acc ^= 1
		}
	}
	runToEnd(t, peers, nil, nil, 2*time.Minute)
	differing := []rollback.Frame{200, 300, 400}
	for i, p := range peers {
		got := map[string]int{}
		for _, e := range p.events {
			if e.Kind != rollback.EventDesyncDetected {
				continue
			}
			if !slices.Equal(e.Types, []string{"Acc"}) {
				t.Errorf("peer %d: desync with %v at frame %d names %v, want [Acc]", i, e.Addr, e.Frame, e.Types)
			}
			got[fmt.Sprintf("%v@%d", e.Addr, e.Frame)]++
		}
		want := map[string]int{}
		for j := range peers {
			if j == i || (i != bad && j != bad) {
				continue
			}
			for _, f := range differing {
				want[fmt.Sprintf("%v@%d", addrOf(j), f)] = 1
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("peer %d: desync events %v, want %v", i, got, want)
		}
	}
}

// TestLockstepDesyncDetected: two lockstep peers whose states differ from
// frame 150 on (DesyncInterval 50, EndFrame 300, a lossy link) each report
// the desync exactly once at each checked frame 150, 200, 250 and 300,
// naming "Acc". Lockstep asks for Saves of the checked frames only and
// never for a Load. Before, lockstep requested no Save, so no checksum was
// ever reported and the peers compared nothing.
func TestLockstepDesyncDetected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 9, Default: transport.LinkConfig{
			Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.1, Duplicate: 0.1}})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{Lockstep: true, InputDelay: 2, DesyncInterval: 50, EndFrame: 300})
		peers[1].g.corrupt = func(s *stubState) {
			if s.Frame >= 150 && s.Frame < 160 {
				s.Acc ^= 1
			}
		}
		runToEnd(t, peers, nil, nil, time.Minute)
		for i, p := range peers {
			var frames []rollback.Frame
			for _, e := range p.events {
				if e.Kind == rollback.EventDesyncDetected {
					frames = append(frames, e.Frame)
					if e.Addr != addrOf(1-i) || !slices.Equal(e.Types, []string{"Acc"}) {
						t.Errorf("peer %d: desync event %v", i, e)
					}
				}
			}
			if want := []rollback.Frame{150, 200, 250, 300}; !slices.Equal(frames, want) {
				t.Errorf("peer %d: desyncs at frames %v, want %v", i, frames, want)
			}
			if p.g.loads != 0 || p.g.saves != 7 { // frames 0, 50, ..., 300
				t.Errorf("peer %d: %d loads, %d saves; want 0 and 7", i, p.g.loads, p.g.saves)
			}
		}
	})
}

// TestDesyncNamesLongTypes: part names longer than a Parts message carries
// (wire.MaxNameLen, 64 bytes; Go type names with their package path often
// are) still name exactly the differing type, by its full name. Two long
// names sharing their first 64 bytes stay apart. Before, names were cut to
// 64 bytes on the wire and compared with the full local names, so every
// long name was reported twice (full and cut), differing or not.
func TestDesyncNamesLongTypes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 4, Default: transport.LinkConfig{Latency: 10 * time.Millisecond}})
		defer net.Close()
		prefix := "resource github.com/rewindgo/rewind/examples/boxgame/internal/sim."
		names := [2]string{prefix + "Position", prefix + "Accumulator"}
		peers := newMatch(t, net, 2, rollback.Config{DesyncInterval: 50, EndFrame: 100})
		for _, p := range peers {
			p.g.names = names
		}
		peers[1].g.corrupt = func(s *stubState) {
			if s.Frame == 40 {
				s.Acc ^= 1
			}
		}
		runToEnd(t, peers, nil, nil, time.Minute)
		for i, p := range peers {
			n := 0
			for _, e := range p.events {
				if e.Kind == rollback.EventDesyncDetected {
					n++
					if !slices.Equal(e.Types, []string{names[1]}) {
						t.Errorf("peer %d: frame %d names %q, want only %q", i, e.Frame, e.Types, names[1])
					}
				}
			}
			if n != 2 { // frames 50 and 100
				t.Errorf("peer %d: %d desync events, want 2", i, n)
			}
		}
	})
}
