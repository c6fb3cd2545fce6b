// Package xxh64 implements the XXH64 hash (seed 0) as specified by the xxHash
// project. It is the fixed hash behind rewind's checksums: its output is
// defined by the algorithm, not by the Go version or the process (unlike
// hash/maphash), so checksums agree across machines and builds.
package xxh64
