package interest

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// Visibility is what this package drives: per-client visibility of
// entities. *replicate.Server satisfies it, and so does *Union, which
// combines several sources; tests record the calls through it.
type Visibility interface {
	SetVisible(id replicate.ClientID, e ecs.Entity, visible bool) error
}

// applyError wraps an error of Visibility.SetVisible with the call that
// failed.
func applyError(id replicate.ClientID, e ecs.Entity, visible bool, err error) error {
	return fmt.Errorf("interest: SetVisible(client %d, entity %v, %t): %w", id, e, visible, err)
}
