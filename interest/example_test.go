package interest_test

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/interest"
	"github.com/rewindgo/rewind/replicate"
)

// printer is a Visibility that prints its calls; a game passes its
// *replicate.Server instead.
type printer struct{}

func (printer) SetVisible(id replicate.ClientID, e ecs.Entity, visible bool) error {
	fmt.Printf("client %d: %v visible=%t\n", id, e, visible)
	return nil
}

func ExampleRooms() {
	w := ecs.New()
	lobby, arena := interest.RoomID(1), interest.RoomID(2)
	a, b := w.Spawn(), w.Spawn()

	rooms := interest.NewRooms()
	rooms.Add(lobby, a)
	rooms.Add(arena, b)
	rooms.Join(lobby, 7) // on replicate.ClientConnected for client 7
	_ = rooms.Apply(printer{})

	fmt.Println("client 7 moves to the arena")
	rooms.Leave(lobby, 7)
	rooms.Join(arena, 7)
	_ = rooms.Apply(printer{}) // each tick, before Server.Send
	// Output:
	// client 7: 0v1 visible=true
	// client 7 moves to the arena
	// client 7: 0v1 visible=false
	// client 7: 1v1 visible=true
}

func ExampleGrid() {
	w := ecs.New()
	e := w.Spawn()
	g, _ := interest.NewGrid(interest.GridConfig{Radius: 10, Margin: 2})
	g.SetFocus(1, 0, 0)
	for _, x := range []float64{15, 10, 11.5, 9, 11.9, 12.5} {
		g.Move(e, x, 0) // each tick, from the game's positions
		fmt.Printf("x=%v\n", x)
		_ = g.Apply(printer{})
	}
	// Output:
	// x=15
	// x=10
	// client 1: 0v1 visible=true
	// x=11.5
	// x=9
	// x=11.9
	// x=12.5
	// client 1: 0v1 visible=false
}

func ExampleUnion() {
	w := ecs.New()
	e := w.Spawn()
	rooms := interest.NewRooms()
	g, _ := interest.NewGrid(interest.GridConfig{Radius: 10})
	u := interest.NewUnion()

	rooms.Add(1, e)
	rooms.Join(1, 3) // client 3 sees e through a room...
	g.SetFocus(3, 0, 0)
	g.Move(e, 5, 0) // ...and by distance
	tick := func() {
		_ = rooms.Apply(u)
		_ = g.Apply(u)
		_ = u.Apply(printer{}) // the server
	}
	tick()
	fmt.Println("out of the room, still in view")
	rooms.Leave(1, 3)
	tick()
	fmt.Println("out of view too")
	g.Move(e, 50, 0)
	tick()
	// Output:
	// client 3: 0v1 visible=true
	// out of the room, still in view
	// out of view too
	// client 3: 0v1 visible=false
}
