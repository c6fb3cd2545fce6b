package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// The benchmarks encode and decode a position (three floats) packed by
// Vec3Field at 1/512 m over +-256 m (57 bits, 8 bytes) beside its
// canonical fixed-width form, three little-endian float32s (12 bytes),
// and the whole cube of codec_test.go (18 bytes) beside its canonical
// form (3+4+3 float32s, a bool, an int16 and 3 float32s: 55 bytes).

type pos struct{ P [3]float32 }

func posCodec() *Codec[pos] {
	return NewCodec(Vec3Field(Must(NewFloat[float32](-256, 256, 1.0/512)), func(v *pos) *[3]float32 { return &v.P }))
}

func BenchmarkPosAppend(b *testing.B) {
	c := posCodec()
	v := pos{[3]float32{1.5, -200.25, 33.3}}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for range b.N {
		buf = c.Append(buf[:0], &v)
	}
	b.ReportMetric(float64(len(buf)), "bytes/value")
}

func BenchmarkPosDecode(b *testing.B) {
	c := posCodec()
	v := pos{[3]float32{1.5, -200.25, 33.3}}
	in := c.Append(nil, &v)
	b.ReportAllocs()
	for range b.N {
		if err := c.Decode(in, &v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(in)), "bytes/value")
}

// BenchmarkPosFloorAppend is the canonical form: 12 bytes.
func BenchmarkPosFloorAppend(b *testing.B) {
	v := pos{[3]float32{1.5, -200.25, 33.3}}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for range b.N {
		buf = buf[:0]
		for _, f := range v.P {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
		}
	}
	b.ReportMetric(float64(len(buf)), "bytes/value")
}

func BenchmarkPosFloorDecode(b *testing.B) {
	v := pos{[3]float32{1.5, -200.25, 33.3}}
	var in []byte
	for _, f := range v.P {
		in = binary.LittleEndian.AppendUint32(in, math.Float32bits(f))
	}
	b.ReportAllocs()
	for range b.N {
		if len(in) != 12 {
			b.Fatal("size")
		}
		for i := range v.P {
			v.P[i] = math.Float32frombits(binary.LittleEndian.Uint32(in[4*i:]))
		}
	}
	b.ReportMetric(float64(len(in)), "bytes/value")
}

func benchCubes() []cube {
	r := rand.New(rand.NewPCG(1, 2))
	cs := make([]cube, 64)
	for i := range cs {
		cs[i] = randomCube(r)
		cs[i].Rest = false
	}
	return cs
}

func BenchmarkCubeAppend(b *testing.B) {
	c := cubeCodec(b)
	cs := benchCubes()
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := range b.N {
		buf = c.Append(buf[:0], &cs[i%len(cs)])
	}
	b.ReportMetric(float64(len(buf)), "bytes/value")
}

func BenchmarkCubeDecode(b *testing.B) {
	c := cubeCodec(b)
	cs := benchCubes()
	ins := make([][]byte, len(cs))
	for i := range cs {
		ins[i] = c.Append(nil, &cs[i])
	}
	var v cube
	b.ReportAllocs()
	for i := range b.N {
		if err := c.Decode(ins[i%len(ins)], &v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(ins[0])), "bytes/value")
}

func BenchmarkCubeQuantize(b *testing.B) {
	c := cubeCodec(b)
	cs := benchCubes()
	v := new(cube)
	b.ReportAllocs()
	for i := range b.N {
		*v = cs[i%len(cs)]
		c.Quantize(v)
	}
}

// BenchmarkCubeFloorAppend is the cube's canonical form: 55 bytes.
func BenchmarkCubeFloorAppend(b *testing.B) {
	cs := benchCubes()
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := range b.N {
		v := &cs[i%len(cs)]
		buf = buf[:0]
		for _, f := range v.Pos {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
		}
		for _, f := range v.Rot {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
		}
		for _, f := range v.Vel {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
		}
		var rest byte
		if v.Rest {
			rest = 1
		}
		buf = append(buf, rest)
		buf = binary.LittleEndian.AppendUint16(buf, uint16(v.Health))
		for _, f := range v.Facing {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
		}
	}
	b.ReportMetric(float64(len(buf)), "bytes/value")
}
