// Package ecs is rewind's rollback-ready world: entities, typed component
// stores, resources, queries and change ticks, built so that package snapshot
// can save and restore it every frame at close to memory speed and package
// replicate can send exactly what changed.
//
// # Entities
//
// An Entity is a slot index plus a generation. Despawning bumps the slot's
// generation, so stale handles never alias newer entities. The allocator (slot
// generations and the LIFO free list) is world state: a snapshot load brings
// despawned entities back with the same Entity values, and the next Spawn after
// a load returns what it returned the first time. Because identities survive a
// load, entity references stored in components stay valid without remapping;
// EntityMapper and MapEntitieser exist for moving references between worlds
// (server to client). SpawnAt creates an entity with a caller-chosen identity.
//
// # Components, resources and queries
//
// Component types are registered per World with Register, which returns the
// type's Store: a sparse set whose values, entities and change ticks sit in
// dense parallel slices. Resources (singletons whose presence is state) are
// registered with RegisterResource. Nothing is global: two Worlds never share
// registrations.
//
// Queries (NewQuery1 to NewQuery4) are Go iterators over entities having all
// the listed components, optionally filtered With or Without others. Each
// component is accessed with Store.Write (pointers into the store; every value
// visited is marked as written) or Store.Read (pointers into the store for
// reading only; nothing is marked). A query remembers,
// by the stores' layout ids, whether its stores hold the same entities in the
// same order; while they do, it walks their dense arrays side by side.
//
// # Change ticks
//
// The World keeps a change tick (Tick, AdvanceTick). Every component value and
// resource records when it was added and when it was last written. Every way
// of writing is caught: Set, Ptr, Resource.Ptr, Store.All and write access in
// queries all stamp the value. SetIfChanged skips the stamp when the value is
// equal. Read access is the one way to get a pointer that must not be
// written through: Go cannot make it read-only, and copying every value read
// would cost a third of a typical loop, so the rule is a contract that
// checked mode verifies (World.SetChecks: reads go through copies compared
// after each chunk, and a loop that wrote through one panics with
// ErrWriteThroughRead naming the type and entity). Run tests in checked
// mode; a write that slips through in normal mode changes the value without
// its tick, so replication misses it and a snapshot load may not undo it
// (SyncTest's checksums then report the component type). A snapshot load stamps
// the values it changes and leaves the others alone (see RestoreStore): for
// plain-data types exactly the values whose bytes differ, so it leaves no
// phantom changes for a replication layer to send.
//
// # Structural changes and misuse
//
// Inserting or removing components of a Store, or despawning an entity that
// has a component in it, while a query iterates that Store fails with
// ErrLocked; record such changes in Commands and Apply them after the loop.
// Loops unlock their stores when they end, break or return. Query and Store
// iterators have no deferred cleanup (so that the loop body compiles into a
// plain loop over the stores' arrays): if a loop body panics, its stores stay
// locked until the next snapshot load, which releases every lock; Batches
// loops unlock even then.
// Operations on dead or stale entities fail with ErrNotAlive or return zero
// results, and type-keyed helpers on unregistered types fail with
// ErrNotRegistered: misuse never corrupts the World.
//
// # Snapshots
//
// Package snapshot saves and loads a World every frame; a game uses its
// Ring, never the pieces it is built from here: the read views Column and
// EntityState, and the restore protocol (BeginRestore, RestoreStore,
// Restore.Finish) that loads a saved frame.
//
// # Hierarchy
//
// Parent/child links are the plain-data Hierarchy component (an intrusive
// linked list), registered in every World, so they snapshot and remap like any
// component. Despawn orphans children; DespawnRecursive removes a subtree.
//
// # Determinism
//
// Iteration order depends only on the sequence of operations applied to the
// World, never on maps, addresses or time: two Worlds given the same operations
// iterate identically, and a snapshot load restores the exact dense order.
// Simulation code must read only the World, the frame's inputs, deterministic
// time (package tick) and the World's random generator (package rng as a
// resource); it must not read the wall clock, iterate maps or start
// goroutines. A World is not safe for concurrent use.
package ecs
