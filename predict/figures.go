package predict

// StatsTo fills *s with the counters, as Stats returns them, reusing the
// storage of s.Types: for a metrics recorder that samples every frame
// without allocating.
func (tl *Timeline) StatsTo(s *Stats) {
	types := s.Types[:0]
	*s = tl.stats
	s.HistoryBytes = 0
	for _, h := range tl.types {
		ts := h.stats()
		types = append(types, ts)
		s.HistoryBytes += ts.HistoryBytes
	}
	s.Types = types
}
