package replicate_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/quant"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// QBody is a quantized body: a position on a 1/256 grid and a heading.
type QBody struct {
	Pos [3]float32
	Dir [2]float32
}

func qbodyCodec() *quant.Codec[QBody] {
	return quant.NewCodec(
		quant.Vec3Field(quant.Must(quant.NewFloat[float32](-128, 128, 1.0/256)), func(b *QBody) *[3]float32 { return &b.Pos }),
		quant.UnitVec2Field(quant.Must(quant.NewUnitVec2(10)), func(b *QBody) *[2]float32 { return &b.Dir }),
	)
}

// TestDeltasExactUnderChaos: with mutations sent as deltas against
// acknowledged baselines, every value a client receives for a tick is the
// server's (quantized) value of that tick exactly, under 15% loss,
// reordering, duplication and jitter both ways, with one client whose
// acknowledgements stop for 2 s (its baselines age out; what it gets then
// is absolute or a delta from what it acknowledged last) and a late
// joiner; at the end every client holds the server's state.
func TestDeltasExactUnderChaos(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			var with, without uint64
			synctest.Test(t, func(t *testing.T) { with = deltasExact(t, seed, false) })
			synctest.Test(t, func(t *testing.T) { without = deltasExact(t, seed, true) })
			// The same run with absolute values: deltas were in use.
			if 10*with > 8*without {
				t.Fatalf("with deltas clients got %d bytes, without %d", with, without)
			}
		})
	}
}

// deltasExact runs the scene and returns the bytes the clients received.
func deltasExact(t *testing.T, seed uint64, noDeltas bool) uint64 {
	codec := qbodyCodec()
	p := replicate.NewProtocol()
	if _, err := replicate.Component[QBody](p, replicate.WithOwnRule(), replicate.WithCodec(codec, "qbody/1")); err != nil {
		t.Fatal(err)
	}
	r := newMemRigProto(t, transport.MessageNetworkConfig{Seed: seed}, replicate.ServerConfig{NoDeltas: noDeltas}, testProto{p: p})
	defer r.close()
	bodies := ecs.Register[QBody](r.sw)
	rep := ecs.Register[replicate.Replicated](r.sw)
	rnd := rand.New(rand.NewPCG(seed, 9))
	var ents []ecs.Entity
	for k := range 60 {
		e := r.sw.Spawn()
		_ = rep.Set(e, replicate.Replicated{})
		b := QBody{Pos: [3]float32{float32(k), 0, 0}, Dir: [2]float32{1, 0}}
		codec.Quantize(&b)
		_ = bodies.Set(e, b)
		ents = append(ents, e)
	}
	// hist[e][tick] is the server's value of e after that tick.
	hist := map[ecs.Entity]map[tick.Tick]QBody{}
	record := func() {
		for _, e := range ents {
			if hist[e] == nil {
				hist[e] = map[tick.Tick]QBody{}
			}
			hist[e][r.srv.Tick()], _ = bodies.Get(e)
		}
	}
	valueAt := func(e ecs.Entity, tk tick.Tick) (QBody, bool) {
		for { // the value of the newest tick at or before tk
			if v, ok := hist[e][tk]; ok {
				return v, true
			}
			if tk == 0 {
				return QBody{}, false
			}
			tk--
		}
	}
	var bad []string
	checked := 0
	hook := func(i int) {
		c := r.clients[i]
		_ = replicate.SetReceiveHook(c, func(ce ecs.Entity, tk tick.Tick, v QBody) bool {
			se, _ := c.ServerEntity(ce)
			if want, ok := valueAt(se, tk); !ok || want != v {
				bad = append(bad, fmt.Sprintf("client %d: entity %v at tick %d: %+v, server %+v", i, se, tk, v, want))
			}
			checked++
			return false
		})
	}
	link := transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.15, Duplicate: 0.05, Reorder: 0.1, ReorderDelay: 30 * time.Millisecond}
	record()
	r.connect(3, link)
	for i := range 3 {
		hook(i)
	}
	for k := range 480 {
		switch k {
		case 60: // client 2 acknowledges nothing for 2 s
			r.net.SetLink(r.addrs[2], r.ln.Addr(), transport.LinkConfig{Loss: 1})
		case 180:
			r.net.SetLink(r.addrs[2], r.ln.Addr(), link)
		case 240: // a late joiner
			r.connect(1, link)
			hook(3)
		}
		for i, e := range ents {
			b := bodies.Ptr(e)
			if i%4 == 0 { // a quarter of them rest
				continue
			}
			a := float64(k)/40 + float64(i)
			b.Pos[0] += float32(math.Cos(a)) * 0.05
			b.Pos[1] = float32(math.Sin(a/3)) * 10
			if rnd.IntN(30) == 0 {
				b.Dir = [2]float32{float32(math.Cos(a)), float32(math.Sin(a))}
			}
			codec.Quantize(b) // the server simulates on what clients decode
		}
		r.srv.Send()
		record()
		for _, c := range r.clients {
			c.Update()
		}
		time.Sleep(memTick)
	}
	r.setLinks(transport.LinkConfig{Latency: 40 * time.Millisecond})
	for range 90 {
		r.step()
		record()
	}
	if len(bad) > 0 {
		t.Fatalf("%d of %d received values differ from the server's at their tick; first: %s", len(bad), checked, bad[0])
	}
	for i, c := range r.clients {
		cb := ecs.StoreOf[QBody](r.cws[i])
		for _, e := range ents {
			ce, ok := c.ClientEntity(e)
			got, _ := cb.Get(ce)
			if want, _ := bodies.Get(e); !ok || got != want {
				t.Fatalf("client %d not converged: entity %v %+v, server %+v", i, e, got, want)
			}
		}
	}
	var misses, in uint64
	for _, c := range r.clients {
		misses += c.Stats().DeltaMisses
		in += c.Stats().BytesIn
	}
	t.Logf("deltas %v: %d values checked; delta misses %d; %d B to the clients", !noDeltas, checked, misses, in)
	if checked < 10000 {
		t.Fatalf("only %d values checked", checked)
	}
	return in
}
