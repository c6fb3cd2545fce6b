// Package canon defines the canonical byte form of plain-data Go values:
// every primitive field in declaration order, little-endian, ints and uints
// of platform size widened to 8 bytes, bools as one byte (0 or 1), no
// padding. The form is the same on every machine and Go version, so it serves
// both checksums (package snapshot) and the default replication codec
// (package replicate).
package canon
