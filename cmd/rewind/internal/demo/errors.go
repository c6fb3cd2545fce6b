package demo

import "errors"

// ErrConfig wraps invalid game configurations and recording metadata.
var ErrConfig = errors.New("demo: invalid config")
