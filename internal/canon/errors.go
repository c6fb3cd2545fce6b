package canon

import "errors"

// ErrNotPlain reports a type that holds pointers (or strings, slices, maps,
// channels, funcs, interfaces, uintptrs) and so has no canonical form.
var ErrNotPlain = errors.New("not plain data")

// NotPlainError names the field that makes a type not plain data; it
// matches ErrNotPlain with errors.Is.
type NotPlainError struct {
	Path, Kind string
}

func (e *NotPlainError) Error() string { return e.Path + " is a " + e.Kind }

// Is makes errors.Is(err, ErrNotPlain) true.
func (e *NotPlainError) Is(target error) bool { return target == ErrNotPlain }
