package rollback_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// TestDesyncDumpExchange: with DesyncDumpBytes, the first desync with a
// peer is followed by one EventDesyncDump on each side that carries this
// peer's dump and the other's, byte for byte, over links with 20% loss,
// duplication and reordering; the dumps (40 kB, 36 pieces) are asked for
// with the frame and the differing types. A dump over the bound is not
// sent: the peer's event then has no RemoteDump.
func TestDesyncDumpExchange(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit int
	}{{"within the bound", 64 << 10}, {"over the bound", 20 << 10}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 9, Default: transport.LinkConfig{
					Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Duplicate: 0.1, Reorder: 0.1}})
				defer net.Close()
				peers := newMatch(t, net, 2, rollback.Config{DesyncInterval: 50, EndFrame: 300, DesyncDumpBytes: c.limit})
				dump := func(i int, f rollback.Frame) []byte {
					return bytes.Repeat([]byte(fmt.Sprintf("peer %d frame %d;", i, f)), 40<<10)[:40<<10]
				}
				asked := make([][]string, 2)
				for i, p := range peers {
					p.s.SetDumpSource(func(f rollback.Frame, types []string) []byte {
						asked[i] = append(asked[i], fmt.Sprint(f, types))
						return dump(i, f)
					})
				}
				peers[1].g.corrupt = func(s *stubState) {
					if s.Frame == 120 {
						s.Acc ^= 1
					}
				}
				runToEnd(t, peers, nil, nil, 2*time.Minute)
				for i, p := range peers {
					var evs []rollback.Event
					for _, e := range p.events {
						if e.Kind == rollback.EventDesyncDump {
							evs = append(evs, e)
						}
					}
					if len(evs) != 1 || !slices.Equal(asked[i], []string{"150 [Acc]"}) {
						t.Fatalf("peer %d: %d dump events, dumps asked for %v; want 1 and [150 [Acc]]", i, len(evs), asked[i])
					}
					e := evs[0]
					if e.Frame != 150 || !slices.Equal(e.Types, []string{"Acc"}) || !bytes.Equal(e.LocalDump, dump(i, 150)) {
						t.Fatalf("peer %d: event %v", i, e)
					}
					wantRemote := dump(1-i, 150)
					if c.limit < len(wantRemote) {
						wantRemote = nil
					}
					if !bytes.Equal(e.RemoteDump, wantRemote) {
						t.Fatalf("peer %d: remote dump of %d bytes, want %d", i, len(e.RemoteDump), len(wantRemote))
					}
				}
			})
		})
	}
}
