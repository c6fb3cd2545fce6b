// Package fixed provides deterministic fixed-point arithmetic for game
// simulations that must give bit-identical results on every machine.
//
// A [Fixed] is a signed Q32.32 number: an int64 counting units of 2^-32, so
// it holds values from -2^31 to 2^31 - 2^-32 in steps of about 2.3e-10. A
// [Vec2] is a 2D vector of Fixed.
//
// # Determinism
//
// Every operation is integer arithmetic (with 128-bit intermediates from
// [math/bits]) whose rounding is specified, so results are the same on every
// architecture, compiler and Go version. That includes [Fixed.Sqrt], which is
// correctly rounded, and [Fixed.Sin], [Fixed.Cos] and [Atan2], which evaluate
// fixed polynomials after an integer range reduction; golden tests pin their
// results.
//
// Floats are a different matter. Go may fuse x*y + z into one FMA instruction
// on arm64, ppc64le, s390x, riscv64 and on amd64 built with GOAMD64=v3, but not
// on default amd64 or wasm, and the fused result can differ in the last bit.
// float64 simulation is safe only between peers that run the same
// architecture and build flags; for cross-platform games use Fixed.
// [FromFloat] and [Fixed.Float64] exist for setup, tests and rendering, never
// for simulation.
//
// # Overflow and rounding
//
// Arithmetic saturates: a result beyond the range becomes [Max] or [Min]
// instead of wrapping, so an overflow shows up as a stuck value rather than a
// sign flip. Operations that round ([Fixed.Mul], [Fixed.Div], [FromFraction],
// [Parse], [Fixed.Sqrt]) round to the nearest representable value, with ties
// away from zero. Operations with no meaningful result return a documented
// value instead of panicking: division by zero saturates, the square root of
// a negative number is 0.
//
// Fixed is an integer type, so ==, <, the built-in min and max, and
// [cmp.Compare] work as expected; use the methods rather than + - * / to get
// saturation and correct scaling.
package fixed
