package input

// Input reports: the server's account, to one client, of when that
// client's input messages arrived and which were lost. Tick sync steers by
// them (ticksync.Sync.Report): the client learns how early its inputs arrive,
// from the only side that can tell.

import (
	"encoding/binary"
	"math"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
)

// MaxReportArrivals bounds Report.Arrivals; a report with more is
// malformed. The server keeps the newest arrivals when more came between
// two reports.
const MaxReportArrivals = 16

// Report is the server's report to one client about its input
// messages, sent unreliably every Config.ReportInterval ticks and in
// the tick after one of its inputs was missing or late (so that a late
// input is never silent).
type Report struct {
	// Tick is the server tick whose frame sent the report.
	Tick tick.Tick
	// Newest is the newest input message received from the client: its
	// Batch.Last.
	Newest tick.Tick
	// Lost has bit i set when no message with Last = Newest-1-i was
	// received (i from 0 to 63): the client's messages are one per tick,
	// so a clear bit acknowledges a message and a set one reports it
	// lost, or not sent (a tick without input), or still in flight.
	Lost uint64
	// Arrivals are the messages received since the previous report, in
	// arrival order (the newest MaxReportArrivals).
	Arrivals []Arrival
	// Missing and Late are the client's Stats counters at the server
	// when the report was sent: ticks simulated without the client's
	// input, and inputs that came after their tick was simulated.
	Missing, Late uint64
}

// Arrival is one input message's arrival at the server.
type Arrival struct {
	// Last is the message's newest input tick (Batch.Last).
	Last tick.Tick
	// Margin is Last minus the tick the server was about to simulate when
	// the message arrived: 0 means just in time, 2 two ticks early, -1 one
	// tick late. The server reads messages once per tick, so a margin m
	// means the message arrived between m and m+1 ticks before its tick
	// was simulated.
	Margin int32
}

// reportCodec encodes Report messages: uvarint Tick, varint
// (Newest-Tick as int32), uvarint Lost, uvarint count (at most
// MaxReportArrivals), per arrival uvarint (Newest-Last, below 2^31) and
// varint Margin (an int32), then uvarint Missing and Late. Every varint
// is minimal (package internal/bin).
type reportCodec struct{}

func (reportCodec) Append(dst []byte, r *Report) []byte {
	arr := r.Arrivals
	if len(arr) > MaxReportArrivals {
		arr = arr[len(arr)-MaxReportArrivals:]
	}
	dst = binary.AppendUvarint(dst, uint64(r.Tick))
	dst = binary.AppendVarint(dst, int64(r.Newest.Sub(r.Tick)))
	dst = binary.AppendUvarint(dst, r.Lost)
	dst = binary.AppendUvarint(dst, uint64(len(arr)))
	for _, a := range arr {
		back := r.Newest.Sub(a.Last)
		if back < 0 {
			back = 0 // not newer than Newest by construction
		}
		dst = binary.AppendUvarint(dst, uint64(back))
		dst = binary.AppendVarint(dst, int64(a.Margin))
	}
	dst = binary.AppendUvarint(dst, r.Missing)
	return binary.AppendUvarint(dst, r.Late)
}

func (reportCodec) Decode(src []byte, r *Report) error {
	rd := bin.NewReader(src)
	t := rd.Uvarint32()
	d := rd.Varint()
	lost := rd.Uvarint()
	n := rd.Count(MaxReportArrivals)
	if rd.Err() != nil || d < math.MinInt32 || d > math.MaxInt32 {
		return ErrMalformed
	}
	r.Tick, r.Newest, r.Lost = tick.Tick(t), tick.Tick(t).Add(int32(d)), lost
	r.Arrivals = r.Arrivals[:0]
	for range n {
		back := rd.Uvarint()
		m := rd.Varint()
		if rd.Err() != nil || back > math.MaxInt32 || m < math.MinInt32 || m > math.MaxInt32 {
			return ErrMalformed
		}
		r.Arrivals = append(r.Arrivals, Arrival{Last: r.Newest.Add(-int32(back)), Margin: int32(m)})
	}
	r.Missing, r.Late = rd.Uvarint(), rd.Uvarint()
	if rd.End() != nil {
		return ErrMalformed
	}
	return nil
}
