// Package predict is client-side prediction on top of server-authoritative
// replication (package replicate; the bevy_timewarp / lightyear model):
// the client simulates ahead of the server with its own inputs, keeps the
// history of what it predicted, and when an authoritative value for a
// past tick differs, rolls back to that tick, re-simulates to the present,
// and reports the correction so a renderer can blend it away.
//
// # The frame
//
// A game runs one ServerFrame on the server and one ClientFrame per
// client; each calls Frame once per loop:
//
//	// both sides, in the same order: what replicates, and the input type
//	p := replicate.NewProtocol()
//	replicate.Component[Ship](p, replicate.WithOwnRule())
//	in, _ := input.Register[Stick](p, nil, input.Config{})
//
//	// server, once per tick F
//	sframe := predict.NewServerFrame(srv, in)
//	sframe.Frame(F, func(t tick.Tick, input func(replicate.ClientID) Stick) { ... })
//
//	// client, once per rendered frame
//	tl := predict.New(world, 0, predict.Config{})
//	ships, _ := predict.Register[Ship](tl)
//	predict.AttachComponent(client, ships)
//	cframe, _ := predict.NewClientFrame(client, tl, in, predict.ClientFrameConfig{RTT: rtt})
//	cframe.Frame(elapsed, readStick, simulate)
//
// The server's frame receives the clients' inputs, simulates tick F with
// each client's input for F, forwards the inputs to the other clients,
// reports to each client when its inputs arrived, and sends the values
// of F. The client's frame receives (server values go to the Timeline,
// never straight into the predicted components), keeps the client the
// right number of ticks ahead of the server (package predict/ticksync),
// and for each tick due reads the game's input, sends it with redundancy
// (package predict/input) and runs Timeline.Step: roll back if a server
// value differs, re-simulate, then simulate the next tick.
//
// ExampleClientFrame runs this whole loop, server and client over an
// in-memory network, and prints what the client predicted; Example_readme
// is the same program as README.md shows it.
//
// # Where to start
//
//   - ClientFrame, ServerFrame: the composed frame (client.go, server.go).
//     ClientFrameConfig tunes it; ClientStats counts what it did.
//   - Timeline (New, Config, Step): the rollback window over an ecs.World.
//     Register a predicted component type (Component[T]) or resource
//     (Resource[T]) before the first Step; everything else in the World
//     is never rolled back. Example runs a Timeline alone.
//   - Attach, AttachComponent, AttachResource, AttachSplit: route a
//     replicate.Client's values into the Timeline (NewClientFrame calls
//     Attach). AttachSplit interpolates some entities of a type (package
//     predict/interp) and predicts the others.
//   - Timeline.Spawn, SpawnKey, ServerSpawn: predicted spawns, a fired
//     bullet shown at once and later adopted by the server's entity
//     (ExampleTimeline_Spawn).
//   - Correction, LogCorrections, Decay: blending a correction away.
//   - Stats, TypeStats: what the Timeline did (rollbacks, range faults,
//     corrections, resyncs).
//
// # The rules the simulation keeps
//
// The simulation function passed to Step (and to ClientFrame.Frame) must
// be deterministic: it reads only the World, the inputs for the tick it
// simulates, deterministic time and the World's RNG (a predicted
// resource); no wall clock, no global RNG, no map iteration, no
// goroutines. It writes only predicted components and resources, spawns
// with Timeline.Spawn and despawns with Timeline.Despawn. Changes from
// outside the simulation go through Component.Insert, Authoritative,
// Timeline.DespawnAt and the like (refused inside Step with ErrInStep).
// Exact equality compares canonical bytes, so floats mismatch on any
// bit: give a tolerance with Compare, or use package fixed.
//
// A value for tick T is the server's state at the end of T: it applies
// at the end of T, and the simulation of T+1 starts from it. An
// authoritative value does nothing until its tick is complete
// (Timeline.Complete, which Attach calls from replicate's TickComplete
// hook). Values older than the window are range faults (Stats.RangeFaults)
// and ask the server for a resync; values more than the window ahead are
// refused (ErrTooFarAhead).
//
// # What it guarantees
//
// After a Step whose rollbacks were not held, the history at every
// complete tick equals the server's values for that tick; one rollback
// per Step at most, to the oldest tick needing it; a rollback never
// undoes entity identity or structure applied from outside the predicted
// types, and stamps change ticks only on values it changes; steady-state
// Steps allocate nothing, and history memory is bounded by Window+1
// copies of each predicted store. A predicting client's checksum reports
// describe its confirmed state (AttachChecksum), so replicate's desync
// detection works with prediction.
//
// The reasoning behind these choices (the history's layout and the cost
// floor of a rollback, changes in the past, the predicted spawns'
// decisions, resyncs, desync detection, the invariants and their tests)
// is in ARCHITECTURE.md, "predict: design notes".
package predict
