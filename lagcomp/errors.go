package lagcomp

import "errors"

// ErrNotPlainData is returned by Track for a type that holds pointers:
// its values cannot be kept as memory copies.
var ErrNotPlainData = errors.New("lagcomp: type is not plain data")

// ErrTracked is returned by Track for a type the History tracks already.
var ErrTracked = errors.New("lagcomp: type tracked already")
