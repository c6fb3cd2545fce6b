package runner

import "errors"

// Errors of the runner; compare with errors.Is.
var (
	// ErrConfig wraps configuration errors of New.
	ErrConfig = errors.New("runner: invalid config")
	// ErrRequestOrder: a Save or Advance request named a frame other than
	// the world's current frame (a session bug, or a hand-built request
	// list that is not consistent).
	ErrRequestOrder = errors.New("runner: request out of order")
)
