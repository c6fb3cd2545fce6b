package ecs

import "errors"

// Errors returned by World operations. Compare with errors.Is.
var (
	// ErrNotAlive: the entity is the zero Entity, was despawned, or its
	// generation is stale.
	ErrNotAlive = errors.New("ecs: entity is not alive")
	// ErrNotRegistered: the component or resource type was not registered with
	// the World.
	ErrNotRegistered = errors.New("ecs: type not registered")
	// ErrLocked: a structural change (insert of a new component, remove,
	// despawn, hierarchy change) was attempted while a query was iterating;
	// record it in a Commands buffer instead.
	ErrLocked = errors.New("ecs: structural change while iterating; use Commands")
	// ErrCycle: SetParent would make an entity its own ancestor.
	ErrCycle = errors.New("ecs: hierarchy cycle")
	// ErrSlotInUse: SpawnAt was asked for a slot index that holds a live entity.
	ErrSlotInUse = errors.New("ecs: entity slot in use")
	// ErrWriteThroughRead: in checked mode (World.SetChecks), a query loop
	// found a value written through a pointer or slice of Read access. The
	// loop panics, when it ends, with an error wrapping it that names the
	// type and the entity.
	ErrWriteThroughRead = errors.New("ecs: write through Read access")
)
