package replicate_test

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/transport"
)

// Fuzz targets of the decoders checkpoints and desync checks add: the
// saved state form a checkpoint is sent and saved in (LoadState), and the
// client's ChecksumReport as the server handles it.

// FuzzCheckpointState feeds LoadState arbitrary bytes, seeded with real
// checkpoints (entity references, RNG streams, resources, a component of
// variable length): no panic; a refused state leaves the world empty
// (no entity, no resource); an accepted one round-trips (saving the loaded
// world and loading that again gives the same bytes: a saved state has no
// canonical encoding to compare the input with, see fuzz_test.go); and
// the memory a load allocates stays within a bound of the input's size.
func FuzzCheckpointState(f *testing.F) {
	p := labelProto(f)
	for _, n := range []int{0, 1, 3} {
		w, ents := resWorld(max(n, 1), uint64(n))
		if n == 0 {
			_ = w.Despawn(ents[0])
		}
		if n == 3 {
			_ = ecs.Register[Label](w).Set(ents[2], Label("rook"))
		}
		cp, err := replicate.NewCheckpoints(w, p, replicate.CheckpointConfig{}).Capture(1)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(cp.AppendState(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w := ecs.New()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		m, err := replicate.LoadState(bytes.NewReader(b), w, p)
		runtime.ReadMemStats(&ms)
		if alloc := ms.TotalAlloc - before; alloc > 256*uint64(len(b))+1<<20 {
			t.Fatalf("loading %d bytes allocated %d", len(b), alloc)
		}
		if err != nil {
			if !errors.Is(err, replicate.ErrMalformed) && !errors.Is(err, replicate.ErrProtocolMismatch) {
				t.Fatalf("error %v matches neither ErrMalformed nor ErrProtocolMismatch", err)
			}
			_, score := ecs.GetResource[Score](w)
			_, stream := ecs.GetResource[rng.Rand](w)
			if w.Len() != 0 || score || stream {
				t.Fatalf("refused state (%v) left %d entities, resources %v %v", err, w.Len(), score, stream)
			}
			return
		}
		if len(m) != w.Len() {
			t.Fatalf("%d entities mapped, world has %d", len(m), w.Len())
		}
		var s2, s3 bytes.Buffer
		_ = replicate.SaveState(&s2, w, p)
		w3 := ecs.New()
		if _, err := replicate.LoadState(bytes.NewReader(s2.Bytes()), w3, p); err != nil {
			t.Fatalf("a saved loaded state is refused: %v", err)
		}
		_ = replicate.SaveState(&s3, w3, p)
		if !bytes.Equal(s2.Bytes(), s3.Bytes()) {
			t.Fatalf("round trip differs:\n% x\n% x", s2.Bytes(), s3.Bytes())
		}
	})
}

// FuzzServerChecksumReport feeds a server that checks reports
// (ChecksumInterval 1, so it holds its checksum of every recent tick)
// arbitrary ChecksumReport messages from a connected client: no panic,
// each report counted exactly once (compared, not compared, or a
// violation when malformed), a desync only for a compared report, and the
// client stays connected.
func FuzzServerChecksumReport(f *testing.F) {
	// kind 4, tick, sum (8 bytes), part count, then (id, sum) pairs.
	f.Add([]byte{4, 2, 1, 2, 3, 4, 5, 6, 7, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{4, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0}) // a tick the server does not hold
	f.Add([]byte{4, 200, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 129, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := newProto(t)
		h := newHarness(t, tp, replicate.ServerConfig{ChecksumInterval: 1})
		spawnRep(h.sw, Position{X: 1}, 1)
		c := h.connect(nil)
		h.exchange()
		h.exchange()
		h.exchange()
		before, err := h.srv.Stats(c.ID())
		if err != nil {
			t.Fatal(err)
		}
		h.srvEnds[0].inbox = append(h.srvEnds[0].inbox, pipeMsg{ch: transport.ReliableOrdered, data: b})
		h.srv.Receive()
		after, err := h.srv.Stats(c.ID())
		if err != nil {
			t.Fatalf("client gone after one report: %v", err)
		}
		if len(b) == 0 || b[0] != 4 {
			return // another message kind: FuzzServerReceive's business
		}
		checked := after.ChecksumsChecked - before.ChecksumsChecked
		unchecked := after.ChecksumsUnchecked - before.ChecksumsUnchecked
		violations := after.Violations - before.Violations
		if checked+unchecked+violations != 1 || after.Desyncs-before.Desyncs > checked {
			t.Fatalf("report % x: checked %d, unchecked %d, violations %d, desyncs %d", b, checked, unchecked, violations, after.Desyncs-before.Desyncs)
		}
	})
}
