package snapshot

import (
	"github.com/rewindgo/rewind/internal/parts"
)

// EntitiesPart is the name of the checksum Part covering the entity allocator
// (which entities are alive, their generations and the free list).
const EntitiesPart = "ecs.entities"

// Part is the checksum of one registered type (or of the entity allocator).
// It is a struct with two fields:
//
//	Name string // the type's package path and name ("github.com/you/game.Position");
//	            // "resource " + the type name for a resource, EntitiesPart
//	            // for the entity allocator
//	Sum  uint64 // the type's checksum (XXH64 of its canonical bytes)
//
// Part is the same type as rollback.Part (both alias one internal type), so
// the parts Checksum and Ring.Checksum return go to a rollback session's
// ReportChecksum as they are, with no copy.
type Part = parts.Part

// combine folds parts into the frame checksum (parts.Combine).
func combine(ps []Part) uint64 { return parts.Combine(ps) }

// Checksum computes the checksum of the World's current state: it returns the
// frame checksum and appends one Part per registered type to parts (pass a
// reused slice to avoid allocating). The value depends only on the state: the
// same state gives the same checksum in every process, on every machine and
// with every Go version (a fixed hash, XXH64, over a canonical byte form:
// little-endian fields in declaration order, platform-sized ints as 8 bytes,
// no padding). Types that use the NoChecksum option contribute a zero part.
func (r *Registry) Checksum(parts []Part) (uint64, []Part, error) {
	parts = append(parts[:0], Part{Name: EntitiesPart, Sum: r.ents.checksum(&r.d)})
	for _, s := range r.parts {
		sum, err := s.checksum(&r.d)
		if err != nil {
			return 0, parts, err
		}
		parts = append(parts, Part{Name: s.name(), Sum: sum})
	}
	return combine(parts), parts, nil
}

// Diff returns the names of the parts that differ between a and b, including
// parts present in only one of them, in the order of a then b. Two peers that
// exchange their parts for a frame learn which component types desynced.
func Diff(a, b []Part) []string { return parts.Diff(a, b) }
