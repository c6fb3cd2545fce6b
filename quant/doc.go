// Package quant quantizes game state for the wire: bounded fixed-step
// floats ([Float]), bounded integers ([Int]), unit vectors ([UnitVec2],
// [UnitVec], octahedral), rotations ([Rotation], smallest three), the at-rest
// pattern ([AtRest]), and [Codec], which bit-packs a struct's fields by
// their quantizers into the fewest whole bytes (the forms of Gaffer on
// Games' Snapshot Compression: a cube of 321 bits sent in 80).
//
// # Quantize on both sides
//
// Each quantizer maps a value to an integer code and a code back to the
// value the receiver will hold; Quantize does both. A server that
// simulates on quantized values (Codec.Quantize after each tick) and a
// client that decodes them hold exactly the same bits, so prediction and
// interpolation start from what was sent. Each type's documentation gives
// its error bound: how far the received value may be from the sent one.
//
// # Determinism
//
// Codes and values are computed with float64 +, -, *, /, math.Abs,
// math.Round and math.Sqrt only: each is one IEEE 754 operation,
// correctly rounded, so every platform gets the same bits. A product is
// converted explicitly (float64(a*b)) before it is added to anything, as
// the Go specification lets a compiler fuse a*b+c into one FMA (arm64,
// ppc64 and s390x do) unless a conversion rounds the product first. No
// trigonometry is used: math.Sin and friends are not correctly rounded and
// may differ between platforms.
//
// # Canonical codes
//
// Every value has one code and decoders accept only codes that re-encode
// to themselves, so accepted bytes re-encode to themselves (the fuzz
// targets check it), as in every rewind wire format. Where two codes
// would decode to one value (the seams of the octahedral map, quaternions
// whose two largest components tie), Code gives the canonical one and
// Value refuses the other with [ErrCode].
//
// # Codecs
//
// [NewCodec] builds a codec from fields ([FloatField], [Vec3Field],
// [IntField], [BoolField], [UnitVec2Field], [UnitVecField],
// [RotationField], [AtRest]),
// each a quantizer and an accessor such as
// func(c *Cube) *float32 { return &c.X }. Its Append and Decode have the
// method set of replicate.Codec[T], which is an interface, so this
// package need not import replicate; pass the codec to
// replicate.WithCodec. Bits are packed by package internal/bin's
// BitWriter, least significant bit first; Decode refuses short or long
// input, non-zero padding bits and invalid codes with an error, never a
// panic.
package quant
