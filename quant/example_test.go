package quant_test

import (
	"fmt"

	"github.com/rewindgo/rewind/quant"
)

// A velocity component as in Gaffer on Games: [-32, 31] in steps of 1/32,
// 11 bits. Out-of-range values are clamped.
func ExampleFloat() {
	vel := quant.Must(quant.NewFloat[float32](-32, 31, 1.0/32))
	fmt.Println(vel.Bits(), vel.Quantize(1.23), vel.Quantize(100), vel.Code(0))
	// Output: 11 1.21875 31 1024
}

// A rotation and its negation are the same rotation, so they have one
// code; 9 bits per component make 29 bits.
func ExampleRotation() {
	rot := quant.Must(quant.NewRotation(9))
	q := [4]float32{0.5, -0.5, 0.5, 0.5}
	neg := [4]float32{-0.5, 0.5, -0.5, -0.5}
	fmt.Println(rot.Bits(), rot.Code(q) == rot.Code(neg), rot.Quantize(neg))
	// Output: 29 true [0.50258845 -0.4991342 0.4991342 0.4991342]
}

// Cube is the replicated state of Gaffer on Games' cube.
type Cube struct {
	Pos  [3]float32 // metres
	Rot  [4]float32 // unit quaternion
	Vel  [3]float32 // metres per second
	Rest bool       // at rest: no velocity
}

// newCubeCodec packs a cube in 3*17 + 29 + 1 + 3*11 = 114 bits (15
// bytes), or 81 bits (11 bytes) at rest, instead of the 41 bytes of its
// canonical form.
func newCubeCodec() *quant.Codec[Cube] {
	pos := quant.Must(quant.NewFloat[float32](-128, 128, 1.0/256))
	vel := quant.Must(quant.NewFloat[float32](-32, 31, 1.0/32))
	return quant.NewCodec(
		quant.Vec3Field(pos, func(c *Cube) *[3]float32 { return &c.Pos }),
		quant.RotationField(quant.Must(quant.NewRotation(9)), func(c *Cube) *[4]float32 { return &c.Rot }),
		quant.AtRest(func(c *Cube) *bool { return &c.Rest },
			quant.Vec3Field(vel, func(c *Cube) *[3]float32 { return &c.Vel })),
	)
}

// A codec packs a struct's quantized fields; the server simulates on
// Quantize's value, which is exactly what the client decodes.
func ExampleNewCodec() {
	codec := newCubeCodec()
	moving := Cube{Pos: [3]float32{1.001, 2, -3}, Rot: [4]float32{0, 0, 0, 1}, Vel: [3]float32{0.3, 0, -9.81}}
	resting := Cube{Pos: [3]float32{5, 0, 5}, Rot: [4]float32{0, 0, 0, 1}, Rest: true}
	codec.Quantize(&moving) // the server's state from now on
	a := codec.Append(nil, &moving)
	b := codec.Append(nil, &resting)

	var got Cube
	err := codec.Decode(a, &got)
	fmt.Println(codec.Bits(), len(a), len(b), err, got == moving)
	fmt.Println(got.Pos, got.Vel)
	// Output:
	// 114 15 11 <nil> true
	// [1 2 -3] [0.3125 0 -9.8125]
}
