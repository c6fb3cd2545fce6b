package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

// equalMessage compares two messages field by field, treating nil and empty
// slices as equal.
func equalMessage(a, b *Message) bool {
	if a.Version != b.Version || a.Kind != b.Kind || a.Magic != b.Magic ||
		a.Nonce != b.Nonce || a.StartFrame != b.StartFrame || a.AckFrame != b.AckFrame ||
		a.DisconnectRequested != b.DisconnectRequested || a.NumFrames != b.NumFrames ||
		!bytes.Equal(a.Inputs, b.Inputs) || a.Advantage != b.Advantage || a.Ping != b.Ping ||
		a.Frame != b.Frame || a.Done != b.Done || a.PeerDone != b.PeerDone || a.SumAck != b.SumAck ||
		len(a.Status) != len(b.Status) || len(a.Parts) != len(b.Parts) || len(a.Reports) != len(b.Reports) {
		return false
	}
	for i := range a.Reports {
		if a.Reports[i] != b.Reports[i] {
			return false
		}
	}
	for i := range a.Status {
		if a.Status[i] != b.Status[i] {
			return false
		}
	}
	for i := range a.Parts {
		if !bytes.Equal(a.Parts[i].Name, b.Parts[i].Name) || a.Parts[i].Sum != b.Parts[i].Sum {
			return false
		}
	}
	return true
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goldens pins the encoding of one message of each kind.
var goldens = []struct {
	name string
	msg  Message
	hex  string
}{
	{"SyncRequest", Message{Kind: KindSyncRequest, Magic: 0x1234, Nonce: 0xdeadbeef},
		"02 01 3412 efbeadde"},
	{"SyncReply", Message{Kind: KindSyncReply, Magic: 0x1234, Nonce: 0x01020304},
		"02 02 3412 04030201"},
	{"Input", Message{Kind: KindInput, Magic: 0xbeef, StartFrame: 5000, AckFrame: 4996,
		DisconnectRequested: true, Done: true, PeerDone: true,
		Status: []PeerStatus{{LastFrame: 5007}, {Disconnected: true, LastFrame: -1}},
		SumAck: 4800, Reports: []Report{{Frame: 4900, Checksum: 0x0102030405060708}},
		NumFrames: 8, Inputs: []byte{0x30}},
		// start 5000; ack-start -4; flags 15; 2 statuses: 7 -> 0x1c, -5001|disc -> a39c01;
		// sum ack 4800 -> 804b; 1 report: 4900 -> a426, checksum; 8 frames; inputs
		"02 03 efbe 8827 07 0f 02 1c a39c01 804b 01 a426 0807060504030201 08 30"},
	{"InputAck", Message{Kind: KindInputAck, Magic: 1, AckFrame: -1, SumAck: 100},
		"02 04 0100 01 c801"},
	{"QualityReport", Message{Kind: KindQualityReport, Magic: 1, Advantage: -3, Ping: 300},
		"02 05 0100 05 ac02"},
	{"QualityReply", Message{Kind: KindQualityReply, Magic: 1, Ping: 0},
		"02 06 0100 00"},
	{"PartsRequest", Message{Kind: KindPartsRequest, Frame: 128},
		"02 07 0000 8001"},
	{"Parts", Message{Kind: KindParts, Magic: 0x8000, Frame: 2, Parts: []Part{
		{Name: []byte("ecs"), Sum: 1}, {Name: nil, Sum: math.MaxUint64}}},
		"02 08 0080 02 02 03 656373 0100000000000000 00 ffffffffffffffff"},
	{"KeepAlive", Message{Kind: KindKeepAlive, Magic: 0xffff},
		"02 09 ffff"},
	// A Dump's data runs to the end of the packet: a shorter piece of the
	// same dump is valid too, so the golden piece is one byte long.
	{"Dump", Message{Kind: KindDump, Magic: 7, Frame: 330, Total: 1000, Offset: 999, Data: []byte{0xaa}},
		"02 0a 0700 ca02 e807 e707 aa"},
	{"Dump none", Message{Kind: KindDump, Frame: 1},
		"02 0a 0000 01 00 00"},
	{"DumpAck", Message{Kind: KindDumpAck, Frame: 330, Total: 1000, Offset: 1000},
		"02 0b 0000 ca02 e807 e807"},
}

func TestGoldenMessages(t *testing.T) {
	for _, g := range goldens {
		want := unhex(t, g.hex)
		got, err := g.msg.Append(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: Append = %x, %v; want %x", g.name, got, err, want)
		}
		var m Message
		if err := m.Decode(want); err != nil {
			t.Errorf("%s: Decode: %v", g.name, err)
			continue
		}
		exp := g.msg
		exp.Version = Version
		if !equalMessage(&m, &exp) {
			t.Errorf("%s: Decode = %+v, want %+v", g.name, m, exp)
		}
	}
}

func TestKindString(t *testing.T) {
	if s := KindParts.String(); s != "Parts" {
		t.Errorf("KindParts.String() = %q", s)
	}
	if s := Kind(200).String(); s != "Kind(200)" {
		t.Errorf("Kind(200).String() = %q", s)
	}
}

func names(n, l int) []Part {
	p := make([]Part, n)
	for i := range p {
		p[i] = Part{Name: bytes.Repeat([]byte{byte('a' + i%26)}, l), Sum: uint64(i) * 0x9e3779b97f4a7c15}
	}
	return p
}

func boundaryMessages() []Message {
	status16 := make([]PeerStatus, MaxStatus)
	for i := range status16 {
		status16[i] = PeerStatus{Disconnected: i%3 == 0, LastFrame: []int32{-1, 0, math.MaxInt32, 77}[i%4]}
	}
	inputs := bytes.Repeat([]byte{0xff}, 1000)
	reports8 := make([]Report, MaxReports)
	for i := range reports8 {
		reports8[i] = Report{Frame: []int32{0, 1, math.MaxInt32}[i%3], Checksum: uint64(i) * 0x9e3779b97f4a7c15}
	}
	var out []Message
	for _, start := range []int32{0, 1, 5000, math.MaxInt32} {
		for _, ack := range []int32{-1, 0, start, math.MaxInt32} {
			out = append(out,
				Message{Kind: KindInput, StartFrame: start, AckFrame: ack},
				Message{Kind: KindInput, Magic: math.MaxUint16, StartFrame: start, AckFrame: ack,
					DisconnectRequested: true, Done: true, Status: status16, SumAck: ack,
					Reports: reports8, NumFrames: MaxFrames, Inputs: inputs[:880]},
				Message{Kind: KindInput, StartFrame: start, AckFrame: ack,
					Status: []PeerStatus{{LastFrame: start}}, NumFrames: 1, Inputs: []byte{0}})
		}
	}
	for _, n := range []uint32{0, 1, math.MaxUint32} {
		out = append(out, Message{Kind: KindSyncRequest, Nonce: n}, Message{Kind: KindSyncReply, Nonce: n})
	}
	for _, f := range []int32{-1, 0, math.MaxInt32} {
		out = append(out, Message{Kind: KindInputAck, AckFrame: f, SumAck: -1}, Message{Kind: KindInputAck, AckFrame: f, SumAck: math.MaxInt32})
	}
	for _, a := range []int16{0, 1, -1, math.MaxInt16, -math.MaxInt16, math.MinInt16} {
		for _, p := range []uint64{0, 1 << 63, math.MaxUint64} {
			out = append(out, Message{Kind: KindQualityReport, Advantage: a, Ping: p}, Message{Kind: KindQualityReply, Ping: p})
		}
	}
	for _, f := range []int32{0, math.MaxInt32} {
		out = append(out,
			Message{Kind: KindPartsRequest, Frame: f},
			Message{Kind: KindParts, Frame: f},
			// 64 parts leave room for 9-byte names, 64-byte names for 16 parts.
			Message{Kind: KindParts, Frame: f, Parts: names(MaxParts, 9)},
			Message{Kind: KindParts, Frame: f, Parts: names(16, MaxNameLen)},
			Message{Kind: KindParts, Frame: f, Parts: names(MaxParts, 0)})
	}
	big := bytes.Repeat([]byte{7}, MaxPacketSize-HeaderSize-5-4-4)
	for _, f := range []int32{0, math.MaxInt32} {
		out = append(out,
			Message{Kind: KindDump, Frame: f},
			Message{Kind: KindDump, Frame: f, Total: MaxDumpSize, Offset: MaxDumpSize - 1, Data: []byte{1}},
			Message{Kind: KindDump, Frame: f, Total: MaxDumpSize, Offset: MaxDumpSize - uint32(len(big)), Data: big},
			Message{Kind: KindDumpAck, Frame: f, Total: MaxDumpSize, Offset: MaxDumpSize},
			Message{Kind: KindDumpAck, Frame: f})
	}
	return append(out, Message{Kind: KindKeepAlive})
}

func TestRoundTrip(t *testing.T) {
	var m Message // reused across decodes on purpose
	for i, want := range boundaryMessages() {
		b, err := want.Append([]byte("prefix"))
		if err != nil {
			t.Errorf("%d %v: Append: %v", i, want.Kind, err)
			continue
		}
		if string(b[:6]) != "prefix" || len(b)-6 > MaxPacketSize {
			t.Fatalf("%d: Append clobbered dst or exceeded the limit (%d bytes)", i, len(b)-6)
		}
		if err := m.Decode(b[6:]); err != nil {
			t.Errorf("%d %v: Decode: %v", i, want.Kind, err)
			continue
		}
		want.Version = Version
		if !equalMessage(&m, &want) {
			t.Errorf("%d: round trip = %+v, want %+v", i, m, want)
		}
	}
}

func TestAppendErrors(t *testing.T) {
	tooMany := make([]PeerStatus, MaxStatus+1)
	cases := []struct {
		name string
		m    Message
		want error
	}{
		{"kind 0", Message{}, ErrUnknownKind},
		{"kind 12", Message{Kind: KindDumpAck + 1}, ErrUnknownKind},
		{"dump piece past its end", Message{Kind: KindDump, Total: 3, Offset: 2, Data: []byte{1, 2}}, ErrMalformed},
		{"empty dump piece", Message{Kind: KindDump, Total: 3}, ErrMalformed},
		{"dump over MaxDumpSize", Message{Kind: KindDump, Total: MaxDumpSize + 1, Data: []byte{1}}, ErrMalformed},
		{"dump ack past the end", Message{Kind: KindDumpAck, Total: 3, Offset: 4}, ErrMalformed},
		{"start -1", Message{Kind: KindInput, StartFrame: -1}, ErrMalformed},
		{"ack -2", Message{Kind: KindInput, AckFrame: -2}, ErrMalformed},
		{"17 statuses", Message{Kind: KindInput, Status: tooMany}, ErrMalformed},
		{"last frame -2", Message{Kind: KindInput, Status: []PeerStatus{{LastFrame: -2}}}, ErrMalformed},
		{"frames -1", Message{Kind: KindInput, NumFrames: -1, Inputs: []byte{1}}, ErrMalformed},
		{"frames 129", Message{Kind: KindInput, NumFrames: MaxFrames + 1, Inputs: []byte{1}}, ErrMalformed},
		{"frames without inputs", Message{Kind: KindInput, NumFrames: 1}, ErrMalformed},
		{"inputs without frames", Message{Kind: KindInput, Inputs: []byte{1}}, ErrMalformed},
		{"inputs too large", Message{Kind: KindInput, NumFrames: 1, Inputs: make([]byte, MaxPacketSize-8)}, ErrTooLarge},
		{"inputs huge", Message{Kind: KindInput, NumFrames: 1, Inputs: make([]byte, 1<<20)}, ErrTooLarge},
		{"ack message -2", Message{Kind: KindInputAck, AckFrame: -2}, ErrMalformed},
		{"ack message sum ack -2", Message{Kind: KindInputAck, SumAck: -2}, ErrMalformed},
		{"sum ack -2", Message{Kind: KindInput, SumAck: -2}, ErrMalformed},
		{"9 reports", Message{Kind: KindInput, Reports: make([]Report, MaxReports+1)}, ErrMalformed},
		{"report frame -1", Message{Kind: KindInput, Reports: []Report{{Frame: -1}}}, ErrMalformed},
		{"parts request frame -1", Message{Kind: KindPartsRequest, Frame: -1}, ErrMalformed},
		{"parts frame -1", Message{Kind: KindParts, Frame: -1}, ErrMalformed},
		{"65 parts", Message{Kind: KindParts, Parts: make([]Part, MaxParts+1)}, ErrMalformed},
		{"65-byte name", Message{Kind: KindParts, Parts: names(1, MaxNameLen+1)}, ErrMalformed},
		{"parts too large", Message{Kind: KindParts, Parts: names(17, MaxNameLen)}, ErrTooLarge},
	}
	for _, c := range cases {
		dst := []byte("keep")
		got, err := c.m.Append(dst)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		if string(got) != "keep" {
			t.Errorf("%s: dst changed to %d bytes", c.name, len(got))
		}
	}
	// The largest Input that fits.
	m := Message{Kind: KindInput, NumFrames: 1, Inputs: make([]byte, MaxPacketSize-11)}
	if b, err := m.Append(nil); err != nil || len(b) != MaxPacketSize {
		t.Errorf("largest input: %d bytes, %v", len(b), err)
	}
}

func TestDecodeTruncated(t *testing.T) {
	var m Message
	for _, g := range goldens {
		b := unhex(t, g.hex)
		for l := range len(b) {
			err := m.Decode(b[:l])
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%s truncated to %d bytes: err = %v, want ErrMalformed", g.name, l, err)
			}
			if l >= 2 && (m.Version != Version || m.Kind != g.msg.Kind) {
				t.Errorf("%s truncated to %d bytes: header not kept: %+v", g.name, l, m)
			}
		}
	}
}

func TestDecodeTrailing(t *testing.T) {
	var m Message
	for _, g := range goldens {
		if g.msg.Kind == KindInput {
			continue // the tail of an Input message is its inputs
		}
		b := append(unhex(t, g.hex), 0)
		if err := m.Decode(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s with a trailing byte: err = %v, want ErrMalformed", g.name, err)
		}
	}
}

func TestDecodeVersion(t *testing.T) {
	var m Message
	for _, b := range [][]byte{{1}, {3}, {0, 3}, {0xff, 200, 0x34, 0x12}, {1, 7, 0x34, 0x12, 0, 1, 2, 3, 4, 5, 6, 7, 8}} {
		err := m.Decode(b)
		if !errors.Is(err, ErrVersion) {
			t.Errorf("Decode(%x) = %v, want ErrVersion", b, err)
		}
		if m.Version != b[0] {
			t.Errorf("Decode(%x): Version = %d", b, m.Version)
		}
		if len(b) >= 2 && m.Kind != Kind(b[1]) {
			t.Errorf("Decode(%x): Kind = %d", b, m.Kind)
		}
		if len(b) >= 4 && m.Magic != 0x1234 {
			t.Errorf("Decode(%x): Magic = %#x", b, m.Magic)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	long := make([]byte, MaxPacketSize+1)
	long[0], long[1] = Version, byte(KindInput)
	cases := []struct {
		name string
		hex  string
		want error
	}{
		{"empty", "", ErrMalformed},
		{"kind 0", "02 00 0000", ErrUnknownKind},
		{"kind 12", "02 0c 0000", ErrUnknownKind},
		{"dump piece past its end", "02 0a 0000 05 03 02 0102", ErrMalformed},
		{"empty dump piece", "02 0a 0000 05 03 00", ErrMalformed},
		{"empty dump with data", "02 0a 0000 05 00 00 01", ErrMalformed},
		{"dump over MaxDumpSize", "02 0a 0000 05 8180c000 00 01", ErrMalformed},
		{"dump ack past the end", "02 0b 0000 05 03 04", ErrMalformed},
		{"dump ack with data", "02 0b 0000 05 03 03 00", ErrMalformed},
		{"kind 255", "02 ff 0000 00", ErrUnknownKind},
		{"too large", hex.EncodeToString(long), ErrTooLarge},
		{"non-minimal varint", "02 04 0000 8000 00", ErrMalformed},
		{"non-minimal varint 2", "02 06 0000 ffff00", ErrMalformed},
		{"11-byte varint", "02 06 0000 8080808080808080808001", ErrMalformed},
		{"varint overflow", "02 06 0000 ffffffffffffffffff02", ErrMalformed},
		{"ping max", "02 06 0000 ffffffffffffffffff01", nil},
		{"start > MaxInt32", "02 03 0000 8080808008 00 00 00 00", ErrMalformed},
		{"start MaxInt32", "02 03 0000 ffffffff07 00 00 00 00", nil},
		{"ack > MaxInt32", "02 03 0000 ffffffff07 02 00 00 00", ErrMalformed},
		{"ack -2", "02 03 0000 00 03 00 00 00", ErrMalformed},
		{"ack -1", "02 03 0000 00 01 00 00 00", nil},
		{"ack huge", "02 03 0000 00 feffffffffffffffff01 00 00 00", ErrMalformed},
		{"ack huge negative", "02 03 0000 05 ffffffffffffffffff01 00 00 00", ErrMalformed},
		{"flags 2 (done)", "02 03 0000 00 00 02 00 00", nil},
		{"flags 4 (peer done)", "02 03 0000 00 00 04 00 00", nil},
		{"flags 16", "02 03 0000 00 00 10 00 00", ErrMalformed},
		{"checks without ack or report", "02 03 0000 00 00 08 00 01 00 00", ErrMalformed},
		{"checks with ack only", "02 03 0000 00 00 08 00 00 00 00", nil},
		{"flags 0x81", "02 03 0000 00 00 81 00 00", ErrMalformed},
		{"17 statuses", "02 03 0000 00 00 00 11" + strings.Repeat("00", 17) + "00", ErrMalformed},
		{"16 statuses", "02 03 0000 00 00 00 10" + strings.Repeat("00", 16) + "00", nil},
		{"huge status count", "02 03 0000 00 00 00 ffffffffffffffffff01", ErrMalformed},
		{"last frame -2", "02 03 0000 00 00 00 01 06 00", ErrMalformed},
		{"last frame -1", "02 03 0000 00 00 00 01 03 00", nil},
		{"last frame > MaxInt32", "02 03 0000 ffffffff07 00 00 01 04 00", ErrMalformed},
		{"last frame huge", "02 03 0000 00 00 00 01 ffffffffffffffffff01 00", ErrMalformed},
		{"sum ack -2", "02 03 0000 00 00 08 00 03 00 00", ErrMalformed},
		{"sum ack > MaxInt32", "02 03 0000 00 00 08 00 8080808010 00 00", ErrMalformed},
		{"9 reports", "02 03 0000 00 00 08 00 01 09" + strings.Repeat("00 0000000000000000", 9) + "00", ErrMalformed},
		{"8 reports", "02 03 0000 00 00 08 00 01 08" + strings.Repeat("00 0000000000000000", 8) + "00", nil},
		{"report frame > MaxInt32", "02 03 0000 00 00 08 00 01 01 8080808008 0000000000000000 00", ErrMalformed},
		{"report short", "02 03 0000 00 00 08 00 01 01 00 00000000000000", ErrMalformed},
		{"129 frames", "02 03 0000 00 00 00 00 8101 00", ErrMalformed},
		{"frames without inputs", "02 03 0000 00 00 00 00 01", ErrMalformed},
		{"inputs without frames", "02 03 0000 00 00 00 00 00 30", ErrMalformed},
		{"advantage 32768", "02 05 0000 808004 00", ErrMalformed},
		{"advantage -32769", "02 05 0000 818004 00", ErrMalformed},
		{"advantage -32768", "02 05 0000 ffff03 00", nil},
		{"input ack -2", "02 04 0000 03 01", ErrMalformed},
		{"input ack > MaxInt32", "02 04 0000 8080808010 01", ErrMalformed},
		{"input ack sum ack -2", "02 04 0000 01 03", ErrMalformed},
		{"input ack without sum ack", "02 04 0000 01", ErrMalformed},
		{"parts request frame > MaxInt32", "02 07 0000 8080808008", ErrMalformed},
		{"65 parts", "02 08 0000 00 41" + strings.Repeat("00 0000000000000000", 65), ErrMalformed},
		{"64 parts", "02 08 0000 00 40" + strings.Repeat("00 0000000000000000", 64), nil},
		{"65-byte name", "02 08 0000 00 01 41" + strings.Repeat("61", 65) + "0000000000000000", ErrMalformed},
		{"name past the end", "02 08 0000 00 01 08 6161", ErrMalformed},
		{"sync short", "02 01 0000 000000", ErrMalformed},
		{"version 1 checksum report", "01 07 0000 00 0000000000000000", ErrVersion},
	}
	var m Message
	for _, c := range cases {
		b := unhex(t, c.hex)
		err := m.Decode(b)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: Decode = %v, want success", c.name, err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Decode = %v, want %v", c.name, err, c.want)
		}
		// Only the header survives an error.
		if m.Nonce != 0 || m.StartFrame != 0 || m.AckFrame != 0 || len(m.Status) != 0 ||
			m.SumAck != 0 || len(m.Reports) != 0 || m.Done || m.PeerDone ||
			m.NumFrames != 0 || m.Inputs != nil || m.Advantage != 0 || m.Frame != 0 || len(m.Parts) != 0 {
			t.Errorf("%s: fields left after the error: %+v", c.name, m)
		}
	}
}

func TestDecodeReuse(t *testing.T) {
	var m Message
	parts := unhex(t, goldens[7].hex)
	input := unhex(t, goldens[2].hex)
	if err := m.Decode(parts); err != nil {
		t.Fatal(err)
	}
	p := &m.Parts[:1][0]
	if err := m.Decode(input); err != nil {
		t.Fatal(err)
	}
	if len(m.Parts) != 0 || p.Name != nil || p.Sum != 0 {
		t.Errorf("decoding an Input left parts behind: %+v, %+v", m.Parts, *p)
	}
	if err := m.Decode(parts); err != nil {
		t.Fatal(err)
	}
	if &m.Parts[0] != p {
		t.Errorf("Parts capacity not reused")
	}
	// Names alias the packet and are capped at their length.
	if &m.Parts[0].Name[0] != &parts[7] || cap(m.Parts[0].Name) != 3 {
		t.Errorf("name does not alias the packet")
	}
}

func typicalInput(tb testing.TB) (Message, []byte) {
	var e InputEncoder
	e.Reset([]byte{0x10, 0})
	for f := range 8 {
		r := []byte{0x10, 0}
		if f >= 5 {
			r[0] = 0x12
		}
		e.Add(r)
	}
	m := Message{Kind: KindInput, Magic: 0xbeef, StartFrame: 5000, AckFrame: 4996,
		Status: []PeerStatus{{LastFrame: 5007}, {LastFrame: 5003}}, SumAck: -1,
		NumFrames: e.Frames(), Inputs: e.AppendTo(nil)}
	b, err := m.Append(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return m, b
}

func TestTypicalInputSize(t *testing.T) {
	_, b := typicalInput(t)
	// header 4, start 2, ack 1, flags 1, statuses 1+2, frames 1, inputs 4
	// (no checksum ack or report: no Checks section)
	if want := unhex(t, "02 03 efbe 8827 07 00 02 1c 0c 08 2003020e"); !bytes.Equal(b, want) {
		t.Errorf("typical Input = %x (%d bytes), want %x", b, len(b), want)
	}
}

func TestMessageAllocs(t *testing.T) {
	m, pkt := typicalInput(t)
	buf := make([]byte, 0, MaxPacketSize)
	if n := testing.AllocsPerRun(100, func() {
		var err error
		if buf, err = m.Append(buf[:0]); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Append allocates %v times", n)
	}
	var d Message
	if err := d.Decode(pkt); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := d.Decode(pkt); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Decode allocates %v times", n)
	}
	bad := append([]byte(nil), pkt...)
	bad[7] = 0x80 // flags byte -> bad flags
	if n := testing.AllocsPerRun(100, func() {
		if err := d.Decode(bad); err == nil {
			t.Fatal("bad packet accepted")
		}
	}); n != 0 {
		t.Errorf("Decode of a bad packet allocates %v times", n)
	}
}
