package input

// Inputs: the client's inputs by tick, sent unreliably with redundancy; the
// server's input buffer per client; forwarding to the other clients.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/internal/canon"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Config configures the input messages of a game input type.
type Config struct {
	// Redundancy is how many of the newest ticks' inputs each message
	// carries (K), at least. Default 3: at 20% independent loss an input
	// is lost only if 3 messages in a row are (0.8%), and 3 inputs of a
	// few bytes cost little. At most MaxRedundancy. A predict.ClientFrame raises
	// it with the loss its input reports measure (ticksync.Sync.Redundancy);
	// an Sender used alone sends K.
	Redundancy int
	// Window is how many ticks of inputs are kept (client: for
	// re-simulation; server: ahead of and behind the simulated tick;
	// remote: per player). Default 64.
	Window int
	// MaxInputSize bounds one encoded input in bytes. Default 64, at most
	// 127 (the length is one byte on the wire).
	MaxInputSize int
	// ReportInterval is how often, in server ticks, the server sends each
	// client an Report (Buffer.SendReports): when its input
	// messages arrived and which were lost. The client's tick sync steers
	// by them. A missing or late input makes the next tick's report go at
	// once. Default 4 (15 reports a second at 60 Hz, about 15 bytes each).
	ReportInterval int
}

// MaxRedundancy is the largest Redundancy; a message with more inputs is
// malformed.
const MaxRedundancy = 16

const maxInputSize = 127

func (c Config) withDefaults() Config {
	if c.Redundancy <= 0 {
		c.Redundancy = 3
	}
	c.Redundancy = min(c.Redundancy, MaxRedundancy)
	if c.Window <= 0 {
		c.Window = 64
	}
	c.Window = max(c.Window, c.Redundancy)
	if c.MaxInputSize <= 0 {
		c.MaxInputSize = 64
	}
	c.MaxInputSize = min(c.MaxInputSize, maxInputSize)
	if c.ReportInterval <= 0 {
		c.ReportInterval = 4
	}
	return c
}

// Batch is one input message: the inputs of consecutive ticks ending
// at Last (Inputs[i] is for tick Last-len(Inputs)+1+i). Player is the
// sending client on forwarded messages, 0 from a client.
type Batch[T any] struct {
	Player replicate.ClientID
	Last   tick.Tick
	Inputs []T
}

// Codec encodes Batch messages: uvarint player, uvarint last tick, a
// uvarint of mask<<4 | count-1, with count the number of inputs
// (1..MaxRedundancy) and mask the repeat mask (bit i: input i encodes
// exactly as input i-1 and is not sent; bit 0 and bits at or above count
// are 0): one byte for up to three inputs, then each input not repeated:
// its encoding,
// preceded by a length byte (at most MaxInputSize) unless the input codec
// has a fixed size (the default codec, or one with FixedSize). A player
// holding a key sends each input once however many batches repeat it.
type Codec[T any] struct {
	input replicate.Codec[T]
	max   int
	fixed int // the input codec's fixed size, 0 when sizes vary
}

// binCodec is the default input codec: the canonical form of package
// internal/canon, which for a fixed-size type is the encoding/binary
// little-endian encoding (fields in order, no padding), without
// reflection per value, and refuses a bool byte other than 0 or 1.
type binCodec[T any] struct{ form *canon.Form }

func (c binCodec[T]) Append(dst []byte, v *T) []byte { return c.form.Append(dst, unsafe.Pointer(v)) }

func (c binCodec[T]) Decode(src []byte, v *T) error {
	if len(src) != c.form.Encoded || !c.form.Decode(src, unsafe.Pointer(v)) {
		return ErrMalformed
	}
	return nil
}

// NewCodec returns the batch codec for inputs encoded by input (nil:
// encoding/binary for a fixed-size T), each at most cfg.MaxInputSize bytes.
func NewCodec[T any](input replicate.Codec[T], cfg Config) (Codec[T], error) {
	cfg = cfg.withDefaults()
	if input == nil {
		var zero T
		if n := binary.Size(zero); n <= 0 || n > cfg.MaxInputSize {
			return Codec[T]{}, fmt.Errorf("%w: %T has no fixed-size encoding within %d bytes", ErrSize, zero, cfg.MaxInputSize)
		}
		form, err := canon.Of(reflect.TypeFor[T]())
		if err != nil {
			return Codec[T]{}, fmt.Errorf("%w: %T: %w", ErrSize, zero, err)
		}
		return Codec[T]{input: binCodec[T]{form: form}, max: cfg.MaxInputSize, fixed: form.Encoded}, nil
	}
	c := Codec[T]{input: input, max: cfg.MaxInputSize}
	if fs, ok := input.(replicate.FixedSizer); ok && fs.FixedSize() > 0 && fs.FixedSize() <= cfg.MaxInputSize {
		c.fixed = fs.FixedSize()
	}
	return c, nil
}

// Append appends the encoding of *b to dst; inputs beyond MaxRedundancy
// are left out (the oldest), as is an input over MaxInputSize (Add
// refuses those): it is sent empty.
func (c Codec[T]) Append(dst []byte, b *Batch[T]) []byte {
	ins := b.Inputs
	if len(ins) > MaxRedundancy {
		ins = ins[len(ins)-MaxRedundancy:]
	}
	dst = binary.AppendUvarint(dst, uint64(b.Player))
	dst = binary.AppendUvarint(dst, uint64(b.Last))
	// The count and mask go before the inputs, but the mask is known
	// after them: the inputs are written after room for the largest
	// uvarint, then moved back.
	dst = append(dst, 0, 0, 0)
	headAt := len(dst) - 3
	var mask uint64
	prevLo, prevHi := 0, 0 // the last input's encoding in dst
	for i := range ins {
		at := len(dst)
		if c.fixed == 0 {
			dst = append(dst, 0)
		}
		encAt := len(dst)
		dst = c.input.Append(dst, &ins[i])
		n := len(dst) - encAt
		switch {
		case c.fixed > 0 && n != c.fixed, c.fixed == 0 && n > c.max:
			n, dst = 0, dst[:encAt]
			if c.fixed > 0 { // a broken codec: its inputs are zero bytes
				dst = append(dst, make([]byte, c.fixed)...)
				n = c.fixed
			}
		}
		if c.fixed == 0 {
			dst[at] = byte(n)
		}
		if i > 0 && bytes.Equal(dst[encAt:encAt+n], dst[prevLo:prevHi]) {
			mask |= 1 << uint(i)
			dst = dst[:at]
			continue
		}
		prevLo, prevHi = encAt, encAt+n
	}
	var head [3]byte
	n := binary.PutUvarint(head[:], mask<<4|uint64(len(ins)-1))
	copy(dst[headAt:], head[:n])
	if n < 3 {
		copy(dst[headAt+n:], dst[headAt+3:])
		dst = dst[:len(dst)-(3-n)]
	}
	return dst
}

// Decode decodes a batch; it refuses non-minimal or overlong varints (the
// one varint rule of package internal/bin), a repeat mask with bits it
// may not have, an input sent again instead of marked repeated, an input
// over MaxInputSize and
// trailing bytes, so that what it accepts encodes back to itself; it
// allocates at most MaxRedundancy inputs.
func (c Codec[T]) Decode(src []byte, b *Batch[T]) error {
	r := bin.NewReader(src)
	p := r.Uvarint()
	last := r.Uvarint32()
	head := r.Uvarint()
	count, mask := int(head&15)+1, head>>4
	if r.Err() != nil || mask&1 != 0 || mask>>uint(count) != 0 {
		return ErrMalformed
	}
	b.Player, b.Last = replicate.ClientID(p), tick.Tick(last)
	b.Inputs = b.Inputs[:0]
	var prev []byte
	for i := range count {
		var zero T
		if mask&(1<<uint(i)) != 0 {
			b.Inputs = append(b.Inputs, b.Inputs[i-1])
			continue
		}
		l := c.fixed
		if l == 0 {
			l = int(r.Byte())
		}
		if l > c.max {
			return ErrMalformed
		}
		enc := r.Bytes(l)
		if r.Err() != nil || i > 0 && bytes.Equal(enc, prev) {
			return ErrMalformed
		}
		prev = enc
		// Decode into the slice's own slot: a local passed to the input
		// codec (an interface) would escape, one allocation per input.
		b.Inputs = append(b.Inputs, zero)
		if err := c.input.Decode(enc, &b.Inputs[len(b.Inputs)-1]); err != nil {
			b.Inputs = b.Inputs[:len(b.Inputs)-1]
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
	}
	if r.End() != nil {
		return ErrMalformed
	}
	return nil
}

// Type is a game input type T registered with a Protocol: the message
// clients send it in and the message the server forwards it to the other
// clients in, both unreliable.
type Type[T any] struct {
	up, down replicate.MessageType[Batch[T]]
	report   replicate.MessageType[Report]
	codec    Codec[T]
	cfg      Config
}

// Register registers input type T with p (on client and server
// alike, in the same order as the other types): codec encodes one input
// (nil: encoding/binary, for fixed-size plain data). It registers three
// unreliable message types: the clients' inputs, the server's forwarding
// of them to the other clients, and the server's Report to each
// client.
func Register[T any](p *replicate.Protocol, codec replicate.Codec[T], cfg Config) (*Type[T], error) {
	cfg = cfg.withDefaults()
	c, err := NewCodec(codec, cfg)
	if err != nil {
		return nil, err
	}
	in := &Type[T]{codec: c, cfg: cfg}
	tag := fmt.Sprintf("inputs:3:%d:%d", cfg.MaxInputSize, MaxRedundancy) // 3: count and mask in a uvarint
	if in.up, err = replicate.RegisterMessage[Batch[T]](p, replicate.ClientToServer, transport.Unreliable,
		replicate.WithMessageCodec[Batch[T]](c, tag)); err != nil {
		return nil, err
	}
	if in.down, err = replicate.RegisterMessage[Batch[T]](p, replicate.ServerToClient, transport.Unreliable,
		replicate.WithMessageCodec[Batch[T]](c, tag), replicate.Independent()); err != nil {
		return nil, err
	}
	if in.report, err = replicate.RegisterMessage[Report](p, replicate.ServerToClient, transport.Unreliable,
		replicate.WithMessageCodec[Report](reportCodec{}, "input-report:1"), replicate.Independent()); err != nil {
		return nil, err
	}
	return in, nil
}

// Config returns the input configuration with its defaults applied.
func (in *Type[T]) Config() Config { return in.cfg }

// Reports returns the Reports the client received since the last
// call (after replicate.Client.Update), for ticksync.Sync.Report. The slice and
// the reports' Arrivals are reused by the next call. predict.ClientFrame calls it.
func (in *Type[T]) Reports(c *replicate.Client) []Report {
	return in.report.ReceiveFromServer(c)
}

// inputRing holds inputs by tick for a window of ticks.
type inputRing[T any] struct {
	ticks []tick.Tick
	vals  []T
	has   []bool
	miss  []bool      // the tick was simulated without its input
	arr   []tick.Tick // server: the tick about to be simulated when the input arrived
}

func newInputRing[T any](n int) inputRing[T] {
	return inputRing[T]{ticks: make([]tick.Tick, n), vals: make([]T, n), has: make([]bool, n), miss: make([]bool, n), arr: make([]tick.Tick, n)}
}

func (r *inputRing[T]) get(t tick.Tick) (T, bool) {
	i := int(uint32(t) % uint32(len(r.ticks)))
	if r.has[i] && r.ticks[i] == t {
		return r.vals[i], true
	}
	var zero T
	return zero, false
}

func (r *inputRing[T]) set(t tick.Tick, v T) {
	i := int(uint32(t) % uint32(len(r.ticks)))
	r.ticks[i], r.vals[i], r.has[i], r.miss[i] = t, v, true, false
}

// arrived stores the input for tick t, which arrived when the server was
// about to simulate tick at, keeping a mark of a miss (a late input).
func (r *inputRing[T]) arrived(t tick.Tick, v T, at tick.Tick) {
	i := int(uint32(t) % uint32(len(r.ticks)))
	late := r.miss[i] && r.ticks[i] == t
	r.ticks[i], r.vals[i], r.has[i], r.miss[i], r.arr[i] = t, v, true, late, at
}

// missed marks tick t simulated without its input.
func (r *inputRing[T]) missed(t tick.Tick) {
	i := int(uint32(t) % uint32(len(r.ticks)))
	var zero T
	r.ticks[i], r.vals[i], r.has[i], r.miss[i] = t, zero, false, true
}

// wasMissed reports whether tick t was simulated without its input.
func (r *inputRing[T]) wasMissed(t tick.Tick) bool {
	i := int(uint32(t) % uint32(len(r.ticks)))
	return r.miss[i] && r.ticks[i] == t
}

// Sender is the client side of an input type: it keeps the client's
// own inputs by tick for re-simulation (the last Window ticks) and sends
// each new one with the previous Redundancy-1 in one unreliable message.
type Sender[T any] struct {
	in    *Type[T]
	ring  inputRing[T]
	last  tick.Tick
	any   bool
	k     int // redundancy
	batch Batch[T]
	buf   []byte
}

// NewSender returns a client's input sender.
func (in *Type[T]) NewSender() *Sender[T] {
	return &Sender[T]{in: in, ring: newInputRing[T](in.cfg.Window), k: in.cfg.Redundancy}
}

// SetRedundancy sets how many of the newest ticks' inputs each message
// carries from now on, clamped to [1, min(MaxRedundancy, Window)].
// predict.ClientFrame sets it each tick from ticksync.Sync.Redundancy.
func (s *Sender[T]) SetRedundancy(k int) {
	s.k = min(max(k, 1), MaxRedundancy, s.in.cfg.Window)
}

// Redundancy returns how many inputs each message carries.
func (s *Sender[T]) Redundancy() int { return s.k }

// Add stores the input for tick t, which must follow the previous one
// (gaps are allowed: a tick without input is not sent), and sends it with
// the newest earlier ones through c (one message per call: the rate is
// the tick rate). The input is kept even if the send fails (c not
// connected), and the error returned.
func (s *Sender[T]) Add(c *replicate.Client, t tick.Tick, v T) error {
	if s.any && !t.After(s.last) {
		return fmt.Errorf("%w: %v after %v", ErrTick, t, s.last)
	}
	s.buf = s.in.codec.input.Append(s.buf[:0], &v)
	if n := len(s.buf); n > s.in.cfg.MaxInputSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrSize, n, s.in.cfg.MaxInputSize)
	}
	s.ring.set(t, v)
	s.last, s.any = t, true
	s.batch.Last = t
	s.batch.Inputs = s.batch.Inputs[:0]
	first := t
	for k := 1; k < s.k; k++ {
		if _, ok := s.ring.get(first - 1); !ok {
			break
		}
		first--
	}
	for u := first; u.AtOrBefore(t); u++ {
		x, _ := s.ring.get(u)
		s.batch.Inputs = append(s.batch.Inputs, x)
	}
	if c == nil {
		return nil
	}
	return s.in.up.SendToServer(c, s.batch)
}

// Input returns the client's own input for tick t, if still kept.
func (s *Sender[T]) Input(t tick.Tick) (T, bool) { return s.ring.get(t) }

// Last returns the tick of the newest input added; false before the
// first Add.
func (s *Sender[T]) Last() (tick.Tick, bool) { return s.last, s.any }
