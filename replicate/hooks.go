package replicate

// The client's hooks: what a prediction layer (package predict) or the game
// learns of each change replication makes, with the server tick it belongs
// to, and may take instead of having it written into the World.

import (
	"fmt"
	"reflect"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// ValueKind says why a component value hook is called.
type ValueKind uint8

const (
	// ValueAuthoritative: a value the server sent for tick t in a mutation
	// message, the server's state at the end of t. A value older than what
	// the entity has (mutations arrive out of order) is not written into
	// the World but still given to the hook with its tick.
	ValueAuthoritative ValueKind = iota + 1
	// ValueRemapped: a value received earlier, given again because an
	// entity it refers to appeared on the client or left it in the update
	// of tick t (t is that update's tick, or the value's own tick when
	// newer). The server's value did not change: only what its references
	// resolve to here, from t on. It is no new authority about the past.
	ValueRemapped
	// ValueInserted: an authoritative value for tick t carried by the
	// update of t, with the structure of the tick: the entity's spawn, the
	// component's insertion, or a value of an entity whose structure
	// changed at t. Updates are reliable and never resent with newer
	// values, so a prediction layer applies these from t on even when
	// tick t is not complete.
	ValueInserted
)

func (k ValueKind) String() string {
	switch k {
	case ValueAuthoritative:
		return "authoritative"
	case ValueRemapped:
		return "remapped"
	case ValueInserted:
		return "inserted"
	}
	return fmt.Sprintf("ValueKind(%d)", uint8(k))
}

// ComponentHooks are a client's hooks for component type T (SetHooks).
// Each gets the client entity and the server tick; a hook returning true
// takes the change, which is then not written into the World. Nil hooks
// leave the default (write into the World).
type ComponentHooks[T any] struct {
	// Value gets each value of T received, references already mapped to
	// client entities, and its kind.
	Value func(e ecs.Entity, t tick.Tick, v T, kind ValueKind) bool
	// Remove gets each removal of T by the server at tick t (the
	// component left the entity, or no rule replicates it any more).
	Remove func(e ecs.Entity, t tick.Tick) bool
	// Adopt is consulted when a server entity spawned at tick t reaches
	// the client with a value v of T in its spawn (before any of its
	// values is written, references in v mapped to the client entities
	// known so far), unless a Server.MapClientEntity mapping already
	// names its client entity. Returning a live client entity that
	// replicates no server entity makes the client adopt it as that
	// server entity instead of spawning one: the mapping, the Spawn
	// hook and the values then go to it as to a spawned entity. Any
	// other answer spawns a new entity. This is how a prediction layer
	// matches a server spawn with the entity it predicted (package
	// predict's SpawnKey); it is called once per spawn and type, in the
	// order of the component ids, until one adopts.
	Adopt func(t tick.Tick, v T) (ecs.Entity, bool)
}

// SetHooks installs the hooks of component type T on c, replacing any set
// before (SetReceiveHook included).
func SetHooks[T any](c *Client, h ComponentHooks[T]) error {
	pc := c.p.byType[reflect.TypeFor[T]()]
	if pc == nil {
		return fmt.Errorf("%w: %v", ErrUnknownType, reflect.TypeFor[T]())
	}
	c.comps[pc.id].(*typedComponent[T]).hooks = h
	return nil
}

// SetReceiveHook routes authoritative values of component T to fn instead
// of writing them into the world, when fn returns true: the value hook of
// SetHooks for ValueAuthoritative and ValueInserted values. Remapped values and
// removals are written into the World.
func SetReceiveHook[T any](c *Client, fn func(e ecs.Entity, t tick.Tick, v T) bool) error {
	return SetHooks(c, ComponentHooks[T]{Value: func(e ecs.Entity, t tick.Tick, v T, kind ValueKind) bool {
		return kind != ValueRemapped && fn(e, t, v)
	}})
}

// ClientHooks are a client's hooks for entities and ticks (SetClientHooks),
// called during Update with client entities and server ticks.
type ClientHooks struct {
	// Spawn is called when a server entity spawned at tick t reaches the
	// client as client entity e (spawned, or a predicted entity adopted),
	// before its components are written.
	Spawn func(e ecs.Entity, t tick.Tick)
	// Despawn is called when the server despawned e at tick t (or hid it
	// from this client). Returning true takes the despawn: the client
	// forgets e (it no longer replicates it) but leaves it in the World,
	// whose owner despawns it; false: the client despawns it at once.
	// A disconnection despawns every replicated entity without it.
	Despawn func(e ecs.Entity, t tick.Tick) bool
	// TickComplete is called like ClientConfig.TickComplete (after it),
	// for each server tick whose data has all arrived.
	TickComplete func(t tick.Tick)
	// Resync is called when the client applies a resync of kind at server
	// tick t, before anything of it is applied: the update of t then
	// replaces the client's replicated state (all of it, or the part the
	// kind replaces) with the server's at the end of t.
	Resync func(t tick.Tick, kind ResyncKind, reason string)
}

// SetClientHooks installs c's entity and tick hooks, replacing any set
// before.
func (c *Client) SetClientHooks(h ClientHooks) { c.hooks = h }
