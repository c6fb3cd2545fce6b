package xxh64

import (
	"encoding/binary"
	"math/bits"
)

const (
	p1 uint64 = 0x9E3779B185EBCA87
	p2 uint64 = 0xC2B2AE3D27D4EB4F
	p3 uint64 = 0x165667B19E3779F9
	p4 uint64 = 0x85EBCA77C2B2AE63
	p5 uint64 = 0x27D4EB2F165667C5

	p1p2  uint64 = 0x60EA27EEADC0B5D6 // p1 + p2 mod 2^64
	negP1 uint64 = 0x61C8864E7A143579 // -p1 mod 2^64
)

// Digest is a streaming XXH64 state. The zero Digest is not ready: call Reset.
type Digest struct {
	v1, v2, v3, v4 uint64
	total          uint64
	mem            [32]byte
	n              int // bytes buffered in mem
}

// New returns a Digest ready for writing.
func New() *Digest {
	d := new(Digest)
	d.Reset()
	return d
}

// Reset restarts the Digest with seed 0.
func (d *Digest) Reset() {
	d.v1, d.v2, d.v3, d.v4 = p1p2, p2, 0, negP1
	d.total, d.n = 0, 0
}

func round(acc, in uint64) uint64 {
	acc += in * p2
	acc = bits.RotateLeft64(acc, 31)
	return acc * p1
}

func merge(acc, v uint64) uint64 {
	acc ^= round(0, v)
	return acc*p1 + p4
}

// Write adds b to the hashed stream. It never fails.
func (d *Digest) Write(b []byte) (int, error) {
	n := len(b)
	d.total += uint64(n)
	if d.n+len(b) < 32 {
		d.n += copy(d.mem[d.n:], b)
		return n, nil
	}
	if d.n > 0 {
		c := copy(d.mem[d.n:], b)
		b = b[c:]
		d.stripe(d.mem[:])
		d.n = 0
	}
	if len(b) >= 32 {
		k := len(b) &^ 31
		d.stripe(b[:k])
		b = b[k:]
	}
	d.n = copy(d.mem[:], b)
	return n, nil
}

// stripe consumes b, whose length is a multiple of 32.
func (d *Digest) stripe(b []byte) {
	v1, v2, v3, v4 := d.v1, d.v2, d.v3, d.v4
	for ; len(b) >= 32; b = b[32:] {
		v1 = round(v1, binary.LittleEndian.Uint64(b[0:8]))
		v2 = round(v2, binary.LittleEndian.Uint64(b[8:16]))
		v3 = round(v3, binary.LittleEndian.Uint64(b[16:24]))
		v4 = round(v4, binary.LittleEndian.Uint64(b[24:32]))
	}
	d.v1, d.v2, d.v3, d.v4 = v1, v2, v3, v4
}

// WriteUint64 adds v in little-endian byte order.
func (d *Digest) WriteUint64(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	d.Write(b[:])
}

// Sum64 returns the hash of everything written so far.
func (d *Digest) Sum64() uint64 {
	var h uint64
	if d.total >= 32 {
		h = bits.RotateLeft64(d.v1, 1) + bits.RotateLeft64(d.v2, 7) + bits.RotateLeft64(d.v3, 12) + bits.RotateLeft64(d.v4, 18)
		h = merge(h, d.v1)
		h = merge(h, d.v2)
		h = merge(h, d.v3)
		h = merge(h, d.v4)
	} else {
		h = d.v3 + p5
	}
	h += d.total
	return finish(h, d.mem[:d.n])
}

// finish consumes the last bytes b (fewer than 32) into h and returns the
// avalanched hash.
func finish(h uint64, b []byte) uint64 {
	for ; len(b) >= 8; b = b[8:] {
		h ^= round(0, binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*p1 + p4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * p1
		h = bits.RotateLeft64(h, 23)*p2 + p3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * p5
		h = bits.RotateLeft64(h, 11) * p1
	}
	return Mix64(h)
}

// Sum64 returns the XXH64 hash of b.
func Sum64(b []byte) uint64 {
	var d Digest
	d.Reset()
	d.Write(b)
	return d.Sum64()
}

// Mix64 is a strong 64-bit finaliser (the XXH64 avalanche), used to combine
// checksum parts.
func Mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= p2
	h ^= h >> 29
	h *= p3
	h ^= h >> 32
	return h
}
