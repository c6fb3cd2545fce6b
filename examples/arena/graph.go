package main

import "time"

// graphSamples is how many frames the net graph shows: 4 s at 60 frames
// per second.
const graphSamples = 240

// sample is one frame's figures for the net graph.
type sample struct {
	ping        time.Duration
	in, out     uint64 // bytes received and sent during the frame
	dt          time.Duration
	ahead       int32 // ticks the client runs ahead of the newest server tick
	depth       int   // ticks re-simulated during the frame (rollback depth)
	corrections int   // corrections made during the frame
}

// netGraph holds the last graphSamples samples, oldest first.
type netGraph struct {
	s    [graphSamples]sample
	next int
	n    int
}

func (g *netGraph) add(s sample) {
	g.s[g.next] = s
	g.next = (g.next + 1) % graphSamples
	g.n = min(g.n+1, graphSamples)
}

// at returns the i-th sample, 0 the oldest held.
func (g *netGraph) at(i int) sample {
	return g.s[(g.next-g.n+i+graphSamples)%graphSamples]
}

// last returns the newest sample.
func (g *netGraph) last() sample {
	if g.n == 0 {
		return sample{}
	}
	return g.at(g.n - 1)
}

// rates returns the bytes per second received and sent over the last
// second of samples.
func (g *netGraph) rates() (in, out float64) {
	var bi, bo uint64
	var dt time.Duration
	for i := g.n - 1; i >= 0 && dt < time.Second; i-- {
		s := g.at(i)
		bi, bo, dt = bi+s.in, bo+s.out, dt+s.dt
	}
	if dt <= 0 {
		return 0, 0
	}
	return float64(bi) / dt.Seconds(), float64(bo) / dt.Seconds()
}
