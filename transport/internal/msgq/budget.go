package msgq

import "sync"

// Budget is a listener's cap on the bytes its conns buffer together beyond
// their own allowance: what a server holds of received messages is then
// bounded by conns × allowance + the budget's limit, and a conn that keeps
// its few messages within its allowance never depends on what the others
// hold. It is safe for concurrent use.
type Budget struct {
	mu    sync.Mutex
	used  int
	limit int
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int) *Budget { return &Budget{limit: limit} }

// Limit returns the budget's limit in bytes.
func (b *Budget) Limit() int { return b.limit }

// Used returns the bytes drawn now.
func (b *Budget) Used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// take draws n bytes, or reports false when that would pass the limit.
func (b *Budget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes.
func (b *Budget) give(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// Draw is one conn's draw on its listener's Budget: what it buffers
// beyond its allowance. The zero Draw, and one on a nil Budget (a dialed
// conn), never refuses. It is not safe for concurrent use (the conn's lock
// guards it).
type Draw struct {
	budget    *Budget
	allowance int
	charged   int
}

// NewDraw returns a conn's draw on b, beyond allowance bytes of its own.
func NewDraw(b *Budget, allowance int) Draw { return Draw{budget: b, allowance: allowance} }

// Set brings the draw in line with the conn buffering buffered bytes. It
// reports false, changing nothing, when the budget cannot cover an
// increase. Set(0) returns everything drawn.
func (d *Draw) Set(buffered int) bool {
	if d.budget == nil {
		return true
	}
	want := max(0, buffered-d.allowance)
	switch n := want - d.charged; {
	case n > 0 && !d.budget.take(n):
		return false
	case n < 0:
		d.budget.give(-n)
	}
	d.charged = want
	return true
}

// Limit returns the limit of the budget drawn on (0 for none).
func (d *Draw) Limit() int {
	if d.budget == nil {
		return 0
	}
	return d.budget.limit
}
