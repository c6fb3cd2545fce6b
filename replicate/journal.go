package replicate

// The value journal: the encodings of delta-encodable component values of
// the last ticks (deltaWindow on the server, clientWindow on a client),
// so a delta's baseline can be found on both sides. The server records each value when it changes (one copy for all
// clients); a client records each value it receives, with the tick it
// came for. A baseline "the value at tick B" is, on both sides, the
// newest entry at or before B: the server's value at B, which the client
// received by the protocol's invariant (after the client acknowledged a
// send of tick B, it holds the server's values at B of every live
// component: each send carries every value changed since the last
// acknowledged one).

import (
	"encoding/binary"

	"github.com/rewindgo/rewind/tick"
)

const (
	// deltaWindow is the number of ticks the server's journal keeps;
	// clientWindow the client's, longer, for messages that come late.
	deltaWindow  = 64
	clientWindow = 96
	// deltaMaxAge is the oldest baseline the server uses, in ticks before
	// the tick being sent, and the oldest journal entry it takes for one
	// (a value unchanged since an older tick goes absolute): younger than
	// the window by a margin, so a client that has seen a few newer ticks
	// (reordered, or a message held for its update) still holds it.
	deltaMaxAge = deltaWindow - 8 // 56 ticks: about 1 s at 60 Hz
	// journalMaxBytes bounds each journal's memory (values and entries of
	// the window). A value that does not fit is not recorded, and its
	// key's earlier entries are forgotten: its next send is absolute.
	journalMaxBytes = 32 << 20
	// jentHeader is the size of an entry's link to the key's previous
	// entry: tick and offset.
	jentHeader = 8
)

// jref locates a journal entry: its tick and 1 + its offset in the
// tick's bucket (off 0: none).
type jref struct {
	tick tick.Tick
	off  uint32
}

// journal maps keys (entity slot or record, times the number of
// components, plus the component id) to chains of entries, newest first,
// each the encoding of the key's value at a tick. Entries live in one
// bucket per tick of the window; reusing a bucket for a newer tick drops
// its entries, and a chain ends at the first entry whose bucket holds
// another tick. Invariant: a key's chain is in decreasing tick order.
type journal struct {
	heads   []jref
	buckets []jbucket // one per tick of the window (its length)
	bytes   int       // the buckets' lengths in all
}

// newJournal returns a journal of a window of n ticks.
func newJournal(n int) journal { return journal{buckets: make([]jbucket, n)} }

type jbucket struct {
	tick tick.Tick
	used bool
	buf  []byte
}

// clear forgets key k's entries (its component was removed, or its entity
// left).
func (j *journal) clear(k int) {
	if k >= 0 && k < len(j.heads) {
		j.heads[k] = jref{}
	}
}

// clearRange forgets keys [k, k+n).
func (j *journal) clearRange(k, n int) {
	for i := k; i < k+n && i < len(j.heads); i++ {
		j.heads[i] = jref{}
	}
}

// bucket returns the bucket of tick t, emptied if it held an older tick;
// nil when it holds a newer one (t is too old to record).
func (j *journal) bucket(t tick.Tick) *jbucket {
	b := &j.buckets[int(uint32(t)%uint32(len(j.buckets)))]
	switch {
	case b.used && b.tick == t:
		return b
	case b.used && b.tick.After(t):
		return nil
	}
	j.bytes -= len(b.buf)
	if cap(b.buf) > 4<<20 && 4*len(b.buf) < cap(b.buf) {
		b.buf = nil // a burst (a joiner's whole world) is not kept for good
	}
	*b = jbucket{tick: t, used: true, buf: b.buf[:0]}
	return b
}

// entry returns the entry r refers to, and whether it is still held.
func (j *journal) entry(r jref) ([]byte, bool) {
	if r.off == 0 {
		return nil, false
	}
	b := &j.buckets[int(uint32(r.tick)%uint32(len(j.buckets)))]
	if !b.used || b.tick != r.tick || int(r.off)-1+jentHeader > len(b.buf) {
		return nil, false
	}
	return b.buf[r.off-1:], true
}

// record notes val (the component's encoding, of its fixed size) as key
// k's value at tick t. A value for a tick the key already has is not
// recorded twice; one older than the key's newest goes into its place in
// the chain.
func (j *journal) record(k int, t tick.Tick, val []byte) {
	if k >= len(j.heads) {
		j.heads = append(j.heads, make([]jref, k+1-len(j.heads))...)
	}
	b := j.bucket(t)
	if b == nil {
		// Older than the window: no baseline is that old, and every
		// entry of the key is younger or gone.
		return
	}
	if j.bytes+jentHeader+len(val) > journalMaxBytes {
		// Not recorded: an older entry must not pass for this value, so
		// the key has no baseline until its next value.
		j.heads[k] = jref{}
		return
	}
	// Find the link to patch: the head, or the prev of the newest entry
	// newer than t.
	var linkBytes []byte // the newest entry newer than t, whose link to patch
	next := j.heads[k]
	for {
		e, ok := j.entry(next)
		if !ok {
			next = jref{}
			break
		}
		if next.tick == t {
			return // already recorded
		}
		if t.After(next.tick) {
			break
		}
		linkBytes = e
		next = readJref(e)
	}
	off := len(b.buf)
	b.buf = appendJref(b.buf, next)
	b.buf = append(b.buf, val...)
	j.bytes += len(b.buf) - off
	r := jref{tick: t, off: uint32(off) + 1}
	if linkBytes != nil {
		writeJref(linkBytes, r)
	} else {
		j.heads[k] = r
	}
}

// at returns key k's value at tick b: its newest entry at or before b, n
// bytes long. ok is false when the journal does not hold it.
func (j *journal) at(k int, b tick.Tick, n int) (val []byte, ok bool) {
	val, _, ok = j.atTick(k, b, n)
	return val, ok
}

// atTick is at, with the tick of the entry found.
func (j *journal) atTick(k int, b tick.Tick, n int) (val []byte, et tick.Tick, ok bool) {
	if k >= len(j.heads) {
		return nil, 0, false
	}
	r := j.heads[k]
	for {
		e, ok := j.entry(r)
		if !ok || len(e) < jentHeader+n {
			return nil, 0, false
		}
		if !r.tick.After(b) {
			return e[jentHeader : jentHeader+n], r.tick, true
		}
		r = readJref(e)
	}
}

// newest returns the tick of key k's newest entry.
func (j *journal) newest(k int) (tick.Tick, bool) {
	if k >= len(j.heads) {
		return 0, false
	}
	r := j.heads[k]
	if _, ok := j.entry(r); !ok {
		return 0, false
	}
	return r.tick, true
}

func appendJref(dst []byte, r jref) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(r.tick))
	return binary.LittleEndian.AppendUint32(dst, r.off)
}

func readJref(e []byte) jref {
	return jref{tick: tick.Tick(binary.LittleEndian.Uint32(e)), off: binary.LittleEndian.Uint32(e[4:])}
}

func writeJref(e []byte, r jref) {
	binary.LittleEndian.PutUint32(e, uint32(r.tick))
	binary.LittleEndian.PutUint32(e[4:], r.off)
}
