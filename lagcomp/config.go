package lagcomp

// Config configures a History. The zero value is usable: every field has
// a default.
type Config struct {
	// Ticks is how many ticks the history holds, the newest included:
	// the oldest claim honoured. Default 60 (one second at 60 ticks per
	// second, the bound Source engine servers use by default).
	Ticks int
}

// DefaultTicks is Config.Ticks' default.
const DefaultTicks = 60

func (c Config) withDefaults() Config {
	if c.Ticks <= 0 {
		c.Ticks = DefaultTicks
	}
	return c
}
