package replicate_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// Fuzz targets of every decoder of network bytes: the client's (server
// messages, update parts), the server's (client messages) and LoadState.
// Their seeds cover every message kind (wire_test.go pins their bytes).
//
// These targets check robustness, not re-encoding: the messages they feed
// are applied to a world, not decoded to a value with an encoder. The
// message codecs with encoders are checked to re-encode accepted bytes to
// exactly themselves by FuzzWireRoundTrip, FuzzChecksumReport,
// FuzzChecksumVerdict, FuzzResync and FuzzResyncRequest. A saved state
// (LoadState) has no canonical re-encoding: saving the loaded world
// writes the entities the load spawned, not the saved ones, and their
// components in id order whatever order the input had; FuzzCheckpointState
// checks instead that a saved loaded state round-trips exactly.

// FuzzClientReceive feeds arbitrary server messages to a connected client.
func FuzzClientReceive(f *testing.F) {
	f.Add([]byte{12, 5, 0, 0, 0, 1, 3, 1, 1, 1, 0, 16, 0, 0, 0, 0, 0, 0, 240, 63, 0, 0, 0, 0, 0, 0, 0, 64, 0})
	f.Add([]byte{13, 9, 9, 1, 0, 1, 3, 1, 1, 1, 2, 4, 1, 0, 0, 0})
	f.Add([]byte{14, 1, 0, 7, 0, 0, 0})
	f.Add([]byte{16, 10, 2, 1, 2})                                 // a checksum verdict
	f.Add([]byte{17, 7, 2, 'h', 'i'})                              // a resync
	f.Add([]byte{17, 7, 0, 2, 3, 1, 0, 1, 1, 1})                   // a partial resync
	f.Add([]byte{17, 7, 0, 3, 2, 1, 0, 1, 0})                      // an RNG-only resync, entity gone
	f.Add([]byte{10, 1, 0})                                        // a second welcome
	f.Add([]byte{12, 6, 0, 1, 0, 1, 0, 0, 0})                      // a despawn
	f.Add([]byte{15, 29, 0, 12, 5, 0, 0, 0, 1, 3, 1, 1, 1, 0, 16}) // the first part of an update
	// Mutations of the harness's moves (absolute, then deltas of age 1),
	// and one of tick 6 whose delta's baseline is the client's tick 5.
	for _, m := range []string{
		"0d030101000193fd010000000000000000",
		"0d040202000193fb000000000000e03f",
		"0d050303000193d700000000000000",
		"0d060404000193d700000000000000",
		"0d0604040001931700000000000000", // a baseline older than the client's journal
	} {
		b, _ := hex.DecodeString(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := newProto(t)
		h := newHarness(t, tp, replicate.ServerConfig{})
		e := spawnRep(h.sw, Position{}, 1)
		c := h.connect(nil)
		h.exchange()
		h.exchange()
		for i := range 3 { // the client's journal holds ticks 3 to 5
			_ = ecs.StoreOf[Position](h.sw).Set(e, Position{X: float64(i), Y: 2})
			h.exchange()
		}
		h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, pipeMsg{ch: transport.Unreliable, data: b}, pipeMsg{ch: transport.ReliableOrdered, data: b})
		c.Update()
		_ = tp.notice.ReceiveFromServer(c)
		_ = tp.ordered.ReceiveFromServer(c)
	})
}

// FuzzServerReceive feeds arbitrary client messages to a server.
func FuzzServerReceive(f *testing.F) {
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 2, 0, 1})
	f.Add([]byte{2, 9, 3, 2}) // acks: 9, and 7 and 6 of the three before
	f.Add([]byte{3, 0, 1, 0, 0, 0})
	f.Add([]byte{4, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8}) // a checksum report
	f.Add([]byte{5, 2, 'h', 'i'})                                              // a resync request
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := newProto(t)
		h := newHarness(t, tp, replicate.ServerConfig{})
		spawnRep(h.sw, Position{}, 1)
		h.connect(nil)
		h.exchange()
		h.exchange()
		for i := 0; i < 3; i++ {
			h.srvEnds[0].inbox = append(h.srvEnds[0].inbox, pipeMsg{ch: transport.Channel(i), data: b})
		}
		h.exchange()
		_ = tp.chat.ReceiveFromClients(h.srv)
		_ = tp.target.ReceiveFromClients(h.srv)
	})
}

// FuzzUpdateParts feeds a connected client arbitrary update parts (the
// input cut into messages by its length bytes): no panic, and the client
// never holds more than MaxUpdateBytes of an incomplete update.
func FuzzUpdateParts(f *testing.F) {
	// An update spawning one entity with a Position, in two parts.
	upd := []byte{12, 5, 0, 0, 0, 1, 3, 1, 1, 1, 0, 16, 0, 0, 0, 0, 0, 0, 240, 63, 0, 0, 0, 0, 0, 0, 0, 64, 0}
	part := func(off, end int) []byte {
		p := []byte{byte(len(upd)), byte(off)}
		return append(p, upd[off:end]...)
	}
	two := append([]byte{byte(len(part(0, 10)))}, part(0, 10)...)
	two = append(two, byte(len(part(10, len(upd)))))
	two = append(two, part(10, len(upd))...)
	f.Add(two)
	f.Add([]byte{3, 200, 1, 0})           // an update longer than the cap
	f.Add([]byte{4, 50, 0, 12, 1, 3, 50}) // out of sequence
	const maxBytes = 256
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := newProto(t)
		h := newHarness(t, tp, replicate.ServerConfig{})
		c := h.connectWith(replicate.ClientConfig{MaxUpdateBytes: maxBytes})
		h.exchange()
		h.exchange()
		for len(b) > 0 {
			n := min(int(b[0]), len(b)-1)
			msg := append([]byte{15}, b[1:1+n]...)
			b = b[1+n:]
			h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, pipeMsg{ch: transport.ReliableOrdered, data: msg})
			c.Update()
			if n := replicate.UpdatePartBytes(c); n > maxBytes {
				t.Fatalf("client holds %d bytes of update parts, cap %d", n, maxBytes)
			}
		}
	})
}

func FuzzLoadState(f *testing.F) {
	tp := newProto(f)
	w := ecs.New()
	a := spawnRep(w, Position{1, 2}, 3)
	_ = ecs.StoreOf[Owner](w).Set(a, Owner{E: a})
	var buf bytes.Buffer
	_ = replicate.SaveState(&buf, w, tp.p)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = replicate.LoadState(bytes.NewReader(b), ecs.New(), tp.p)
	})
}

// FuzzClientResources feeds arbitrary updates to a connected client of a
// protocol with replicated resources (the resource section of kind 12):
// no panic, and a refused update applies no resource.
func FuzzClientResources(f *testing.F) {
	score := []byte{1, 0, 0, 0, 2, 0, 0, 0}
	f.Add(append([]byte{12, 100, 0, 0, 0, 0, 1, 0, 1}, score...))         // score inserted
	f.Add([]byte{12, 100, 0, 0, 0, 0, 2, 0, 0, 3, 0})                     // two removals
	f.Add(append([]byte{12, 100, 0, 0, 0, 0, 1, 2, 1, 1, 1}, 0, 0, 0, 0)) // a leader
	f.Add([]byte{12, 100, 0, 0, 0, 0, 1, 9, 1})                           // unknown id
	f.Fuzz(func(t *testing.T, b []byte) {
		rp := newResProto(t)
		h := newHarness(t, rp.testProto, replicate.ServerConfig{})
		c := h.connect(nil)
		h.exchange()
		h.exchange()
		h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, pipeMsg{ch: transport.ReliableOrdered, data: b})
		before := c.Stats().Malformed
		c.Update()
		if c.Stats().Malformed != before {
			for _, ok := range []bool{hasResource[Score](h.cws[0]), hasResource[Hidden](h.cws[0]), hasResource[Leader](h.cws[0])} {
				if ok {
					t.Fatal("a refused update applied a resource")
				}
			}
		}
	})
}

func hasResource[T any](w *ecs.World) bool {
	_, ok := ecs.GetResource[T](w)
	return ok
}
