// Package helper is called by sim code of another package.
package helper

import "time"

// Stamp reads the wall clock.
func Stamp() int64 { // want Stamp:"sim findings: 1"
	return time.Now().UnixNano()
}

// Deeper calls Stamp.
func Deeper() int64 { // want Deeper:"sim findings: 1"
	return Stamp() + 1
}

// Pure does nothing wrong.
func Pure(a, b int) int { return a + b }
