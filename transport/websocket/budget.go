package websocket

import "sync"

// budget is a listener's cap on the bytes its conns buffer together beyond
// their own allowance (connAllowance each), as in transport/quic.
type budget struct {
	mu    sync.Mutex
	used  int
	limit int
}

// take draws n bytes, or reports false when that would pass the limit.
func (b *budget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes.
func (b *budget) give(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}
