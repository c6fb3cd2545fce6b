package fixed

import (
	"errors"
	"testing"
)

// FuzzParse: Parse returns a wrapped ErrSyntax or ErrRange or a value
// whose String parses back to it. Text has many spellings of one value
// ("1.5", "1.50", "15e-1"), so the check is value -> String -> value,
// not bytes -> value -> the same bytes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "-1.5", ".5", "2147483647.9999999998", "0.000000000116415321826934814453125", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrRange) {
				t.Fatalf("Parse(%q): unexpected error %v", s, err)
			}
			return
		}
		if back, err := Parse(a.String()); err != nil || back != a {
			t.Fatalf("Parse(%q) = %d, whose String %q parses as %d, %v", s, a, a.String(), back, err)
		}
	})
}
