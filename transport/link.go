package transport

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"net/netip"
	"time"
)

// normalized returns c with out-of-range values clamped and defaults filled in.
func (c LinkConfig) normalized() LinkConfig {
	c.Latency = max(c.Latency, 0)
	c.Jitter = max(c.Jitter, 0)
	c.Loss = clampProb(c.Loss)
	c.Duplicate = clampProb(c.Duplicate)
	c.Reorder = clampProb(c.Reorder)
	if c.ReorderDelay <= 0 {
		c.ReorderDelay = DefaultReorderDelay
	}
	c.BandwidthBytesPerSec = max(c.BandwidthBytesPerSec, 0)
	if c.QueueBytes <= 0 {
		c.QueueBytes = DefaultQueueBytes
	}
	return c
}

func clampProb(p float64) float64 {
	if math.IsNaN(p) || p < 0 {
		return 0
	}
	return min(p, 1)
}

// LinkStats counts what one direction of a link did with the datagrams sent
// over it.
type LinkStats struct {
	// Sent and SentBytes count the datagrams (and payload bytes) offered to
	// the link.
	Sent, SentBytes uint64
	// Delivered counts datagrams, duplicates included, handed to the
	// destination: queued at the destination PacketNetworkConn (which may still drop
	// them when its receive queue is full, see Stats.DroppedQueueFull) or
	// written to the destination socket by a Proxy.
	Delivered uint64
	// Lost counts datagrams dropped by LinkConfig.Loss.
	Lost uint64
	// Duplicated counts the extra copies created by LinkConfig.Duplicate.
	Duplicated uint64
	// Reordered counts datagrams held back by LinkConfig.Reorder. Whether a
	// later datagram actually overtook one depends on the send times.
	Reordered uint64
	// DroppedDown counts datagrams dropped because the link was down or the
	// endpoints were partitioned.
	DroppedDown uint64
	// DroppedQueue counts datagrams dropped because the bandwidth queue
	// (LinkConfig.QueueBytes) or the in-flight limit was full.
	DroppedQueue uint64
	// Unreachable counts datagrams that arrived but could not be handed
	// over: no PacketNetworkConn listened on the destination address, or a Proxy's
	// socket write failed.
	Unreachable uint64
}

// link is the conditioner shared by PacketNetwork and Proxy: the state of one
// direction of one link. It decides, for every datagram, whether it is
// dropped and when each copy arrives. It owns its random number generator,
// seeded from the owner's seed and the link's identity, so a link's
// decisions do not depend on traffic on other links.
//
// link does no locking: its owner guards it.
type link struct {
	cfg    LinkConfig // normalized
	custom bool       // cfg was set explicitly, not inherited from a default

	partitioned bool
	rng         *rand.Rand
	busyUntil   time.Duration // when the bandwidth queue drains
	stats       LinkStats
}

func newLink(seed, stream uint64, cfg LinkConfig) *link {
	return &link{cfg: cfg.normalized(), rng: rand.New(rand.NewPCG(seed, stream))}
}

// linkStream derives a PCG stream constant from a link's endpoints with
// FNV-1a, so that it is stable across processes and Go versions.
func linkStream(from, to netip.AddrPort) uint64 {
	h := uint64(14695981039346656037)
	add := func(a netip.AddrPort) {
		b := a.Addr().As16()
		for _, c := range b {
			h = (h ^ uint64(c)) * 1099511628211
		}
		h = (h ^ uint64(a.Port()>>8)) * 1099511628211
		h = (h ^ uint64(a.Port()&0xff)) * 1099511628211
	}
	add(from)
	add(to)
	return h
}

// unit returns a uniform float64 in [0, 1) built from the top 53 bits of one
// Uint64, defined here so a Go upgrade cannot change the sequence.
func (l *link) unit() float64 {
	return float64(l.rng.Uint64()>>11) * (1.0 / (1 << 53))
}

// jitter returns a uniform duration in [-j, +j] from one Uint64 draw.
func (l *link) jitter(j time.Duration) time.Duration {
	u := l.rng.Uint64()
	if j <= 0 {
		return 0
	}
	hi, _ := bits.Mul64(u, uint64(2*j+1))
	return time.Duration(hi) - j
}

// plan decides the fate of one datagram of size payload bytes offered to the
// link at time now (measured from the owner's epoch). It returns how many
// copies to deliver (0, 1 or 2) and their arrival times, and updates the
// link's statistics.
//
// Every call consumes exactly five random numbers whatever the configuration,
// so the loss pattern of a seed does not change when, say, jitter is added.
func (l *link) plan(now time.Duration, size int) (n int, at [2]time.Duration) {
	n, at, _ = l.decide(now, size, false)
	return n, at
}

// fate says what became of one transmission offered to a link.
type fate uint8

const (
	fateDelivered fate = iota // one or two copies will arrive
	fateDown                  // dropped: link down or partitioned
	fateQueue                 // dropped: bandwidth queue full
	fateLost                  // dropped: LinkConfig.Loss
)

// decide is plan with the reason for a drop, for one transmission of size
// bytes. With reliable set, it models one transmission attempt of a
// reliable message: the bandwidth queue is unbounded (the sender buffers
// reliable data itself, bounded by its send queue) and duplication does not
// apply (a reliable transport discards duplicates), though the random number
// for it is still drawn. It consumes exactly five random numbers either way.
func (l *link) decide(now time.Duration, size int, reliable bool) (n int, at [2]time.Duration, f fate) {
	uLoss, uDup, uReorder := l.unit(), l.unit(), l.unit()
	j0, j1 := l.jitter(l.cfg.Jitter), l.jitter(l.cfg.Jitter)
	c := &l.cfg

	l.stats.Sent++
	l.stats.SentBytes += uint64(size)
	if c.Down || l.partitioned {
		l.stats.DroppedDown++
		return 0, at, fateDown
	}
	depart := now
	if bw := c.BandwidthBytesPerSec; bw > 0 {
		start := max(now, l.busyUntil)
		backlog := int64(start-now) * bw / int64(time.Second) // bytes not yet serialised
		if !reliable && backlog+int64(size) > c.QueueBytes {
			l.stats.DroppedQueue++
			return 0, at, fateQueue
		}
		l.busyUntil = start + time.Duration(int64(size)*int64(time.Second)/bw)
		depart = l.busyUntil
	}
	if uLoss < c.Loss {
		l.stats.Lost++
		return 0, at, fateLost
	}
	at[0] = depart + max(c.Latency+j0, 0)
	if uReorder < c.Reorder {
		at[0] += c.ReorderDelay
		l.stats.Reordered++
	}
	n = 1
	if !reliable && uDup < c.Duplicate {
		at[1] = depart + max(c.Latency+j1, 0)
		l.stats.Duplicated++
		n = 2
	}
	return n, at, fateDelivered
}
