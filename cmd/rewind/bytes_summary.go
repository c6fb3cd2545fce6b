package main

import (
	"strings"

	"github.com/rewindgo/rewind/replicate"
)

// byteRates is where a client's bytes go, per second of the run: the
// server's message bytes to it by what they carry (replicate.ByteCounts)
// and by message type, the client's bytes to the server, and the
// transport's bytes and packets on the wire (QUIC headers,
// acknowledgements and retransmissions included), with the UDP and IPv4
// headers added (link).
type byteRates struct {
	Updates        float64            `json:"updates"`
	Mutations      float64            `json:"mutations"`
	Messages       float64            `json:"messages"`
	MessagesByType map[string]float64 `json:"messages_by_type,omitempty"`
	Checksums      float64            `json:"checksums"`
	Resyncs        float64            `json:"resyncs"`
	Control        float64            `json:"control"`
	Up             float64            `json:"up"`
	UpAcks         float64            `json:"up_acks"`
	UpMessages     float64            `json:"up_messages"`
	WireBytes      float64            `json:"wire_bytes"`
	WirePackets    float64            `json:"wire_packets"`
	LinkBytes      float64            `json:"link_bytes"`
}

// udpIPv4Header is the bytes a UDP datagram adds on an IPv4 link.
const udpIPv4Header = 28

func newByteRates(st replicate.ConnectionStats, elapsed float64) byteRates {
	r := func(v uint64) float64 { return round3(float64(v) / elapsed) }
	b := byteRates{
		Updates: r(st.Out.Updates), Mutations: r(st.Out.Mutations), Messages: r(st.Out.Messages),
		Checksums: r(st.Out.Checksums), Resyncs: r(st.Out.Resyncs), Control: r(st.Out.Control),
		Up: r(st.BytesIn), UpAcks: r(st.In.Acks), UpMessages: r(st.In.Messages),
		WireBytes: r(st.WireBytesOut), WirePackets: r(st.WirePacketsOut),
		LinkBytes: r(st.WireBytesOut + udpIPv4Header*st.WirePacketsOut),
	}
	for _, m := range st.MessagesOut {
		if b.MessagesByType == nil {
			b.MessagesByType = map[string]float64{}
		}
		b.MessagesByType[shortType(m.Name)] += r(m.Bytes)
	}
	return b
}

// since returns the counters of st accumulated after base, a snapshot of
// the same connection's: the demos' rates count the run, not the join
// before it (QUIC's handshake and path MTU probes, the full state).
func since(st, base replicate.ConnectionStats) replicate.ConnectionStats {
	sub := func(a, b replicate.ByteCounts) replicate.ByteCounts {
		return replicate.ByteCounts{Updates: a.Updates - b.Updates, Mutations: a.Mutations - b.Mutations,
			Acks: a.Acks - b.Acks, Messages: a.Messages - b.Messages, Checksums: a.Checksums - b.Checksums,
			Resyncs: a.Resyncs - b.Resyncs, Control: a.Control - b.Control}
	}
	st.BytesOut -= base.BytesOut
	st.BytesIn -= base.BytesIn
	st.Out, st.In = sub(st.Out, base.Out), sub(st.In, base.In)
	st.WirePacketsOut -= base.WirePacketsOut
	st.WireBytesOut -= base.WireBytesOut
	st.WirePacketsIn -= base.WirePacketsIn
	st.WireBytesIn -= base.WireBytesIn
	msgs := make([]replicate.MessageCount, len(st.MessagesOut))
	copy(msgs, st.MessagesOut)
	for i := range msgs {
		for _, b := range base.MessagesOut {
			if b.Name == msgs[i].Name {
				msgs[i].Messages -= b.Messages
				msgs[i].Bytes -= b.Bytes
			}
		}
	}
	st.MessagesOut = msgs
	return st
}

// shortType drops the package paths from a type name:
// "github.com/a/b.T[github.com/a/c.U]" -> "b.T[c.U]".
func shortType(name string) string {
	var sb strings.Builder
	for part := range strings.SplitSeq(name, "[") {
		if sb.Len() > 0 {
			sb.WriteByte('[')
		}
		if i := strings.LastIndexByte(part, '/'); i >= 0 {
			part = part[i+1:]
		}
		sb.WriteString(part)
	}
	return sb.String()
}
