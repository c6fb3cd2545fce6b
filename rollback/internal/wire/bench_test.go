package wire

import "testing"

// benchInput is an Input message with 8 frames of 2-byte inputs and 2
// statuses, the inputs changing once in the window.
func benchInput() (m Message, base []byte, records [][]byte) {
	base = []byte{0x10, 0}
	for f := range 8 {
		r := []byte{0x10, 0}
		if f >= 5 {
			r[0] = 0x12
		}
		records = append(records, r)
	}
	m = Message{Kind: KindInput, Magic: 0xbeef, StartFrame: 5000, AckFrame: 4996,
		Status: []PeerStatus{{LastFrame: 5007}, {LastFrame: 5003}}, SumAck: -1,
		NumFrames: len(records)}
	return m, base, records
}

// BenchmarkEncodeInput compresses the inputs and encodes the message.
func BenchmarkEncodeInput(b *testing.B) {
	m, base, records := benchInput()
	var e InputEncoder
	buf := make([]byte, 0, MaxPacketSize)
	b.ReportAllocs()
	for b.Loop() {
		e.Reset(base)
		for _, r := range records {
			e.Add(r)
		}
		m.Inputs = e.AppendTo(m.Inputs[:0])
		var err error
		if buf, err = m.Append(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkDecodeInput decodes the message and decompresses its inputs.
func BenchmarkDecodeInput(b *testing.B) {
	m, base, records := benchInput()
	var e InputEncoder
	e.Reset(base)
	for _, r := range records {
		e.Add(r)
	}
	m.Inputs = e.AppendTo(nil)
	pkt, err := m.Append(nil)
	if err != nil {
		b.Fatal(err)
	}
	var dm Message
	var d InputDecoder
	b.SetBytes(int64(len(pkt)))
	b.ReportAllocs()
	for b.Loop() {
		if err := dm.Decode(pkt); err != nil {
			b.Fatal(err)
		}
		if err := d.Reset(dm.Inputs, base, dm.NumFrames, 4); err != nil {
			b.Fatal(err)
		}
		for {
			_, ok, err := d.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
		}
	}
}
