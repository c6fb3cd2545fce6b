package wire

import "testing"

func BenchmarkTmpMsgDecode(b *testing.B) {
	_, pkt := typicalInput(b)
	var m Message
	for b.Loop() {
		m.Decode(pkt)
	}
}
func BenchmarkTmpInDecode(b *testing.B) {
	m, _ := typicalInput(b)
	var d InputDecoder
	base := []byte{0x10, 0}
	for b.Loop() {
		d.Reset(m.Inputs, base, 8, 4)
		for {
			_, ok, _ := d.Next()
			if !ok {
				break
			}
		}
	}
}
