// Package runner is a stand-in for rewind's rollback/runner: the names the
// analyzer looks for.
package runner

// Context is what a Step sees.
type Context struct{ Frame int }

// Step simulates one frame.
type Step func(ctx *Context)

// Config configures a runner.
type Config struct {
	Step  Step
	Other func(ctx *Context)
}

// New returns a runner.
func New(cfg Config) {}

// Run runs s.
func Run(s Step) {}
