package interest_test

import (
	"errors"
	"math/rand/v2"
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

// TestDeterminism: the same calls on Rooms, Grid and a Union they apply
// into give the same SetVisible sequence, call for call, in every run
// (the package looks entities and clients up in maps, whose iteration
// order Go varies from run to run, but never iterates them to decide
// what to call).
func TestDeterminism(t *testing.T) {
	var first []call
	for run := range 5 {
		calls := scenario(t, 42)
		if run == 0 {
			first = calls
			if len(calls) < 1000 {
				t.Fatalf("only %d calls", len(calls))
			}
			continue
		}
		if !slices.Equal(calls, first) {
			i := 0
			for i < len(calls) && i < len(first) && calls[i] == first[i] {
				i++
			}
			t.Fatalf("run %d differs from run 0 at call %d of %d", run, i, len(first))
		}
	}
	if slices.Equal(scenario(t, 43), first) {
		t.Fatal("another seed gave the same calls")
	}
}

// scenario drives Rooms and a Grid into a Union, applied to a recorder,
// from seed, and returns the calls.
func scenario(t *testing.T, seed uint64) []call {
	rooms := interest.NewRooms()
	g, err := interest.NewGrid(interest.GridConfig{Radius: 20, CellSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	u, rec := interest.NewUnion(), newRecorder()
	rd := &roomsDriver{rooms: rooms, m: newRoomsModel(), nRooms: 4}
	gd := &gridDriver{g: g, m: newGridModel(2), world: 150}
	rd.rnd = newRand(seed)
	gd.rnd = rd.rnd
	for i := range 200 {
		e := ecs.Entity(uint64(1)<<32 | uint64(i))
		rd.live = append(rd.live, e)
		gd.ents = append(gd.ents, e)
	}
	for id := range replicate.ClientID(8) {
		rd.clients = append(rd.clients, id+1)
		g.SetFocus(id+1, gd.coord(), gd.coord())
	}
	for range 200 {
		for range 3 {
			rd.op()
		}
		for _, e := range gd.ents {
			if gd.rnd.IntN(3) == 0 {
				gd.move(e)
			}
		}
		if err := rooms.Apply(u); err != nil {
			t.Fatal(err)
		}
		if err := g.Apply(u); err != nil {
			t.Fatal(err)
		}
		if err := u.Apply(rec); err != nil {
			t.Fatal(err)
		}
	}
	return rec.calls
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
