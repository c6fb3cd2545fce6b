package wire_test

import (
	"fmt"

	"github.com/rewindgo/rewind/rollback/internal/wire"
)

// A peer sends the inputs of frames 100..107 (2 bytes per frame), compressed
// against the input of frame 99, which the receiver already holds.
func Example() {
	base := []byte{0x01, 0x00} // input of frame 99
	var enc wire.InputEncoder
	enc.Reset(base)
	for f := 100; f < 108; f++ {
		in := []byte{0x01, 0x00}
		if f >= 105 {
			in[1] = 0x04 // a button goes down at frame 105
		}
		enc.Add(in)
	}
	out := wire.Message{
		Kind:       wire.KindInput,
		Magic:      0x5eed,
		StartFrame: 100,
		AckFrame:   97,
		Status:     []wire.PeerStatus{{LastFrame: 107}, {LastFrame: 104}},
		SumAck:     -1, // no checksum report received yet
		NumFrames:  enc.Frames(),
		Inputs:     enc.AppendTo(nil),
	}
	pkt, err := out.Append(nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("packet: %d bytes, inputs: %d bytes\n", len(pkt), len(out.Inputs))

	// The receiver decodes into reused values.
	var in wire.Message
	var dec wire.InputDecoder
	if err := in.Decode(pkt); err != nil {
		panic(err)
	}
	if err := dec.Reset(in.Inputs, base, in.NumFrames, 2); err != nil {
		panic(err)
	}
	for f := in.StartFrame; ; f++ {
		rec, ok, err := dec.Next()
		if err != nil {
			panic(err)
		}
		if !ok {
			break
		}
		fmt.Printf("%d:%x ", f, rec)
	}
	fmt.Println()
	// Output:
	// packet: 15 bytes, inputs: 4 bytes
	// 100:0100 101:0100 102:0100 103:0100 104:0100 105:0104 106:0104 107:0104
}
