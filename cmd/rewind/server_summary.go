package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/replicate"
)

// serverSummary is the result of a server demo run (the JSON printed with
// --json).
type serverSummary struct {
	Mode string `json:"mode"`
	// Ticks is the number of simulated ticks; ServerTicks counts every
	// server tick, including those while clients connected and the drain.
	Ticks       int     `json:"ticks"`
	Priority    float64 `json:"priority"`
	ServerTicks int     `json:"server_ticks"`
	Clients     int     `json:"clients"`
	// Entities is the number of replicated entities at the end;
	// TargetEntities the population the server keeps.
	Entities       int `json:"entities"`
	TargetEntities int `json:"target_entities"`
	// Spawned and Despawned count the entities created and destroyed
	// while the simulation ran (besides the initial population).
	Spawned   int `json:"spawned"`
	Despawned int `json:"despawned"`
	// DurationSec is the whole run; ConnectSec the time until every
	// client was connected; DrainSec how long the server ticked without
	// changes at the end.
	DurationSec float64 `json:"duration_sec"`
	ConnectSec  float64 `json:"connect_sec"`
	DrainSec    float64 `json:"drain_sec"`
	// BytesPerSecPerClient is the mean rate of replication messages the
	// server sent each client since all were connected (the join's
	// handshake and full state left out); UDPBytesPerSecPerClient the
	// same for the UDP payload (QUIC included) that reached each client's
	// proxy from the server. BytesOut counts the run's bytes too.
	BytesPerSecPerClient    float64 `json:"bytes_per_sec_per_client"`
	UDPBytesPerSecPerClient float64 `json:"udp_bytes_per_sec_per_client"`
	// Resent counts the entity mutations resent after a timeout, summed
	// over the clients.
	Resent uint64 `json:"resent"`
	// RTTMS is each client's smoothed round trip measured by QUIC on the
	// server's side.
	RTTMS []float64 `json:"rtt_ms"`
	// Converged: at the end, every client held exactly the server's
	// replicated components of every replicated entity (mapped back to
	// server entities). FirstDifference says what differed otherwise.
	Converged       bool   `json:"converged"`
	FirstDifference string `json:"first_difference,omitempty"`
	// RNGEqual: at the end (the state of the last simulated tick, which
	// every client holds after the drain), every client's RNG state, the
	// world's generator and every entity's stream, equals the server's.
	RNGEqual bool `json:"rng_equal"`
	// DisruptSec is how long client 0 was cut off (--disrupt), from
	// DisruptAtTick on (a simulation tick).
	DisruptSec    float64 `json:"disrupt_sec,omitempty"`
	DisruptAtTick int     `json:"disrupt_at_tick,omitempty"`
	// Resyncs counts the resyncs the server sent, over all clients, and
	// ResyncReasons says why, in order.
	Resyncs       uint64   `json:"resyncs"`
	ResyncReasons []string `json:"resync_reasons,omitempty"`
	// MessagesOK: the server got every client's pings exactly once and in
	// order, and every client got every echo exactly once and in order.
	MessagesOK  bool                  `json:"messages_ok"`
	Pings       int                   `json:"pings"`
	Echoes      int                   `json:"echoes"`
	Link        linkSummary           `json:"link"`
	ClientStats []serverClientSummary `json:"client_stats"`
	Events      []string              `json:"events,omitempty"`
	Interrupted bool                  `json:"interrupted,omitempty"`
}

// serverClientSummary describes one client of a server demo.
type serverClientSummary struct {
	ID             uint64  `json:"id"`
	RTTMS          float64 `json:"rtt_ms"`
	BytesOut       uint64  `json:"bytes_out"`
	BytesPerSec    float64 `json:"bytes_per_sec"`
	UDPBytesPerSec float64 `json:"udp_bytes_per_sec"`
	// Bytes is where the bytes per second go (bytes_summary.go).
	Bytes            byteRates `json:"bytes"`
	MutationMessages uint64    `json:"mutation_messages"`
	Resent           uint64    `json:"resent"`
	Violations       uint64    `json:"violations"`
	Entities         int       `json:"entities"`
	// Updates, Mutations and Stale are the client's counts of update
	// messages, mutation messages applied and stale values dropped.
	Updates   uint64 `json:"updates"`
	Mutations uint64 `json:"mutations"`
	Stale     uint64 `json:"stale"`
	// LostUp and LostDown count the datagrams its proxy dropped (loss);
	// CutUp and CutDown those it dropped while cut off (--disrupt).
	LostUp      uint64  `json:"lost_up"`
	LostDown    uint64  `json:"lost_down"`
	CutUp       uint64  `json:"cut_up,omitempty"`
	CutDown     uint64  `json:"cut_down,omitempty"`
	PingsSent   int     `json:"pings_sent"`
	EchoesGot   int     `json:"echoes_received"`
	EchoRTTMS   float64 `json:"echo_rtt_ms"`
	Converged   bool    `json:"converged"`
	RNGEqual    bool    `json:"rng_equal"`
	MessagesOK  bool    `json:"messages_ok"`
	Disconnects int     `json:"disconnects,omitempty"`
	// Resyncs counts the resyncs the client applied, ResyncRequests the
	// resync requests it sent.
	Resyncs        uint64 `json:"resyncs"`
	ResyncRequests uint64 `json:"resync_requests"`
}

// ok reports a successful run.
func (s *serverSummary) ok() bool { return s.Converged && s.RNGEqual && s.MessagesOK && !s.Interrupted }

// finish fills the summary from the final state of the demo, before it is
// shut down: statistics, message checks and the comparison of every
// client's state with the server's.
func (d *serverDemo) finish(sum *serverSummary, start time.Time) {
	end := time.Now()
	sum.DurationSec = round3(end.Sub(start).Seconds())
	sum.ServerTicks = d.ticks
	sum.Entities = d.arena.Entities()
	st := d.arena.Stats()
	sum.Spawned, sum.Despawned = st.Spawned, st.Despawned
	sum.Echoes = len(d.echoes)
	sum.Events = d.events
	elapsed := end.Sub(d.runStart).Seconds()
	if d.runStart.IsZero() || elapsed <= 0 {
		elapsed = end.Sub(start).Seconds()
	}
	want := demo.ArenaView(d.arena.World(), nil)
	sum.Converged, sum.MessagesOK, sum.RNGEqual = true, true, true
	sum.ResyncReasons = d.resyncs
	if d.o.Disrupt > 0 {
		sum.DisruptSec, sum.DisruptAtTick = round3(d.o.Disrupt.Seconds()), d.cutAt()
	}
	var rate, udp float64
	for _, dc := range d.clients {
		cs := serverClientSummary{PingsSent: len(dc.pingsSent), EchoesGot: len(dc.echoes)}
		sum.Pings += len(dc.pingsSent)
		ss, down, err := dc.runStats(d.srv)
		if err == nil {
			cs.ID = uint64(dc.id)
			cs.RTTMS = ms(ss.RTT)
			cs.BytesOut = ss.BytesOut
			cs.BytesPerSec = round3(float64(ss.BytesOut) / elapsed)
			cs.Bytes = newByteRates(ss, elapsed)
			cs.MutationMessages = ss.MutationMessages
			cs.Resent = ss.Resent
			cs.Violations = ss.Violations
			sum.Resyncs += ss.Resyncs
		}
		ps := dc.proxy.Stats()
		cs.UDPBytesPerSec = round3(float64(down) / elapsed)
		cs.LostUp, cs.LostDown = ps.Up.Lost, ps.Down.Lost
		cs.CutUp, cs.CutDown = ps.Up.DroppedDown, ps.Down.DroppedDown
		ct := dc.rc.Stats()
		cs.Entities = dc.rc.Entities()
		cs.Updates, cs.Mutations, cs.Stale = ct.Updates, ct.Mutations, ct.Stale
		cs.Resyncs, cs.ResyncRequests = ct.Resyncs, ct.ResyncRequests
		if dc.echoN > 0 {
			cs.EchoRTTMS = ms(dc.echoRTT / time.Duration(dc.echoN))
		}
		cs.Disconnects = len(dc.events)
		sum.Events = append(sum.Events, dc.events...)

		diff := demo.DiffArenaViews(want, demo.ArenaView(dc.world, dc.rc.ServerEntity))
		cs.Converged = diff == "" && dc.rc.State() == replicate.Connected
		if !cs.Converged && sum.FirstDifference == "" {
			if diff == "" {
				diff = "client " + dc.rc.State().String()
			}
			sum.FirstDifference = fmt.Sprintf("client %d: %s", dc.idx, diff)
		}
		if rd := d.rngDiff(dc); rd != "" {
			if sum.FirstDifference == "" {
				sum.FirstDifference = fmt.Sprintf("client %d: %s", dc.idx, rd)
			}
		} else {
			cs.RNGEqual = true
		}
		sum.RNGEqual = sum.RNGEqual && cs.RNGEqual
		cs.MessagesOK = d.messagesOK(dc)
		sum.Converged = sum.Converged && cs.Converged
		sum.MessagesOK = sum.MessagesOK && cs.MessagesOK

		sum.Resent += cs.Resent
		sum.RTTMS = append(sum.RTTMS, cs.RTTMS)
		rate += cs.BytesPerSec
		udp += cs.UDPBytesPerSec
		sum.ClientStats = append(sum.ClientStats, cs)
	}
	sum.BytesPerSecPerClient = round3(rate / float64(len(d.clients)))
	sum.UDPBytesPerSecPerClient = round3(udp / float64(len(d.clients)))
}

// messagesOK checks a client's messages: the server received its pings
// 0..n-1 in order, and it received every echo the server broadcast, in
// the server's order.
func (d *serverDemo) messagesOK(dc *demoClient) bool {
	seen := d.pingsSeen[dc.id]
	if len(seen) != len(dc.pingsSent) {
		return false
	}
	for i, s := range seen {
		if s != uint32(i) {
			return false
		}
	}
	return slices.Equal(dc.echoes, d.echoes)
}

// print writes the summary for people.
func (s *serverSummary) print(w io.Writer) {
	fmt.Fprintf(w, "\n%d clients, %d ticks, %d entities (%d spawned, %d destroyed) in %.1fs (latency %vms ±%vms, loss %.0f%%, dup %.0f%%)\n",
		s.Clients, s.Ticks, s.Entities, s.Spawned, s.Despawned, s.DurationSec,
		s.Link.LatencyMS, s.Link.JitterMS, 100*s.Link.Loss, 100*s.Link.Dup)
	for i, c := range s.ClientStats {
		state := "converged"
		switch {
		case s.Interrupted:
			state = "not compared"
		case !c.Converged:
			state = "DIFFERENT"
		}
		fmt.Fprintf(w, "  client %d: rtt %.0fms, %.0f B/s replication (%.0f B/s UDP), %d mutation msgs, %d resent, %d/%d datagrams lost up/down, echo %.0fms, %s\n",
			i, c.RTTMS, c.BytesPerSec, c.UDPBytesPerSec, c.MutationMessages, c.Resent, c.LostUp, c.LostDown, c.EchoRTTMS, state)
	}
	messages := map[bool]string{true: "exact", false: "MISSING OR OUT OF ORDER"}[s.MessagesOK]
	if s.Interrupted {
		messages = "not compared (interrupted)"
	}
	fmt.Fprintf(w, "%.0f B/s per client, %d mutations resent; %d pings, %d echoes, messages %s\n",
		s.BytesPerSecPerClient, s.Resent, s.Pings, s.Echoes, messages)
	for _, e := range s.Events {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if s.DisruptSec > 0 {
		fmt.Fprintf(w, "client 0 cut off for %.1fs from tick %d; %d resyncs\n", s.DisruptSec, s.DisruptAtTick, s.Resyncs)
	}
	if s.Interrupted {
		// Mid-run, the clients lag the server by the network's delay:
		// nothing to compare until the drain.
		fmt.Fprintln(w, "random state: not compared (interrupted)")
		fmt.Fprintln(w, "replicated state: not compared (interrupted)")
		fmt.Fprintln(w, "INTERRUPTED")
		return
	}
	fmt.Fprintf(w, "random state: %s\n", map[bool]string{true: "EQUAL on every client", false: "DIFFERENT"}[s.RNGEqual])
	if s.Converged {
		fmt.Fprintf(w, "replicated state: EQUAL on every client (after %.1fs without changes)\n", s.DrainSec)
	} else {
		fmt.Fprintf(w, "replicated state: DIFFERENT after %.1fs without changes: %s\n", s.DrainSec, s.FirstDifference)
	}
	switch {
	case !s.ok():
		fmt.Fprintln(w, "FAILED")
	default:
		fmt.Fprintln(w, "OK")
	}
}
