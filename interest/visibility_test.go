package interest_test

import (
	"github.com/rewindgo/rewind/interest"
	"github.com/rewindgo/rewind/replicate"
)

// The server and a Union are what the sources apply into.
var (
	_ interest.Visibility = (*replicate.Server)(nil)
	_ interest.Visibility = (*interest.Union)(nil)
)
