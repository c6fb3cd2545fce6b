package quant

import "errors"

// Errors of the decoders; compare with errors.Is. The constructors' errors
// wrap ErrParam with the offending parameter.
var (
	// ErrParam: a constructor's parameters cannot make a quantizer.
	ErrParam = errors.New("quant: invalid parameters")
	// ErrCode: a code is out of its quantizer's range, or is not the code
	// the quantizer gives the value it decodes to (so that it would not
	// re-encode to itself).
	ErrCode = errors.New("quant: invalid code")
	// ErrSize: the bytes end inside a field, or whole bytes follow the
	// last field.
	ErrSize = errors.New("quant: encoding has the wrong length")
	// ErrPadding: the bits after the last field, up to the byte boundary,
	// are not all zero.
	ErrPadding = errors.New("quant: non-zero padding bits")
)
