package predict_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeExample: the client/server prediction example in README.md is
// the body of Example_readme (between its README markers), which compiles
// and runs with the package's tests: the README's code cannot rot.
func TestReadmeExample(t *testing.T) {
	src, err := os.ReadFile("example_readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := between(t, string(src), "\t// README:begin\n", "\t// README:end\n")
	var want strings.Builder
	for line := range strings.Lines(body) {
		want.WriteString(strings.TrimPrefix(line, "\t")) // the function's indentation
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	got := between(t, string(readme), "<!-- predict/example_readme_test.go -->\n```go\n", "```\n")
	if got != want.String() {
		t.Errorf("README.md's prediction example differs from Example_readme in example_readme_test.go; README has:\n%s\nthe example:\n%s", got, want.String())
	}
	if n := strings.Count(got, "\n"); n >= 50 {
		t.Errorf("the README example is %d lines, want under 50", n)
	}
}

// between returns the text of s between the first start and the next end.
func between(t *testing.T, s, start, end string) string {
	t.Helper()
	_, after, ok := strings.Cut(s, start)
	if !ok {
		t.Fatalf("no %q", start)
	}
	body, _, ok := strings.Cut(after, end)
	if !ok {
		t.Fatalf("no %q after %q", end, start)
	}
	return body
}
