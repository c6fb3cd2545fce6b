package canon

import "unsafe"

// Field access: the primitive fields of a form one by one, as a delta
// codec needs them (a field that did not change costs a bit).

// Fields is the number of primitive fields of the form, in declaration
// order (array elements one by one; a complex number counts as two).
func (l *Form) Fields() int { return len(l.fields) }

// FieldWidth is the width of field i in the canonical form, in bytes: 1,
// 2, 4 or 8 (8 for a platform int or uint, whatever its size in memory).
func (l *Form) FieldWidth(i int) int {
	if l.fields[i].widen {
		return 8
	}
	return int(l.fields[i].size)
}

// Field returns the canonical bytes of field i of the value at p as a
// little-endian number of FieldWidth(i) bytes (the higher bits are zero).
func (l *Form) Field(p unsafe.Pointer, i int) uint64 {
	f := &l.fields[i]
	q := unsafe.Add(p, f.off)
	switch f.size {
	case 1:
		return uint64(*(*uint8)(q))
	case 2:
		return uint64(*(*uint16)(q))
	case 4:
		if f.widen && f.signed {
			return uint64(int64(*(*int32)(q)))
		}
		return uint64(*(*uint32)(q))
	}
	return *(*uint64)(q)
}
