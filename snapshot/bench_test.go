package snapshot_test

import (
	"fmt"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/tick"
)

// benchWorld has n entities with three plain-data components: a 3xfloat64
// position, a 3xfloat64 velocity and an int32 health (52 bytes per entity).
type benchWorld struct {
	w    *ecs.World
	reg  *snapshot.Registry
	step *ecs.Query3[Pos, Vel, Health]
}

func newBenchWorld(b testing.TB, n int) *benchWorld {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	must(b, snapshot.Copy[Pos](reg))
	must(b, snapshot.Copy[Vel](reg))
	must(b, snapshot.Copy[Health](reg))
	pos, vel, hp := ecs.StoreOf[Pos](w), ecs.StoreOf[Vel](w), ecs.StoreOf[Health](w)
	for i := range n {
		e := w.Spawn()
		must(b, pos.Set(e, Pos{X: float64(i)}))
		must(b, vel.Set(e, Vel{X: 1, Y: 2, Z: 3}))
		must(b, hp.Set(e, Health(i)))
	}
	return &benchWorld{w: w, reg: reg, step: ecs.NewQuery3(pos.Write(), vel.Write(), hp.Write())}
}

// simulate writes every value of every component.
func (bw *benchWorld) simulate() {
	for bt := range bw.step.Batches() {
		for i := range bt.A {
			bt.A[i].X += bt.B[i].X
			bt.B[i].Y++
			bt.C[i]--
		}
	}
}

var sizes = []int{1000, 10000, 100000}

func BenchmarkSnapshot(b *testing.B) {
	const depth = 8
	for _, n := range sizes {
		b.Run(fmt.Sprintf("save/entities=%d", n), func(b *testing.B) {
			bw := newBenchWorld(b, n)
			ring, _ := snapshot.NewRing(bw.reg, depth)
			f := tick.Tick(0)
			for ; f < 2*depth; f++ { // warm the ring
				must(b, ring.Save(f))
			}
			b.SetBytes(int64(n * 52))
			b.ReportAllocs()
			for b.Loop() {
				if err := ring.Save(f); err != nil {
					b.Fatal(err)
				}
				f++
			}
			b.ReportMetric(float64(ring.Bytes()), "ring-bytes")
		})
		b.Run(fmt.Sprintf("load/entities=%d", n), func(b *testing.B) {
			// Two frames in which every value differs; each op loads one of
			// them, so every load restores (and compares) every value.
			bw := newBenchWorld(b, n)
			ring, _ := snapshot.NewRing(bw.reg, depth)
			must(b, ring.Save(0))
			bw.simulate()
			must(b, ring.Save(1))
			must(b, ring.Load(0))
			must(b, ring.Load(1))
			b.SetBytes(int64(n * 52))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := ring.Load(tick.Tick(i & 1)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("copyfloor/entities=%d", n), func(b *testing.B) {
			benchCopyFloor(b, n)
		})
	}
}

// benchCopyFloor is the floor of save and load: a raw copy of the same
// component bytes. The sources hold the bench world's values: memory that was
// never written is backed by the kernel's shared zero page, and copying from
// it reads one cached page instead of the component bytes (at 100k entities
// about twice as fast as copying real values, and varying with whether the
// heap happened to recycle written memory).
func benchCopyFloor(b *testing.B, n int) {
	sp, sv, sh := make([]Pos, n), make([]Vel, n), make([]Health, n)
	dp, dv, dh := make([]Pos, n), make([]Vel, n), make([]Health, n)
	for i := range n {
		sp[i], sv[i], sh[i] = Pos{X: float64(i)}, Vel{X: 1, Y: 2, Z: 3}, Health(i)
	}
	b.SetBytes(int64(n * 52))
	b.ReportAllocs()
	for b.Loop() {
		copy(dp, sp)
		copy(dv, sv)
		copy(dh, sh)
	}
}

func BenchmarkChecksum(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("entities=%d", n), func(b *testing.B) {
			bw := newBenchWorld(b, n)
			parts, sum := []snapshot.Part(nil), uint64(0)
			b.SetBytes(int64(n * 52))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if sum, parts, err = bw.reg.Checksum(parts); err != nil {
					b.Fatal(err)
				}
			}
			_ = sum
		})
		b.Run(fmt.Sprintf("copyfloor/entities=%d", n), func(b *testing.B) {
			benchCopyFloor(b, n)
		})
	}
}

// BenchmarkRingMemory reports the bytes a depth-8 ring holds for 10000
// entities, beside the component bytes it copies per frame.
func BenchmarkRingMemory(b *testing.B) {
	const n, depth = 10000, 8
	bw := newBenchWorld(b, n)
	ring, _ := snapshot.NewRing(bw.reg, depth)
	b.ReportAllocs()
	f := tick.Tick(0)
	for b.Loop() {
		must(b, ring.Save(f))
		bw.simulate()
		f++
	}
	b.ReportMetric(float64(ring.Bytes()), "ring-bytes")
	b.ReportMetric(float64(n*52), "component-bytes")
	b.ReportMetric(float64(ring.Bytes())/float64(n*52), "copies")
}

// BenchmarkEncode: the exact byte form of a saved frame (what a rejoining
// peer receives) and its load into another world with the same types.
func BenchmarkEncode(b *testing.B) {
	for _, n := range sizes[:2] {
		bw := newBenchWorld(b, n)
		ring, _ := snapshot.NewRing(bw.reg, 4)
		must(b, ring.Save(0))
		enc, err := ring.Encode(0, nil)
		must(b, err)
		b.Run(fmt.Sprintf("encode/entities=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			buf := enc[:0:0]
			for b.Loop() {
				buf, _ = ring.Encode(0, buf[:0])
			}
			b.ReportMetric(float64(len(buf)), "bytes/state")
		})
		b.Run(fmt.Sprintf("load/entities=%d", n), func(b *testing.B) {
			other := newBenchWorld(b, n/2)
			oring, _ := snapshot.NewRing(other.reg, 4)
			b.ReportAllocs()
			for b.Loop() {
				must(b, oring.LoadEncoded(1, enc))
			}
		})
	}
}
