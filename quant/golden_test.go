package quant

import (
	"encoding/hex"
	"fmt"
	"math"
	"testing"
)

// TestGolden pins the bytes of an encoded cube and the exact bits of
// quantized values. The arithmetic is specified to give the same bits
// on every platform (see the package documentation); a platform, Go
// version or change of code that computes other bits fails here.
func TestGolden(t *testing.T) {
	c := cubeCodec(t)
	v := cube{
		Pos:    [3]float32{1.2345, -77.7, 200.001},
		Rot:    [4]float32{0.1, 0.7, -0.2, 0.6},
		Vel:    [3]float32{math.Pi, -1, 40},
		Health: 42,
		Facing: [3]float32{0.3, -0.4, -0.5},
	}
	enc := c.Append(nil, &v)
	const wantHex = "7802d2244b00e42a396bbc32820ffc2a6a10"
	if got := hex.EncodeToString(enc); got != wantHex {
		t.Errorf("encoding %s, want %s", got, wantHex)
	}
	c.Quantize(&v)
	bits := fmt.Sprintf("%08x", [...]uint32{
		math.Float32bits(v.Pos[0]), math.Float32bits(v.Pos[1]), math.Float32bits(v.Pos[2]),
		math.Float32bits(v.Rot[0]), math.Float32bits(v.Rot[1]), math.Float32bits(v.Rot[2]), math.Float32bits(v.Rot[3]),
		math.Float32bits(v.Vel[0]), math.Float32bits(v.Vel[1]), math.Float32bits(v.Vel[2]),
		math.Float32bits(v.Facing[0]), math.Float32bits(v.Facing[1]), math.Float32bits(v.Facing[2]),
	})
	const wantBits = "[3f9e0000 c29b6600 43480080 3dd7cdae 3f3cf2b5 be57cdae 3f21da43 404a0000 bf800000 41f80000 3edaffc4 bf0fb7d8 bf355bce]"
	if bits != wantBits {
		t.Errorf("quantized bits %s, want %s", bits, wantBits)
	}
	h := Must(NewUnitVec2(12)).Quantize([2]float32{0.6, -0.8})
	if got := fmt.Sprintf("%08x %08x", math.Float32bits(h[0]), math.Float32bits(h[1])); got != "3f19a7ef bf4cc20c" {
		t.Errorf("UnitVec2: %s", got)
	}
}
