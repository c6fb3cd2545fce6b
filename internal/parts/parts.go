package parts

import "github.com/rewindgo/rewind/internal/xxh64"

// Part is the checksum of one registered component or resource type. Users
// meet it as snapshot.Part and rollback.Part (aliases whose doc comments
// repeat these fields, since go doc shows an alias without them).
type Part struct {
	// Name is the type's package path and name; snapshot prefixes resources
	// with "resource " and names the entity allocator "ecs.entities".
	Name string
	// Sum is the type's checksum.
	Sum uint64
}

// Diff returns the names of the parts that differ between a and b, including
// parts present in only one of them, in the order of a then b.
func Diff(a, b []Part) []string {
	var out []string
	for _, pa := range a {
		found := false
		for _, pb := range b {
			if pb.Name == pa.Name {
				found = true
				if pb.Sum != pa.Sum {
					out = append(out, pa.Name)
				}
				break
			}
		}
		if !found {
			out = append(out, pa.Name)
		}
	}
	for _, pb := range b {
		found := false
		for _, pa := range a {
			if pa.Name == pb.Name {
				found = true
				break
			}
		}
		if !found {
			out = append(out, pb.Name)
		}
	}
	return out
}

// Combine folds parts into one frame checksum. Each part is mixed with the
// hash of its name and the results are added, so equal parts of different
// types never cancel and the result does not depend on the parts' order.
func Combine(ps []Part) uint64 {
	var sum uint64
	for _, p := range ps {
		sum += xxh64.Mix64(xxh64.Sum64([]byte(p.Name)) ^ p.Sum)
	}
	return sum
}
