package snapshot_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/tick"
)

// Flags has a bool and padding: its canonical form is not its memory.
type Flags struct {
	On  bool
	Lvl int16
	N   int
}

// encGame is a world of encodable types only: copy, codec, resources.
type encGame struct {
	w     *ecs.World
	reg   *snapshot.Registry
	ring  *snapshot.Ring
	pos   *ecs.Store[Pos]
	hp    *ecs.Store[Health]
	tgt   *ecs.Store[Target]
	flags *ecs.Store[Flags]
	name  *ecs.Store[Name]
	score *ecs.Resource[Score]
	rand  *ecs.Resource[rng.Rand]
}

func newEncGame(t testing.TB) *encGame {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	must(t, snapshot.Copy[Pos](reg))
	must(t, snapshot.Copy[Health](reg))
	must(t, snapshot.Copy[Target](reg))
	must(t, snapshot.Copy[Flags](reg))
	must(t, snapshot.Codec[Name](reg))
	must(t, snapshot.CopyResource[Score](reg))
	must(t, snapshot.CopyResource[rng.Rand](reg))
	ring, err := snapshot.NewRing(reg, 8)
	must(t, err)
	g := &encGame{w: w, reg: reg, ring: ring,
		pos: ecs.StoreOf[Pos](w), hp: ecs.StoreOf[Health](w), tgt: ecs.StoreOf[Target](w),
		flags: ecs.StoreOf[Flags](w), name: ecs.StoreOf[Name](w),
		score: ecs.ResourceOf[Score](w), rand: ecs.ResourceOf[rng.Rand](w)}
	g.rand.Set(rng.NewSeed(7))
	return g
}

// dump renders the whole state, dense order and allocator included.
func (g *encGame) dump() string {
	var b strings.Builder
	st := g.w.EntityState()
	fmt.Fprintf(&b, "slots=%v free=%v\n", st.Slots, st.Free)
	dumpStore(&b, g.pos)
	dumpStore(&b, g.hp)
	dumpStore(&b, g.tgt)
	dumpStore(&b, g.flags)
	dumpStore(&b, g.name)
	dumpStore(&b, g.w.HierarchyStore())
	v, ok := g.score.Get()
	fmt.Fprintf(&b, "score %v %+v\n", ok, v)
	if r, ok := g.rand.Get(); ok {
		fmt.Fprintf(&b, "rng %d %d\n", r.Uint64(), r.Uint64())
	}
	return b.String()
}

func (g *encGame) checksum(t testing.TB) uint64 {
	sum, _, err := g.reg.Checksum(nil)
	must(t, err)
	return sum
}

// step applies random operations of every kind, drawn from r.
func (g *encGame) step(t testing.TB, r *rand.Rand) {
	for range 1 + r.IntN(5) {
		alive := g.alive()
		pick := func() ecs.Entity {
			if len(alive) == 0 {
				return g.w.Spawn()
			}
			return alive[r.IntN(len(alive))]
		}
		switch r.IntN(10) {
		case 0, 1:
			e := g.w.Spawn()
			must(t, g.pos.Set(e, Pos{X: float64(r.IntN(100)) / 3}))
			if r.IntN(3) == 0 {
				must(t, g.name.Set(e, Name{S: fmt.Sprint("n", r.IntN(99))}))
			}
		case 2:
			must(t, g.w.DespawnRecursive(pick()))
		case 3:
			must(t, g.hp.Set(pick(), Health(r.IntN(100))))
		case 4:
			must(t, g.tgt.Set(pick(), Target{E: pick()}))
		case 5:
			if err := g.w.SetParent(pick(), pick()); err != nil && !errors.Is(err, ecs.ErrCycle) {
				t.Fatal(err)
			}
		case 6:
			must(t, g.flags.Set(pick(), Flags{On: r.IntN(2) == 0, Lvl: int16(r.IntN(9) - 4), N: r.IntN(1000)}))
		case 7:
			if g.score.Present() {
				g.score.Remove()
			} else {
				g.score.Set(Score{A: int64(r.IntN(50)), B: -1})
			}
		case 8:
			if p := g.rand.Ptr(); p != nil {
				_ = p.Uint64()
			}
		case 9:
			must(t, g.hp.Remove(pick()))
		}
	}
}

func (g *encGame) alive() []ecs.Entity {
	var out []ecs.Entity
	for e := range g.w.Entities() {
		out = append(out, e)
	}
	return out
}

// TestEncodeLoadsExactState: a frame encoded in one world and loaded into
// another (which holds a different state) gives the same state: the same
// entities in the same dense orders, the same free list, the same
// checksum, and the two worlds stay equal when they play on.
func TestEncodeLoadsExactState(t *testing.T) {
	for seed := range uint64(20) {
		a, b := newEncGame(t), newEncGame(t)
		ra, rb := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2))
		for f := range tick.Tick(40) {
			a.step(t, ra)
			b.step(t, rb) // b has a life of its own before loading
			must(t, a.ring.Save(f))
			if f%7 != 6 {
				continue
			}
			enc, err := a.ring.Encode(f, nil)
			must(t, err)
			must(t, b.ring.LoadEncoded(f, enc))
			if da, db := a.dump(), b.dump(); da != db {
				t.Fatalf("seed %d frame %d: loaded state differs\nencoded:\n%s\nloaded:\n%s", seed, f, da, db)
			}
			if sa, sb := a.checksum(t), b.checksum(t); sa != sb {
				t.Fatalf("seed %d frame %d: checksum %#x, loaded %#x", seed, f, sa, sb)
			}
			again, err := b.ring.Encode(f, nil)
			must(t, err)
			if !bytes.Equal(enc, again) {
				t.Fatalf("seed %d frame %d: re-encoding differs", seed, f)
			}
			// Both play on with the same operations: same spawns, same state.
			rb = rand.New(rand.NewPCG(seed, uint64(f)))
			rc := rand.New(rand.NewPCG(seed, uint64(f)))
			for range 3 {
				a.step(t, rc)
				b.step(t, rb)
			}
			if da, db := a.dump(), b.dump(); da != db {
				t.Fatalf("seed %d frame %d: states differ after playing on\n%s\n%s", seed, f, da, db)
			}
			// The loaded frame is held: b loads it again.
			must(t, b.ring.Load(f))
			must(t, a.ring.Load(f))
			if a.checksum(t) != b.checksum(t) {
				t.Fatalf("seed %d frame %d: Load of the decoded frame differs", seed, f)
			}
			rb = rand.New(rand.NewPCG(seed, 3+uint64(f)))
		}
	}
}

func TestEncodeRefusesCloneTypes(t *testing.T) {
	g := newGame(t) // registers Inventory and Log with Clone
	ring, err := snapshot.NewRing(g.reg, 4)
	must(t, err)
	must(t, ring.Save(0))
	if _, err := ring.Encode(0, nil); !errors.Is(err, snapshot.ErrNotEncodable) {
		t.Fatalf("Encode: %v, want ErrNotEncodable", err)
	}
	if err := g.reg.Encodable(); !errors.Is(err, snapshot.ErrNotEncodable) || !strings.Contains(err.Error(), "Inventory") {
		t.Fatalf("Encodable: %v", err)
	}
	if err := ring.LoadEncoded(0, []byte("RWSTATE\x01")); !errors.Is(err, snapshot.ErrNotEncodable) {
		t.Fatalf("LoadEncoded: %v, want ErrNotEncodable", err)
	}
	e := newEncGame(t)
	if err := e.reg.Encodable(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ring.Encode(3, nil); !errors.Is(err, snapshot.ErrFrameNotHeld) {
		t.Fatalf("Encode of a frame not held: %v", err)
	}
}

// goldenGame is a small fixed state.
func goldenGame(t testing.TB) *encGame {
	g := newEncGame(t)
	for i := range 4 {
		e := g.w.Spawn()
		must(t, g.pos.Set(e, Pos{X: float64(i), Y: 0.5}))
		if i%2 == 0 {
			must(t, g.name.Set(e, Name{S: "u"}))
			must(t, g.flags.Set(e, Flags{On: true, Lvl: -2, N: i}))
		}
	}
	must(t, g.w.Despawn(ecs.NewEntity(1, 1)))
	must(t, g.tgt.Set(ecs.NewEntity(3, 1), Target{E: ecs.NewEntity(0, 1)}))
	must(t, g.w.SetParent(ecs.NewEntity(2, 1), ecs.NewEntity(0, 1)))
	g.score.Set(Score{A: 3, B: -4})
	g.rand.Set(rng.NewSeed(1))
	must(t, g.ring.Save(5))
	return g
}

// TestEncodeGolden pins the encoding: a change of format shows here (and
// must bump the version).
func TestEncodeGolden(t *testing.T) {
	g := goldenGame(t)
	enc, err := g.ring.Encode(5, nil)
	must(t, err)
	got := hex.EncodeToString(enc)
	if got != goldenState {
		t.Fatalf("encoding changed:\n got %s\nwant %s", got, goldenState)
	}
	b := newEncGame(t)
	raw, _ := hex.DecodeString(goldenState)
	must(t, b.ring.LoadEncoded(5, raw))
	if g.dump() != b.dump() || g.checksum(t) != b.checksum(t) {
		t.Fatal("golden state does not load to the same state")
	}
}

// TestLoadEncodedRefusesMalformed: every prefix and a set of corruptions
// of a valid encoding fail with ErrStateFormat, and leave the World as it
// was.
func TestLoadEncodedRefusesMalformed(t *testing.T) {
	g := goldenGame(t)
	enc, err := g.ring.Encode(5, nil)
	must(t, err)
	b := newEncGame(t)
	b.step(t, rand.New(rand.NewPCG(1, 1)))
	before, sum := b.dump(), b.checksum(t)
	check := func(what string, bad []byte) {
		t.Helper()
		err := b.ring.LoadEncoded(9, bad)
		if !errors.Is(err, snapshot.ErrStateFormat) {
			t.Fatalf("%s: %v, want ErrStateFormat", what, err)
		}
		if b.dump() != before || b.checksum(t) != sum {
			t.Fatalf("%s: the world changed", what)
		}
		if b.ring.Held(9) {
			t.Fatalf("%s: frame held", what)
		}
	}
	for n := range len(enc) {
		check(fmt.Sprint("prefix ", n), enc[:n])
	}
	check("trailing byte", append(bytes.Clone(enc), 0))
	check("too large", make([]byte, snapshot.MaxEncodedBytes+1))
	// Corruptions at known offsets: header "RWSTATE" 1, then 4 slots.
	slots := len("RWSTATE") + 1 + 1
	mod := func(what string, i int, v byte) {
		c := bytes.Clone(enc)
		c[i] = v
		check(what, c)
	}
	mod("version", 7, 2)
	mod("slot 0 dead, still listed", slots, 2) // gen 1, not alive
	mod("slot 0 generation 0", slots, 1)
	mod("free list names a live slot", slots+5, 0) // the free entry: slot 1 -> 0
	mod("type count", slots+6, 99)
}

// FuzzLoadEncoded: arbitrary bytes never panic; bytes that load re-encode
// to themselves (the encoding is canonical) and give a state whose
// checksum is stable.
func FuzzLoadEncoded(f *testing.F) {
	g := goldenGame(f)
	enc, err := g.ring.Encode(5, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	a := newEncGame(f)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range tick.Tick(10) {
		a.step(f, r)
		must(f, a.ring.Save(i))
	}
	enc2, err := a.ring.Encode(9, nil)
	must(f, err)
	f.Add(enc2)
	f.Add([]byte("RWSTATE\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := newEncGame(t)
		if err := b.ring.LoadEncoded(2, data); err != nil {
			if !errors.Is(err, snapshot.ErrStateFormat) && !errors.Is(err, snapshot.ErrDecode) {
				t.Fatalf("error %v is neither ErrStateFormat nor ErrDecode", err)
			}
			return
		}
		again, err := b.ring.Encode(2, nil)
		must(t, err)
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n%x\n%x", data, again)
		}
		must(t, b.ring.Save(3))
		c := newEncGame(t)
		must(t, c.ring.LoadEncoded(2, again))
		if b.checksum(t) != c.checksum(t) {
			t.Fatal("two loads of the same bytes differ")
		}
	})
}

// goldenState is goldenGame's frame 5 encoded.
const goldenState = "52575354415445010403040303010108286769746875622e636f6d2f726577696e64676f2f726577696e642f6563732e4869657261726368790100028080808010828080801000000000000000000200000001000000020000000100000000000000000000000000000000000000000000000100000000000000000000000000000000000000000000000000000000000000000000002c6769746875622e636f6d2f726577696e64676f2f726577696e642f736e617073686f745f746573742e506f730100038080808010838080801082808080100000000000000000000000000000e03f00000000000000000000000000000840000000000000e03f00000000000000000000000000000040000000000000e03f00000000000000002f6769746875622e636f6d2f726577696e64676f2f726577696e642f736e617073686f745f746573742e4865616c74680100002f6769746875622e636f6d2f726577696e64676f2f726577696e642f736e617073686f745f746573742e546172676574010001838080801000000000010000002e6769746875622e636f6d2f726577696e64676f2f726577696e642f736e617073686f745f746573742e466c6167730100028080808010828080801001feff000000000000000001feff02000000000000002d6769746875622e636f6d2f726577696e64676f2f726577696e642f736e617073686f745f746573742e4e616d650200028080808010828080801001750175377265736f75726365206769746875622e636f6d2f726577696e64676f2f726577696e642f736e617073686f745f746573742e53636f72650101010300000000000000fcffffffffffffff2c7265736f75726365206769746875622e636f6d2f726577696e64676f2f726577696e642f726e672e52616e64010101c15c0289ec2d0a9167ec8e65a18debbe"
