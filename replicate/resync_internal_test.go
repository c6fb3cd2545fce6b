package replicate

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// TestWireGoldenResync pins the bytes of the Resync message of each kind
// and of the ResyncRequest message (wire.go), and checks that each decodes
// to what was encoded.
func TestWireGoldenResync(t *testing.T) {
	full := appendResync(nil, 7, "hi", ResyncFull, 0, nil)
	if want := []byte{17, 7, 2, 'h', 'i'}; !bytes.Equal(full, want) {
		t.Fatalf("full resync % x, want % x", full, want)
	}
	entries := []resyncEntry{{e: ecs.NewEntity(3, 1), mask: 2}, {e: ecs.NewEntity(200, 2), gone: true}}
	part := appendResync(nil, 300, "d", ResyncPartial, 3, entries)
	want := []byte{17, 0xac, 0x02, 1, 'd', 2, 3, 2, 3, 1, 1, 2, 0xc8, 0x01, 2, 0}
	if !bytes.Equal(part, want) {
		t.Fatalf("partial resync % x, want % x", part, want)
	}
	rngMsg := appendResync(nil, 9, "", ResyncRNG, 4, []resyncEntry{{e: ecs.NewEntity(0, 1), mask: 4}})
	if want := []byte{17, 9, 0, 3, 4, 1, 0, 1, 1, 4}; !bytes.Equal(rngMsg, want) {
		t.Fatalf("rng resync % x, want % x", rngMsg, want)
	}
	req := appendResyncRequest(nil, "range fault")
	if want := append([]byte{5, 11}, "range fault"...); !bytes.Equal(req, want) {
		t.Fatalf("request % x, want % x", req, want)
	}
	var m resyncMsg
	if err := readResync(full[1:], 2, &m); err != nil || m.at != 7 || m.reason != "hi" || m.kind != ResyncFull || len(m.entries) != 0 {
		t.Fatalf("full read back: %+v %v", m, err)
	}
	if err := readResync(part[1:], 2, &m); err != nil || m.at != 300 || m.kind != ResyncPartial || m.scope != 3 || !reflect.DeepEqual(m.entries, entries) {
		t.Fatalf("partial read back: %+v %v", m, err)
	}
	if r, err := readResyncRequest(req[1:]); err != nil || r != "range fault" {
		t.Fatalf("request read back: %q %v", r, err)
	}
	// A scope naming a component not registered, a mask outside the
	// scope, an unknown kind or presence byte are malformed.
	for _, bad := range [][]byte{
		{7, 0, 2, 4, 0},                // scope bit 2 with 2 components
		{7, 0, 2, 1, 1, 0, 1, 1, 2},    // mask 2 outside scope 1
		{7, 0, 4, 1, 0},                // kind 4
		{7, 0, 1, 1, 0},                // kind 1 (full) with a scope
		{7, 0, 2, 1, 1, 0, 1, 2},       // presence byte 2
		{7, 0, 2, 1, 5, 0, 1, 1, 1, 1}, // 5 entries, 1 present
	} {
		if err := readResync(bad, 2, &m); err == nil {
			t.Fatalf("resync % x accepted: %+v", bad, m)
		}
	}
}

// FuzzResync: any bytes decode to an error or to a resync that encodes
// back to the same bytes, within its bounds.
func FuzzResync(f *testing.F) {
	f.Add([]byte{7, 2, 'h', 'i'})
	f.Add(appendResync(nil, 300, "d", ResyncPartial, 3, []resyncEntry{{e: ecs.NewEntity(3, 1), mask: 2}, {e: ecs.NewEntity(9, 2), gone: true}})[1:])
	f.Add(appendResync(nil, 9, "", ResyncRNG, 4, []resyncEntry{{e: ecs.NewEntity(0, 1), mask: 4}})[1:])
	f.Fuzz(func(t *testing.T, b []byte) {
		var m resyncMsg
		if err := readResync(b, 3, &m); err != nil {
			return
		}
		if len(m.reason) > maxResyncReason || m.at > tick.Tick(^uint32(0)) || len(m.entries) > maxResyncEntities || m.scope >= 8 {
			t.Fatalf("% x decoded to %+v", b, m)
		}
		if got := appendResync(nil, m.at, m.reason, m.kind, m.scope, m.entries)[1:]; !bytes.Equal(got, b) {
			t.Fatalf("% x decoded to %+v, encodes to % x", b, m, got)
		}
	})
}

// FuzzResyncRequest: the same for resync requests.
func FuzzResyncRequest(f *testing.F) {
	f.Add(appendResyncRequest(nil, "range fault at tick 9")[1:])
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := readResyncRequest(b)
		if err != nil {
			return
		}
		if len(r) > maxResyncReason || !bytes.Equal(appendResyncRequest(nil, r)[1:], b) {
			t.Fatalf("% x decoded to %q", b, r)
		}
	})
}
