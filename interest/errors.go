package interest

import "errors"

var (
	// ErrUnbalanced: Union.SetVisible(id, e, false) for a pair no source
	// shows (more hides than shows).
	ErrUnbalanced = errors.New("interest: hidden more often than shown")
	// ErrConfig: a GridConfig field is negative, infinite or NaN.
	ErrConfig = errors.New("interest: invalid configuration")
)
