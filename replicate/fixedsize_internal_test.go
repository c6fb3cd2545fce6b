package replicate

import (
	"strings"
	"testing"
)

type threeBytes struct{ A, B, C uint8 }

// fixedCodec encodes threeBytes in n bytes (3 keeps its word).
type fixedCodec struct{ n int }

func (c fixedCodec) Append(dst []byte, v *threeBytes) []byte {
	return append(dst, []byte{v.A, v.B, v.C, 0, 0}[:c.n]...)
}

func (fixedCodec) Decode(src []byte, v *threeBytes) error {
	if len(src) != 3 {
		return errValue
	}
	v.A, v.B, v.C = src[0], src[1], src[2]
	return nil
}

func (fixedCodec) FixedSize() int { return 3 }

// A codec that says its size travels without a length prefix, and its
// size is part of the protocol hash; one that breaks its word stops the
// send with a panic naming the type rather than corrupt the messages.
func TestFixedSizeCodec(t *testing.T) {
	spec, _, fixed, err := resolveSpec[threeBytes]([]ComponentOption{WithCodec[threeBytes](fixedCodec{n: 3}, "three")})
	if err != nil || fixed != 3 || !strings.HasSuffix(spec.codecTag, ":fixed3") {
		t.Fatalf("fixed %d, tag %q, err %v; want 3 and a :fixed3 tag", fixed, spec.codecTag, err)
	}
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, "threeBytes appended 5 bytes, its FixedSize is 3") {
			t.Fatalf("panic %v, want one naming the type and the sizes", r)
		}
	}()
	checkFixed(fixed, len(fixedCodec{n: 5}.Append(nil, &threeBytes{})), "threeBytes")
}
