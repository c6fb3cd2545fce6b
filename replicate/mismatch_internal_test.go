package replicate

import (
	"strings"
	"testing"

	"github.com/rewindgo/rewind/transport"
)

type (
	mmA struct{ X int32 }
	mmB struct{ Y int32 }
	mmC struct{ Z int32 }
	mmM struct{ N int32 }
)

// TestExplainMismatch: a client rejected for its protocol names the first
// difference from the server's outline: a type only one side registers,
// two types in another order, or, with the same names in the same order,
// what else can differ. Without an outline it keeps the hashes.
func TestExplainMismatch(t *testing.T) {
	const pkg = "github.com/rewindgo/rewind/replicate."
	build := func(comps []func(*Protocol), msg bool) *Protocol {
		p := NewProtocol()
		for _, c := range comps {
			c(p)
		}
		if msg {
			_, _ = RegisterMessage[mmM](p, ClientToServer, transport.ReliableOrdered)
		}
		p.freeze()
		return p
	}
	a := func(p *Protocol) { _, _ = Component[mmA](p, WithOwnRule()) }
	b := func(p *Protocol) { _, _ = Component[mmB](p, WithOwnRule()) }
	c := func(p *Protocol) { _, _ = Component[mmC](p) }
	cases := []struct {
		server, client *Protocol
		want           string
	}{
		{build([]func(*Protocol){a, b}, false), build([]func(*Protocol){a}, false),
			"the server registers component " + pkg + "mmB, which this client does not"},
		{build([]func(*Protocol){a}, false), build([]func(*Protocol){a, b}, false),
			"this client registers component " + pkg + "mmB, which the server does not"},
		{build([]func(*Protocol){a, b}, false), build([]func(*Protocol){b, a}, false),
			"both register component " + pkg + "mmA and " + pkg + "mmB, in another order"},
		{build([]func(*Protocol){a}, true), build([]func(*Protocol){a}, false),
			"the server registers message " + pkg + "mmM, which this client does not"},
		{build([]func(*Protocol){a, c}, false), build([]func(*Protocol){a, c, func(p *Protocol) { _ = p.AddRule(Rule{Components: []ComponentIndex{1}}) }}, false),
			"the same components, resources and messages in the same order; a rule, mode, tag or channel differs"},
	}
	for i, tc := range cases {
		text := strings.TrimPrefix(tc.server.mismatchReason(tc.client.Hash()), "protocol mismatch: ")
		got := tc.client.explainMismatch(text)
		if !strings.HasPrefix(got, "client ") || !strings.HasSuffix(got, tc.want) {
			t.Errorf("case %d: %q, want it to end with %q", i, got, tc.want)
		}
	}
	// A reason without an outline (a server whose outline is too long).
	if got := NewProtocol().explainMismatch("client 01, server 02"); !strings.HasPrefix(got, "client 01, server 02 (") {
		t.Errorf("no outline: %q", got)
	}
}
