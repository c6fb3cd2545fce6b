package rollback

import (
	"slices"
	"strings"
	"testing"
)

// TestShortNames: names that fit are kept; longer ones are cut to exactly
// max bytes and stay distinct when they share their first max bytes; a
// comparison against short names reports the full local names of exactly
// the differing parts, and remote-only parts by their short names.
func TestShortNames(t *testing.T) {
	long := strings.Repeat("x", 300)
	a, b := long+"A", long+"B"
	for _, max := range []int{64, 255} {
		if got := shortName("Pos", max); got != "Pos" {
			t.Fatalf("shortName(Pos) = %q", got)
		}
		sa, sb := shortName(a, max), shortName(b, max)
		if len(sa) != max || len(sb) != max || sa == sb {
			t.Fatalf("max %d: short names %q and %q", max, sa, sb)
		}
		local := []Part{{Name: "Pos", Sum: 1}, {Name: a, Sum: 2}, {Name: b, Sum: 3}}
		remote := []Part{{Name: "Pos", Sum: 1}, {Name: sa, Sum: 2}, {Name: sb, Sum: 4}, {Name: "Extra", Sum: 5}}
		if got, want := diffShort(local, remote, max), []string{b, "Extra"}; !slices.Equal(got, want) {
			t.Fatalf("max %d: diffShort = %q, want %q", max, got, want)
		}
		if got := diffShort(local, remote[:3], max); !slices.Equal(got, []string{b}) {
			t.Fatalf("max %d: diffShort = %q, want only the second long name", max, got)
		}
	}
}
