package metrics

import "sort"

// Histogram counts observations in buckets of fixed upper bounds, the
// last bucket (+Inf) catching the rest. Observe allocates nothing.
type Histogram struct {
	// Bounds are the buckets' upper bounds, increasing (le in
	// Prometheus's terms); Counts has one more entry, for +Inf. Counts are
	// per bucket, not cumulative.
	Bounds []float64
	Counts []uint64
	// Count and Sum are the number and the sum of the observations.
	Count uint64
	Sum   float64
}

// NewHistogram returns an empty histogram with the given upper bounds,
// which it copies and sorts.
func NewHistogram(bounds []float64) Histogram {
	b := append([]float64(nil), bounds...)
	sort.Float64s(b)
	return Histogram{Bounds: b, Counts: make([]uint64, len(b)+1)}
}

// Observe adds one observation.
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.Bounds, v) // first bound >= v
	h.Counts[i]++
	h.Count++
	h.Sum += v
}

// CopyTo copies h into dst, reusing dst's storage.
func (h *Histogram) CopyTo(dst *Histogram) {
	dst.Bounds = append(dst.Bounds[:0], h.Bounds...)
	dst.Counts = append(dst.Counts[:0], h.Counts...)
	dst.Count, dst.Sum = h.Count, h.Sum
}

// Quantile estimates the q-quantile (0..1) by linear interpolation within
// its bucket, as Prometheus's histogram_quantile does; 0 when empty, the
// highest bound when it falls in the +Inf bucket.
func (h *Histogram) Quantile(q float64) float64 {
	if h.Count == 0 {
		return 0
	}
	rank := q * float64(h.Count)
	var cum uint64
	for i, c := range h.Counts {
		if c == 0 || float64(cum+c) < rank {
			cum += c
			continue
		}
		if i == len(h.Bounds) {
			return h.Bounds[len(h.Bounds)-1]
		}
		lo := 0.0
		if i > 0 {
			lo = h.Bounds[i-1]
		}
		return lo + (h.Bounds[i]-lo)*(rank-float64(cum))/float64(c)
	}
	return h.Bounds[len(h.Bounds)-1]
}

// RTTBuckets are the default bounds of round-trip time histograms, in
// seconds: 5 ms to 1 s.
func RTTBuckets() []float64 {
	return []float64{0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1}
}

// TickBuckets are the default bounds of tick duration histograms, in
// seconds: 0.1 ms to 33 ms (two 60 Hz ticks).
func TickBuckets() []float64 {
	return []float64{0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.004, 0.00833, 0.0125, 0.01667, 0.025, 0.0333}
}

// DepthBuckets are the default bounds of rollback depth histograms, in
// ticks.
func DepthBuckets() []float64 {
	return []float64{1, 2, 3, 4, 6, 8, 12, 16, 24, 32}
}
