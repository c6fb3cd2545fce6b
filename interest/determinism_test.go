package interest_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/interest"
	"github.com/rewindgo/rewind/replicate"
)

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
