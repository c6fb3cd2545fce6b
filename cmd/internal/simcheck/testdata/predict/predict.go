// Package predict is a stand-in for rewind's predict.
package predict

// Timeline is a client timeline.
type Timeline struct{}

// Step runs sim for the ticks to simulate.
func (tl *Timeline) Step(sim func(t uint32)) {}

// ServerFrame is a server's frame.
type ServerFrame[T any] struct{}

// Frame runs sim for tick t.
func (f *ServerFrame[T]) Frame(t uint32, sim func(t uint32, input func(id uint64) T)) error {
	return nil
}

// Helper is library code, not followed: the analyzer trusts rewind's library.
func Helper() {
	m := map[int]int{}
	for range m {
	}
}
