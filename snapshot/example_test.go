package snapshot_test

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/snapshot"
)

func Example() {
	type Position struct{ X, Y float64 }

	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	if err := snapshot.Copy[Position](reg); err != nil {
		panic(err)
	}
	pos := ecs.StoreOf[Position](w)
	ring, _ := snapshot.NewRing(reg, 8)

	hero := w.Spawn()
	_ = pos.Set(hero, Position{X: 1})
	sum0, _ := ring.SaveChecksum(0)

	// Frame 1 goes wrong: the hero moves and is despawned.
	pos.Ptr(hero).X = 5
	_ = w.Despawn(hero)

	// Roll back: the hero is back, with the same identity and value.
	_ = ring.Load(0)
	p, _ := pos.Get(hero)
	sum, _, _ := reg.Checksum(nil)
	fmt.Println(w.Alive(hero), p, sum == sum0)
	// Output: true {1 0} true
}

func ExampleDiff() {
	type Health int32
	a, b := ecs.New(), ecs.New()
	ra, rb := snapshot.NewRegistry(a), snapshot.NewRegistry(b)
	_ = snapshot.Copy[Health](ra)
	_ = snapshot.Copy[Health](rb)
	_ = ecs.StoreOf[Health](a).Set(a.Spawn(), 10)
	_ = ecs.StoreOf[Health](b).Set(b.Spawn(), 9) // a desync

	_, pa, _ := ra.Checksum(nil)
	_, pb, _ := rb.Checksum(nil)
	fmt.Println(snapshot.Diff(pa, pb))
	// Output: [github.com/rewindgo/rewind/snapshot_test.Health]
}
