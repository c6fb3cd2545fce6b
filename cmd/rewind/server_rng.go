package main

// The server demo's random state and its disruption: the world's RNG (a
// replicated rng.Rand resource) and a random stream per entity (Dice, RNG
// state), drawn from every tick, so that a client's RNG state can be
// compared with the server's; and --disrupt, which cuts one client's
// proxy for a while.

import (
	"fmt"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/transport"
)

// Dice is an entity's own random stream in the server demo.
type Dice struct{ R rng.Rand }

// diceEvery: an entity draws from its stream every diceEvery ticks.
const diceEvery = 8

// newDemoProtocol is the arena's protocol with the demo's random state:
// Dice (RNG state) and the world's rng.Rand.
func newDemoProtocol() (*demo.ArenaProtocol, error) {
	ap, err := demo.NewArenaProtocol()
	if err != nil {
		return nil, err
	}
	if _, err := replicate.Component[Dice](ap.Protocol, replicate.WithOwnRule(), replicate.RNGState()); err != nil {
		return nil, err
	}
	if _, err := replicate.ReplicateResource[rng.Rand](ap.Protocol); err != nil {
		return nil, err
	}
	return ap, nil
}

// seedRandom gives the entities the arena just spawned their streams, and
// the world its RNG on the first call.
func (d *serverDemo) seedRandom() {
	w := d.arena.World()
	world := ecs.RegisterResource[rng.Rand](w)
	if !world.Present() {
		world.Set(rng.NewSeed(d.o.Seed))
	}
	dice := ecs.Register[Dice](w)
	for _, e := range d.arena.Spawned() {
		_ = dice.Set(e, Dice{R: rng.Stream(d.o.Seed, e.Bits())})
	}
}

// drawRandom is the demo's random events of simulation tick k: the world's
// RNG draws once, and one entity in diceEvery draws from its stream.
func (d *serverDemo) drawRandom(k int) {
	w := d.arena.World()
	ecs.ResourceOf[rng.Rand](w).Ptr().Uint64()
	// Only the streams that draw are written: a Write query would mark
	// every Dice changed, and replication would send them all each tick.
	dice := ecs.Register[Dice](w)
	d.drawing = d.drawing[:0]
	for e := range dice.Values() {
		if int(e.Index())%diceEvery == k%diceEvery {
			d.drawing = append(d.drawing, e)
		}
	}
	for _, e := range d.drawing {
		dice.Ptr(e).R.Uint64()
	}
}

// rngDiff compares a client's RNG state (the world's and every entity's
// stream) with the server's: "" when equal.
func (d *serverDemo) rngDiff(dc *demoClient) string {
	sw := d.arena.World()
	want, _ := ecs.ResourceOf[rng.Rand](sw).Get()
	got, ok := ecs.RegisterResource[rng.Rand](dc.world).Get()
	if !ok || got != want {
		return fmt.Sprintf("world RNG %v, server %v", got, want)
	}
	cdice := ecs.Register[Dice](dc.world)
	q := ecs.NewQuery1(ecs.Register[Dice](sw).Read())
	for e, r := range q.All() {
		ce, ok := dc.rc.ClientEntity(e)
		if !ok {
			return fmt.Sprintf("entity %v missing", e)
		}
		if v, _ := cdice.Get(ce); v != *r {
			return fmt.Sprintf("entity %v: stream %v, server %v", e, v.R, r.R)
		}
	}
	return ""
}

// disrupt cuts the disrupted client's proxy (both directions drop every
// datagram) at the tick --disrupt starts, and restores its link when it
// ends; since counts the ticks since the simulation started.
func (d *serverDemo) disrupt(since int) {
	if d.o.Disrupt <= 0 || len(d.clients) == 0 {
		return
	}
	p := d.clients[0].proxy
	switch since {
	case d.cutAt():
		cut := transport.LinkConfig{Down: true}
		p.SetConditions(cut, cut)
		d.cut = true
	case d.cutAt() + d.disruptTicks():
		link := d.link()
		p.SetConditions(link, link)
		d.cut = false
	}
}

// cutAt is the simulation tick at which the disruption starts: a third
// into the run.
func (d *serverDemo) cutAt() int { return d.o.Ticks / 3 }

// disruptTicks is the disruption's length in ticks.
func (d *serverDemo) disruptTicks() int {
	return int(d.o.Disrupt.Seconds()*serverTickRate + 0.5)
}

// link is every client's link when not disrupted.
func (d *serverDemo) link() transport.LinkConfig {
	o := d.o
	return transport.LinkConfig{Latency: o.Latency, Jitter: o.Jitter, Loss: o.Loss, Duplicate: o.Dup}
}
