package replicate

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
)

// packFields lays out vals in fields of the given widths, as a codec with
// that FieldLayout encodes them.
func packFields(widths []int, vals []uint64) []byte {
	w := bin.NewBitWriter(nil)
	for i, fw := range widths {
		w.WriteBits(vals[i], fw)
	}
	return w.Finish()
}

// A field delta rebuilds exactly the encoding it was made from, for every
// width (the exponential-Golomb form up to 24 bits, the length form
// above), and an unchanged field costs one bit.
func TestFieldDeltaRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	widths := []int{1, 2, 3, 7, 8, 9, 16, 17, 24, 25, 32, 33, 63, 64}
	for round := range 2000 {
		base := make([]uint64, len(widths))
		cur := make([]uint64, len(widths))
		for i, fw := range widths {
			base[i] = rnd.Uint64() & widthMask(fw)
			switch round % 4 {
			case 0: // unchanged
				cur[i] = base[i]
			case 1: // a small move either way
				cur[i] = (base[i] + uint64(rnd.IntN(9)-4)) & widthMask(fw)
			case 2: // anything
				cur[i] = rnd.Uint64() & widthMask(fw)
			default: // the extremes of the difference
				cur[i] = (base[i] + widthMask(fw)/2 + uint64(rnd.IntN(3))) & widthMask(fw)
			}
		}
		b, c := packFields(widths, base), packFields(widths, cur)
		w := bin.NewBitWriter(nil)
		appendFieldDelta(&w, widths, b, c)
		n := w.Len()
		d := w.Finish()
		if round%4 == 0 && n != len(widths) {
			t.Fatalf("an unchanged value takes %d bits, want %d", n, len(widths))
		}
		r := bin.NewBitReader(d)
		got := readFieldDelta(&r, widths, b, nil)
		if err := r.End(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !bytes.Equal(got, c) {
			t.Fatalf("round %d: rebuilt %x, want %x", round, got, c)
		}
	}
}

// The costs the layout's choice of forms gives: a quantized code moved by
// a few steps takes a few bits; a float moved a little its low bits.
func TestFieldDeltaCosts(t *testing.T) {
	cost := func(widths []int, base, cur []uint64) int {
		w := bin.NewBitWriter(nil)
		appendFieldDelta(&w, widths, packFields(widths, base), packFields(widths, cur))
		return w.Len()
	}
	if n := cost([]int{17}, []uint64{1000}, []uint64{1005}); n > 6 {
		t.Errorf("a 17-bit code moved by 5: %d bits", n)
	}
	if n := cost([]int{9}, []uint64{100}, []uint64{88}); n > 8 {
		t.Errorf("a 9-bit code moved by -12: %d bits", n)
	}
	f0, f1 := math.Float32bits(3.25), math.Float32bits(3.26)
	if n := cost([]int{32}, []uint64{uint64(f0)}, []uint64{uint64(f1)}); n > 1+5+16 {
		t.Errorf("a float32 moved by 0.01: %d bits", n)
	}
}

// FuzzFieldDelta: any bits either fail, or rebuild a value whose delta
// from the same base is exactly the bits read (one form per delta), and
// nothing panics or allocates without bound.
func FuzzFieldDelta(f *testing.F) {
	widths := []int{2, 9, 9, 9, 17, 32, 64}
	base := packFields(widths, []uint64{1, 200, 300, 400, 70000, 0x40500000, 1 << 62})
	w := bin.NewBitWriter(nil)
	appendFieldDelta(&w, widths, base, packFields(widths, []uint64{2, 210, 300, 390, 70005, 0x40500001, 1<<62 + 9}))
	f.Add(w.Finish())
	f.Add([]byte{0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, d []byte) {
		r := bin.NewBitReader(d)
		got := readFieldDelta(&r, widths, base, nil)
		if r.End() != nil {
			return
		}
		if len(got) != len(base) {
			t.Fatalf("rebuilt %d bytes from a base of %d", len(got), len(base))
		}
		w := bin.NewBitWriter(nil)
		appendFieldDelta(&w, widths, base, got)
		if again := w.Finish(); !bytes.Equal(again, d) {
			t.Fatalf("accepted delta %x re-encodes to %x", d, again)
		}
	})
}

// The journal's baseline of a key at tick B is its newest value at or
// before B; values out of order take their place; a value older than
// the window is not kept; a recycled tick's values are gone; clear
// forgets a key.
func TestJournal(t *testing.T) {
	j := newJournal(8)
	v := func(x byte) []byte { return []byte{x, x} }
	at := func(k int, b tick.Tick) (byte, bool) {
		val, ok := j.at(k, b, 2)
		if !ok {
			return 0, false
		}
		return val[0], true
	}
	j.record(3, 10, v(10))
	j.record(3, 14, v(14))
	j.record(3, 12, v(12)) // late: between the two
	j.record(3, 12, v(99)) // a tick recorded already is kept as it was
	for _, c := range []struct {
		b    tick.Tick
		want byte
		ok   bool
	}{{9, 0, false}, {10, 10, true}, {11, 10, true}, {12, 12, true}, {13, 12, true}, {14, 14, true}, {20, 14, true}} {
		if got, ok := at(3, c.b); got != c.want || ok != c.ok {
			t.Errorf("at %d: %d %v, want %d %v", c.b, got, ok, c.want, c.ok)
		}
	}
	if _, ok := at(4, 14); ok {
		t.Error("a key never recorded has a baseline")
	}
	j.record(5, 18, v(18)) // tick 18 takes tick 10's bucket
	if got, ok := at(3, 11); ok {
		t.Errorf("tick 10's value still there after its bucket went to tick 18: %d", got)
	}
	if got, ok := at(3, 13); !ok || got != 12 {
		t.Errorf("at 13 after recycling tick 10: %d %v", got, ok)
	}
	j.record(6, 2, v(2)) // older than the window: tick 2's bucket holds tick 18
	if _, ok := at(6, 2); ok {
		t.Error("a value older than the window was recorded")
	}
	j.clear(3)
	if _, ok := at(3, 20); ok {
		t.Error("a cleared key has a baseline")
	}
	if _, ok := at(5, 18); !ok {
		t.Error("clearing one key cleared another")
	}
}

// The journal's memory is bounded: values beyond journalMaxBytes are not
// kept, and their keys have no baseline (an older value must not pass
// for theirs).
func TestJournalBound(t *testing.T) {
	j := newJournal(deltaWindow)
	big := make([]byte, 1<<20)
	k := 0
	for ; j.bytes+len(big)+jentHeader <= journalMaxBytes; k++ {
		j.record(k, 5, big)
	}
	j.record(0, 6, big) // over the bound: key 0 loses its baseline
	if _, ok := j.at(0, 6, len(big)); ok {
		t.Fatal("a key whose newest value was not kept still has a baseline")
	}
	if j.bytes > journalMaxBytes {
		t.Fatalf("journal holds %d bytes, bound %d", j.bytes, journalMaxBytes)
	}
}
