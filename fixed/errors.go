package fixed

import "errors"

// Errors returned, wrapped, by [Parse].
var (
	// ErrSyntax: the text is not a decimal number.
	ErrSyntax = errors.New("fixed: invalid syntax")
	// ErrRange: the number is outside [Min, Max].
	ErrRange = errors.New("fixed: value out of range")
)
