package snapshot_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/tick"
)

type dumpPos struct {
	X, Y float64
	Hit  bool
	Team int8
}

type dumpScore struct{ Points [2]int32 }

// dumpWorld is one side's world: three entities with positions, a score
// resource.
func dumpWorld(t testing.TB) (*ecs.World, *snapshot.Registry, []ecs.Entity) {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	if err := snapshot.Copy[dumpPos](reg); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.CopyResource[dumpScore](reg); err != nil {
		t.Fatal(err)
	}
	pos := ecs.Register[dumpPos](w)
	var es []ecs.Entity
	for i := range 3 {
		e := w.Spawn()
		if err := pos.Set(e, dumpPos{X: float64(i), Y: 1.5, Team: int8(-i)}); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	ecs.RegisterResource[dumpScore](w).Set(dumpScore{Points: [2]int32{3, -4}})
	return w, reg, es
}

// TestDumpDiff: one field of one entity corrupted on one side is reported
// as exactly that type, entity, field and the two values, also after the
// dumps travel through their encoding.
func TestDumpDiff(t *testing.T) {
	wa, ra, es := dumpWorld(t)
	wb, rb, _ := dumpWorld(t)
	_ = wa
	pos := ecs.Register[dumpPos](wb)
	p, _ := pos.Get(es[1])
	p.Y = 2.25
	_ = pos.Set(es[1], p)

	a, err := ra.Dump(120, snapshot.DumpOptions{Label: "peer 0"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rb.Dump(120, snapshot.DumpOptions{Label: "peer 1"})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := b.MarshalBinary()
	var b2 snapshot.Dump
	if err := b2.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	if re, _ := b2.MarshalBinary(); !bytes.Equal(re, enc) {
		t.Fatal("a decoded dump does not re-encode to the same bytes")
	}
	diffs, total := snapshot.DiffDumps(a, &b2, 0)
	if total != 1 || len(diffs) != 1 {
		t.Fatalf("%d diffs, want 1: %v", total, diffs)
	}
	want := snapshot.FieldDiff{Type: a.Types[1].Name, Entity: es[1], Field: ".Y", A: "1.5", B: "2.25"}
	if diffs[0] != want {
		t.Fatalf("diff %+v, want %+v", diffs[0], want)
	}
	if b2.Frame != 120 || b2.Label != "peer 1" {
		t.Fatalf("frame %d label %q", b2.Frame, b2.Label)
	}

	// A resource field, an entity present on one side, a signed field.
	ecs.RegisterResource[dumpScore](wb).Set(dumpScore{Points: [2]int32{3, -5}})
	_ = pos.Remove(es[2])
	p0, _ := pos.Get(es[0])
	p0.Team = -7
	_ = pos.Set(es[0], p0)
	b, _ = rb.Dump(120, snapshot.DumpOptions{})
	diffs, _ = snapshot.DiffDumps(a, b, 0)
	got := fmt.Sprint(diffs)
	for _, w := range []string{"entity " + es[0].String() + " .Team: 0 != -7", ".Y: 1.5 != 2.25", "entity " + es[2].String() + " : {.X:2 .Y:1.5 .Hit:false .Team:-2} != absent", "(resource) .Points[1]: -4 != -5"} {
		if !bytes.Contains([]byte(got), []byte(w)) {
			t.Errorf("diffs lack %q:\n%s", w, got)
		}
	}
	if len(diffs) != 4 {
		t.Errorf("%d diffs, want 4: %v", len(diffs), diffs)
	}
}

// TestDumpOptions: Types selects types, Entity maps (and drops) entities,
// MaxBytes bounds the dump.
func TestDumpOptions(t *testing.T) {
	_, reg, es := dumpWorld(t)
	name := "resource " + ecs.RegisterResource[dumpScore](reg.World()).Info().Name
	d, err := reg.Dump(1, snapshot.DumpOptions{Types: []string{name}})
	if err != nil || len(d.Types) != 1 || d.Types[0].Name != name || !d.Types[0].Resource {
		t.Fatalf("dump of %q: %+v, %v", name, d, err)
	}
	d, err = reg.Dump(1, snapshot.DumpOptions{Entity: func(e ecs.Entity) (ecs.Entity, bool) {
		return e + 100, e != es[0]
	}})
	if err != nil {
		t.Fatal(err)
	}
	vals := d.Types[1].Values
	if len(vals) != 2 || vals[0].Entity != es[1]+100 || vals[1].Entity != es[2]+100 {
		t.Fatalf("mapped values %+v", vals)
	}
	if _, err := reg.Dump(1, snapshot.DumpOptions{MaxBytes: 30}); !errors.Is(err, snapshot.ErrDumpTooLarge) {
		t.Fatalf("over MaxBytes: %v, want ErrDumpTooLarge", err)
	}
	if err := new(snapshot.Dump).UnmarshalBinary([]byte("RWDUMP\x02")); !errors.Is(err, snapshot.ErrDumpFormat) {
		t.Fatalf("another version: %v", err)
	}
}

// TestDumpsKeepsFirstAndLast: a re-captured frame keeps its first dump.
func TestDumpsKeepsFirstAndLast(t *testing.T) {
	w, reg, es := dumpWorld(t)
	ds := snapshot.NewDumps(reg, 4, snapshot.DumpOptions{})
	if err := ds.Capture(10); err != nil {
		t.Fatal(err)
	}
	pos := ecs.Register[dumpPos](w)
	_ = pos.Set(es[0], dumpPos{X: 9})
	if err := ds.Capture(10); err != nil {
		t.Fatal(err)
	}
	first, ok1 := ds.FirstAt(10)
	last, ok2 := ds.At(10)
	if !ok1 || !ok2 {
		t.Fatal("frame 10 not held")
	}
	if _, n := snapshot.DiffDumps(first, last, 0); n != 2 {
		t.Fatalf("%d diffs between first and last capture, want 2 (X and Y of one entity)", n)
	}
	_ = ds.Capture(14) // same slot: evicts 10
	if _, ok := ds.At(10); ok {
		t.Fatal("frame 10 still held after frame 14 took its slot")
	}
}

func FuzzDumpUnmarshal(f *testing.F) {
	_, reg, _ := dumpWorld(f)
	d, _ := reg.Dump(7, snapshot.DumpOptions{Label: "seed"})
	enc, _ := d.MarshalBinary()
	f.Add(enc)
	f.Add([]byte("RWDUMP\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d snapshot.Dump
		if err := d.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, snapshot.ErrDumpFormat) && !errors.Is(err, snapshot.ErrDumpTooLarge) {
				t.Fatalf("error %v is neither ErrDumpFormat nor ErrDumpTooLarge", err)
			}
			return
		}
		re, _ := d.MarshalBinary()
		if !bytes.Equal(re, b) {
			t.Fatalf("accepted bytes do not re-encode to themselves")
		}
		snapshot.DiffDumps(&d, &d, 10)
	})
}

// ExampleDiffDumps: the state of two peers at a desynced frame, compared
// down to the entity and field.
func ExampleDiffDumps() {
	type Position struct{ X, Y float64 }
	side := func(y float64) *snapshot.Dump {
		w := ecs.New()
		reg := snapshot.NewRegistry(w)
		_ = snapshot.Copy[Position](reg)
		pos := ecs.Register[Position](w)
		_ = pos.Set(w.Spawn(), Position{X: 1, Y: 2})
		_ = pos.Set(w.Spawn(), Position{X: 3, Y: y})
		d, _ := reg.Dump(600, snapshot.DumpOptions{Types: []string{pos.Info().Name}})
		return d
	}
	diffs, _ := snapshot.DiffDumps(side(4), side(4.5), 10)
	for _, d := range diffs {
		fmt.Println(d.Entity, d.Field, d.A, d.B)
	}
	// Output: 1v1 .Y 4 4.5
}

// BenchmarkDumpCapture: a Dumps capture of 1000 entities' positions (what
// rollback/runner does per checked frame with Config.Dumps), next to a
// ring save of the same world (the floor: a copy).
func BenchmarkDumpCapture(b *testing.B) {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	if err := snapshot.Copy[dumpPos](reg); err != nil {
		b.Fatal(err)
	}
	pos := ecs.Register[dumpPos](w)
	for i := range 1000 {
		_ = pos.Set(w.Spawn(), dumpPos{X: float64(i), Team: int8(i)})
	}
	b.Run("dumps", func(b *testing.B) {
		ds := snapshot.NewDumps(reg, 4, snapshot.DumpOptions{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := ds.Capture(tick.Tick(i % 4)); err != nil { // steady state: slots reused
				b.Fatal(err)
			}
		}
	})
	b.Run("ring-save", func(b *testing.B) {
		ring, _ := snapshot.NewRing(reg, 4)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := ring.Save(tick.Tick(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
