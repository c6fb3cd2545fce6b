package replicate

import (
	"fmt"
	"slices"
	"strings"
)

// Naming what differs when a client's protocol does not match the
// server's. The hello carries only the protocol hash, so the server's
// rejection carries an outline of its protocol (the kind and name of what
// it registered, in order) after the hashes, and the client, which knows
// its own, names the first difference.

// maxOutline bounds the outline in a rejection (it travels in the
// connection's close reason).
const maxOutline = 600

// outlineSep separates the hashes from the server's outline in the reason.
const outlineSep = "; server registers "

// outline lists what p registers, in order: "component NAME",
// "resource NAME", "message NAME", joined by ", ".
func (p *Protocol) outline() []string {
	var out []string
	for _, c := range p.comps {
		out = append(out, "component "+c.name)
	}
	for _, r := range p.res {
		out = append(out, "resource "+r.name)
	}
	for _, m := range p.msgs {
		out = append(out, "message "+m.name)
	}
	return out
}

// mismatchReason is the server's rejection text for a client whose
// protocol hash is hash.
func (p *Protocol) mismatchReason(hash uint64) string {
	r := fmt.Sprintf("protocol mismatch: client %016x, server %016x", hash, p.hash)
	o := strings.Join(p.outline(), ", ")
	if len(o) > maxOutline {
		return r // too long to send whole: the hashes alone
	}
	return r + outlineSep + o
}

// explainMismatch is the client's reading of a mismatch rejection's text
// (after "protocol mismatch: "): the hashes, and the first difference
// between the server's outline and p's.
func (p *Protocol) explainMismatch(text string) string {
	hashes, server, ok := strings.Cut(text, outlineSep)
	if !ok {
		return text + " (client and server registered different components, resources, messages or rules, or registered them in another order)"
	}
	var theirs []string
	if server != "" {
		theirs = strings.Split(server, ", ")
	}
	ours := p.outline()
	for _, kind := range []string{"component ", "resource ", "message "} {
		if d := firstDifference(ofKind(theirs, kind), ofKind(ours, kind)); d != "" {
			return hashes + ": " + d
		}
	}
	return hashes + ": the same components, resources and messages in the same order; a rule, mode, tag or channel differs"
}

// ofKind returns the entries of an outline that start with kind.
func ofKind(outline []string, kind string) []string {
	var out []string
	for _, e := range outline {
		if strings.HasPrefix(e, kind) {
			out = append(out, e)
		}
	}
	return out
}

// firstDifference names the first difference between the server's and the
// client's registrations of one kind, in order ("" when none).
func firstDifference(server, client []string) string {
	for i := range max(len(server), len(client)) {
		switch {
		case i >= len(server) || (i < len(client) && !slices.Contains(server, client[i])):
			return fmt.Sprintf("this client registers %s, which the server does not", client[i])
		case i >= len(client) || !slices.Contains(client, server[i]):
			return fmt.Sprintf("the server registers %s, which this client does not", server[i])
		case server[i] != client[i]:
			return fmt.Sprintf("both register %s and %s, in another order", server[i], strings.TrimPrefix(client[i], strings.Fields(client[i])[0]+" "))
		}
	}
	return ""
}
