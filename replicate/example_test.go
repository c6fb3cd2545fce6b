package replicate_test

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// A Rule replicates its components together, on entities that have all of
// them and pass its filters; WithOwnRule gives a component a rule of its
// own.
func ExampleRule() {
	type Pos struct{ X, Y float32 }
	type Vel struct{ X, Y float32 }
	type Name struct{ Text [16]byte }
	type Invisible struct{}

	p := replicate.NewProtocol()
	pos, _ := replicate.Component[Pos](p)
	vel, _ := replicate.Component[Vel](p)
	// Name replicates wherever an entity has one.
	_, _ = replicate.Component[Name](p, replicate.WithOwnRule())
	// Pos and Vel replicate only together, and not on Invisible entities.
	err := p.AddRule(replicate.Rule{
		Components: []replicate.ComponentID{pos, vel},
		Filters:    []replicate.Filter{replicate.Without[Invisible]()},
	})
	fmt.Println(err)
	_, err = replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: p})
	fmt.Println(err)
	// Output:
	// <nil>
	// <nil>
}
