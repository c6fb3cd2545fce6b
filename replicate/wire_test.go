package replicate_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// Types of the golden-bytes protocol: a plain-data component (4 bytes on
// the wire, no length prefix), a component with a custom codec (length
// prefixed) and a message type each way.
type (
	WirePos  struct{ X, Y int16 }
	WireName []byte
	WireUp   struct{ N uint8 }
	WireDown struct{ N uint8 }
)

type wireProto struct {
	p    *replicate.Protocol
	up   replicate.MessageType[WireUp]
	down replicate.MessageType[WireDown]
}

func newWireProto(t *testing.T) wireProto {
	t.Helper()
	p := replicate.NewProtocol()
	wp := wireProto{p: p}
	var errs [4]error
	_, errs[0] = replicate.Component[WirePos](p, replicate.WithOwnRule())
	_, errs[1] = replicate.Component[WireName](p, replicate.WithOwnRule(), replicate.WithCodec[WireName](bytesCodec[WireName]{}, "bytes"))
	wp.up, errs[2] = replicate.RegisterMessage[WireUp](p, replicate.ClientToServer, transport.ReliableOrdered)
	wp.down, errs[3] = replicate.RegisterMessage[WireDown](p, replicate.ServerToClient, transport.ReliableOrdered)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return wp
}

// wireMsg is one captured message: who sent it, on which channel, its bytes.
type wireMsg struct {
	name string
	ch   transport.Channel
	hex  string
}

func (m wireMsg) String() string { return fmt.Sprintf("{%q, %v, %q}", m.name, m.ch, m.hex) }

// take moves the messages p sent into got, named after their kind, and
// returns them to p's outbox so they still flow.
func take(got *[]wireMsg, from string, p *pipeEnd) {
	for _, m := range p.outbox {
		*got = append(*got, wireMsg{name: fmt.Sprintf("%s kind %d", from, m.data[0]), ch: m.ch, hex: hex.EncodeToString(m.data)})
	}
}

// TestWireGolden pins the bytes of every message kind of the replication
// wire format (replicate/wire.go) as a scripted session sends them: hello,
// welcome, update (spawns with plain and length-prefixed values), mutations
// (empty and with a value), acks, client and server messages, and an
// update with a removal and a despawn. The bytes were recorded before the
// package was split by concept and must not change without a new wire
// version.
func TestWireGolden(t *testing.T) {
	wp := newWireProto(t)
	h := newHarness(t, testProto{p: wp.p}, replicate.ServerConfig{})
	rep := ecs.Register[replicate.Replicated](h.sw)
	pos := ecs.Register[WirePos](h.sw)
	name := ecs.Register[WireName](h.sw)
	e1, e2 := h.sw.Spawn(), h.sw.Spawn()
	_ = rep.Set(e1, replicate.Replicated{})
	_ = pos.Set(e1, WirePos{1, -2})
	_ = rep.Set(e2, replicate.Replicated{})
	_ = pos.Set(e2, WirePos{300, 4})
	_ = name.Set(e2, WireName("ab"))

	var got []wireMsg
	c := h.connect([]byte("tk"))
	se, ce := h.srvEnds[0], h.cliEnds[0]
	step := func(do func()) {
		take(&got, "client", ce)
		ce.flow(nil)
		if do != nil {
			do()
		}
		h.now = h.now.Add(16_666_667)
		h.srv.Send()
		take(&got, "server", se)
		se.flow(nil)
		c.Update()
	}
	step(nil)     // hello; welcome, update spawning both, empty mutations
	step(func() { // acks; a client message; a mutation and a server message
		_ = pos.Set(e1, WirePos{5, 6})
		if err := wp.down.SendToClients(h.srv, replicate.All(), WireDown{N: 7}); err != nil {
			t.Fatal(err)
		}
	})
	if err := wp.up.SendToServer(c, WireUp{N: 9}); err != nil {
		t.Fatal(err)
	}
	step(func() { // an update removing e2's name, then one despawning e2
		_ = name.Remove(e2)
	})
	step(func() { _ = h.sw.Despawn(e2) })
	take(&got, "client", ce)

	const hash = "f3b2d01ae7ce8acb" // the protocol hash, little-endian
	want := []wireMsg{
		// Hello: version 7, protocol hash, token "tk".
		{"client kind 1", transport.ReliableOrdered, "01" + "07" + hash + "02746b"},
		// Welcome: client id 1, server tick 0.
		{"server kind 10", transport.ReliableOrdered, "0a" + "01" + "00"},
		// Update of tick 1: no mappings, despawns or removals; two
		// insertions: entity (0, gen 1) spawned, mask 1 (WirePos: 1, -2 as
		// int16 LE); entity (1, 1) spawned, mask 3 (WirePos 300, 4; WireName
		// "ab", length-prefixed); no resources.
		{"server kind 12", transport.ReliableOrdered, "0c" + "01" + "00" + "00" + "00" + "02" +
			"0001" + "01" + "01" + "0100feff" +
			"0101" + "01" + "03" + "2c010400" + "026162" + "00"},
		// Mutations of tick 1, needing the update of tick 1 (delta 0),
		// sequence 0, index 0 of 1 (one byte: 0<<4 | 1-1), no
		// entities: tick tracking.
		{"server kind 13", transport.Unreliable, "0d" + "01" + "00" + "00" + "00"},
		// Acks, unreliable: newest sequence 0, covering no message
		// before it (span 0), none of them missing.
		{"client kind 2", transport.Unreliable, "02" + "00" + "00" + "00"},
		// Mutations of tick 2, needing tick 1 (delta 1), sequence 1, then
		// its bit-packed blocks, least significant bit first. 1: a block
		// follows; 100: the exponential-Golomb code of order 2 of 0, the
		// slot's distance from the slot after none (slot 0); 10: mask 1
		// (of two components), WirePos; 1: deltas; 1: age 1 (the code of
		// 0); 0: not extrapolated; WirePos 5, 6 as a delta from the value
		// of tick 1 (1, -2), its two 16-bit fields in exponential-Golomb
		// code of order 3 of z-1 (z the zig-zagged difference): X: 1
		// (changed), 1111 (+4: z = 8, 7 is 1 then 111); Y: 1, 010111 (+8:
		// z = 16, 15 is 01 0 then 111); 0: no more blocks; padding.
		// d3 7e 1d.
		{"server kind 13", transport.Unreliable, "0d" + "02" + "01" + "01" + "00" + "d37e1d"},
		// ServerMsg: type 1 (WireDown), after the update of tick 1, N 7.
		{"server kind 14", transport.ReliableOrdered, "0e" + "01" + "01" + "07"},
		// Acks: newest 1, span 1 (sequence 0), none missing.
		{"client kind 2", transport.Unreliable, "02" + "01" + "01" + "00"},
		// ClientMsg: type 0 (WireUp), N 9.
		{"client kind 3", transport.ReliableOrdered, "03" + "00" + "09"},
		// Update of tick 3: one removal, entity (1, 1), one component, id 1.
		{"server kind 12", transport.ReliableOrdered, "0c" + "03" + "00" + "00" + "01" + "0101" + "01" + "01" + "00" + "00"},
		{"server kind 13", transport.Unreliable, "0d" + "03" + "00" + "02" + "00"},
		{"client kind 2", transport.Unreliable, "02" + "02" + "02" + "00"},
		// Update of tick 4: one despawn, entity (1, 1).
		{"server kind 12", transport.ReliableOrdered, "0c" + "04" + "00" + "01" + "0101" + "00" + "00" + "00"},
		{"server kind 13", transport.Unreliable, "0d" + "04" + "00" + "03" + "00"},
		{"client kind 2", transport.Unreliable, "02" + "03" + "03" + "00"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		var b strings.Builder
		for i, m := range got {
			mark := " "
			if i >= len(want) || m != want[i] {
				mark = "!"
			}
			fmt.Fprintf(&b, "%s %v\n", mark, m)
		}
		t.Fatalf("wire bytes changed (! marks a difference from the golden bytes):\n%s", b.String())
	}
	if c.State() != replicate.Connected || c.Entities() != 1 {
		t.Fatalf("client %v with %d replicated entities, want connected with 1", c.State(), c.Entities())
	}
}

// TestWireGoldenParts pins an update cut into parts (kind 15): with
// MaxMessageSize 1 KiB each part carries at most 1003 bytes of the update
// after its header (kind, the update's total length, the part's offset),
// and the parts joined are the update (kind 12), pinned by its length and
// SHA-256.
func TestWireGoldenParts(t *testing.T) {
	wp := newWireProto(t)
	h := newHarness(t, testProto{p: wp.p}, replicate.ServerConfig{MaxMessageSize: 1024})
	rep := ecs.Register[replicate.Replicated](h.sw)
	pos := ecs.Register[WirePos](h.sw)
	for i := range 200 {
		e := h.sw.Spawn()
		_ = rep.Set(e, replicate.Replicated{})
		_ = pos.Set(e, WirePos{int16(i), int16(-i)})
	}
	c := h.connect(nil)
	h.cliEnds[0].flow(nil)
	h.srv.Send()
	var heads []string
	var whole []byte
	for _, m := range h.srvEnds[0].outbox {
		if m.data[0] != 15 {
			continue
		}
		// Header: kind, uvarint total, uvarint offset.
		_, n1 := binary.Uvarint(m.data[1:])
		_, n2 := binary.Uvarint(m.data[1+n1:])
		n := 1 + n1 + n2
		heads = append(heads, hex.EncodeToString(m.data[:n]))
		whole = append(whole, m.data[n:]...)
	}
	want := []string{
		"0f" + "900d" + "00",   // total 1680, offset 0
		"0f" + "900d" + "eb07", // offset 1003
	}
	// The update: tick 1, no mappings, despawns or removals, 200 spawns,
	// no resources.
	const wantHead = "0c" + "01" + "00" + "00" + "00" + "c801"
	const wantSum = "60e71b27aa35e08c7a6eaf90a76e815136de9e4b770114152136a68a0487336f"
	sum := sha256.Sum256(whole)
	if fmt.Sprint(heads) != fmt.Sprint(want) || len(whole) != 1680 || hex.EncodeToString(whole[:7]) != wantHead || hex.EncodeToString(sum[:]) != wantSum {
		t.Fatalf("update parts changed: headers %v (want %v), update of %d bytes starting %x, sha256 %x", heads, want, len(whole), whole[:min(7, len(whole))], sum)
	}
	h.srvEnds[0].flow(nil)
	c.Update()
	if c.Entities() != 200 {
		t.Fatalf("client has %d entities after the parts, want 200", c.Entities())
	}
}

// TestWireGoldenReject pins the close reasons of rejections (a rejection is
// no message): "reject/<code> <text>".
func TestWireGoldenReject(t *testing.T) {
	wp := newWireProto(t)
	h := newHarness(t, testProto{p: wp.p}, replicate.ServerConfig{})
	other := replicate.NewProtocol()
	if _, err := replicate.Component[WirePos](other, replicate.WithOwnRule()); err != nil {
		t.Fatal(err)
	}
	c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: other})
	if err != nil {
		t.Fatal(err)
	}
	se, ce := newPipe()
	h.srv.AddConn(se)
	if err := c.Connect(ce); err != nil {
		t.Fatal(err)
	}
	// A hello of wire version 5 (an old client: absolute mutations only)
	// on a second connection.
	se3, ce3 := newPipe()
	h.srv.AddConn(se3)
	_ = ce3.Send(transport.ReliableOrdered, []byte{1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	ce.flow(nil)
	ce3.flow(nil)
	h.srv.Send()
	for _, tc := range []struct {
		p    *pipeEnd
		want string
	}{
		{se, fmt.Sprintf("reject/1 protocol mismatch: client %016x, server %016x; server registers "+
			"component github.com/rewindgo/rewind/replicate_test.WirePos, component github.com/rewindgo/rewind/replicate_test.WireName, "+
			"message github.com/rewindgo/rewind/replicate_test.WireUp, message github.com/rewindgo/rewind/replicate_test.WireDown", other.Hash(), wp.p.Hash())},
		{se3, "reject/4 wire version 5, server speaks 7"},
	} {
		if got := tc.p.err.(*transport.CloseError).Reason; got != tc.want {
			t.Errorf("close reason %q, want %q", got, tc.want)
		}
	}
}

// TestWireRefusesNonMinimalVarint: the replication wire format reads
// varints through internal/bin, which accepts only minimal encodings. A
// mutation message whose tick is written as 81 00 instead of 01 is
// malformed (before internal/bin, replicate's own reader accepted it); the
// same message written minimally is applied.
func TestWireRefusesNonMinimalVarint(t *testing.T) {
	wp := newWireProto(t)
	h := newHarness(t, testProto{p: wp.p}, replicate.ServerConfig{})
	c := h.connect(nil)
	h.exchange()
	h.exchange()
	before := c.Stats()
	// Mutations: tick 1, delta 1 (needs no update), sequence 9, index 0
	// of 1 (the byte 0<<4 | 1-1), no entities.
	for _, msg := range [][]byte{
		{13, 0x01, 0x01, 0x09, 0},
		{13, 0x81, 0x00, 0x01, 0x09, 0},
	} {
		h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, pipeMsg{ch: transport.Unreliable, data: msg})
	}
	c.Update()
	st := c.Stats()
	if st.Mutations != before.Mutations+1 || st.Malformed != before.Malformed+1 {
		t.Fatalf("mutations %d -> %d, malformed %d -> %d: want the minimal message applied and the other refused",
			before.Mutations, st.Mutations, before.Malformed, st.Malformed)
	}
}
