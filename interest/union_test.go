package interest_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/interest"
	"github.com/rewindgo/rewind/replicate"
)

// TestUnion: an entity is shown while any source shows it; Apply tells
// only changes, a show and hide between two Applies costs nothing, and a
// hide without a show is refused.
func TestUnion(t *testing.T) {
	u, rec := interest.NewUnion(), newRecorder()
	e, f := ecs.Entity(1<<32|1), ecs.Entity(1<<32|2)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(u.SetVisible(1, e, true))
	must(u.SetVisible(1, e, true))
	must(u.SetVisible(1, f, true))
	must(u.SetVisible(1, f, false))
	must(u.Apply(rec))
	if want := []call{{1, e, true}}; !slices.Equal(rec.calls, want) {
		t.Fatalf("calls %v, want %v", rec.calls, want)
	}
	must(u.SetVisible(1, e, false))
	must(u.Apply(rec))
	if len(rec.calls) != 1 || !u.Visible(1, e) {
		t.Fatalf("hidden while another source shows it: %v", rec.calls)
	}
	must(u.SetVisible(1, e, false))
	must(u.Apply(rec))
	if want := []call{{1, e, true}, {1, e, false}}; !slices.Equal(rec.calls, want) {
		t.Fatalf("calls %v, want %v", rec.calls, want)
	}
	if err := u.SetVisible(1, e, false); !errors.Is(err, interest.ErrUnbalanced) {
		t.Fatalf("unbalanced hide: %v", err)
	}
	must(u.SetVisible(2, e, true))
	u.ForgetClient(2)
	must(u.Apply(rec))
	if len(rec.calls) != 2 {
		t.Fatalf("a forgotten client was told %v", rec.calls[2:])
	}
}

// failing is a Visibility that refuses one client, as replicate does for
// a client that left.
type failing struct {
	recorder
	gone replicate.ClientID
}

func (f *failing) SetVisible(id replicate.ClientID, e ecs.Entity, vis bool) error {
	if id == f.gone {
		return replicate.ErrNotConnected
	}
	return f.recorder.SetVisible(id, e, vis)
}

// TestApplyGoesOnAfterError: an error of the Visibility for one client
// does not keep the others from being told, and Apply returns it.
func TestApplyGoesOnAfterError(t *testing.T) {
	v := &failing{recorder: *newRecorder(), gone: 1}
	rooms := interest.NewRooms()
	e := ecs.Entity(1<<32 | 1)
	rooms.Add(5, e)
	rooms.Join(5, 1)
	rooms.Join(5, 2)
	if err := rooms.Apply(v); !errors.Is(err, replicate.ErrNotConnected) {
		t.Fatalf("Apply: %v", err)
	}
	if want := []call{{2, e, true}}; !slices.Equal(v.calls, want) {
		t.Fatalf("calls %v, want %v", v.calls, want)
	}
	g, _ := interest.NewGrid(interest.GridConfig{})
	g.SetFocus(1, 0, 0)
	g.SetFocus(2, 0, 0)
	g.Move(e, 0, 0)
	if err := g.Apply(v); !errors.Is(err, replicate.ErrNotConnected) {
		t.Fatalf("Apply: %v", err)
	}
	if want := []call{{2, e, true}, {2, e, true}}; !slices.Equal(v.calls, want) {
		t.Fatalf("calls %v, want %v", v.calls, want)
	}
}
