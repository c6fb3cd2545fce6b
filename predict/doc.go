// Package predict is client-side prediction on top of server-authoritative
// replication (the bevy_timewarp / lightyear model): the client simulates
// ahead of the server, keeps the history of what it predicted, and when an
// authoritative value for a past tick differs, rolls back to that tick,
// re-simulates to the present, and reports the correction so a renderer can
// blend it away.
//
// # Pieces
//
// A Timeline runs the client's fixed steps over an ecs.World. Predicted
// component types are registered with Register (a Component handle),
// predicted resources with RegisterResource; everything else in the World
// (replicated but not predicted components, render state, the entity
// allocator) is never rolled back. Each registered type keeps its history
// for the rollback window W (Config.Window, default 30 ticks): the store's
// values at each of the ticks Now-W .. Now, saved with a memory copy (the
// copy strategy of package snapshot: plain data only), entity layouts and
// unchanged value buffers shared between ticks, no allocation per tick once
// the buffers have grown. An entity's history starts at the tick its
// component appeared.
//
// A rollback's work beyond the re-simulation itself is kept to memory-speed
// passes: the restore compares blocks of values with the saved ones and
// decides change stamps value by value only in blocks that differ; a
// re-simulated tick is re-saved by comparing the store with the earlier
// prediction of the same tick, in 4 KiB blocks, and copying only the
// blocks that differ (a misprediction usually changes few entities), so
// the re-save reads the history rather than rewriting it. Every tick of
// the window stays saved: any of them can still be compared with server
// values or be the target of a later rollback.
//
// So a rollback of k ticks moves at least the predicted bytes k+1 times
// beyond the simulation: it restores tick T, reads the earlier
// prediction of each re-simulated tick to compare it with the World
// (rewriting it instead costs the same), and copies the new tick Now.
// BenchmarkPredictRollback measures that floor beside the rollback and
// the simulation alone, in the same run: floor is the simulation plus
// exactly those copies and 4 KiB compares as raw memory operations, with
// no layouts, change stamps or bookkeeping. With its light simulation (a
// few adds per entity over 52 bytes of predicted state, 28 of them written
// each tick) and k = 8, the floor is about 1.35x the simulation alone at
// 1,000 entities, where the frames in play (about 0.25 MB) stay in the L2
// cache, and 1.6-1.7x at 10,000 entities, where the nine frames a
// rollback touches (2.5 MB, beside the World's 0.5 MB) no longer fit a
// 2 MB L2 and are read from L3: the 1.5x is then below what any
// design that keeps every tick saved can reach, a limit of memory
// bandwidth, not of this code. The rollback itself measures about 1.47x
// at 1,000 and 1.7-1.8x at 10,000 entities, within 5-10% of the floor;
// the difference is mostly the change stamps a restore keeps exact
// (invariant 5). A heavier simulation per byte of predicted state lowers
// both ratios.
//
// # The frame
//
// Server (replicate's job; the tick is the game's simulation tick): receive
// inputs and messages for tick F, simulate F, then send the values after
// simulating F. So a value for tick T is the server's state at the end of T.
//
// Client, once per fixed step:
//
//  1. Receive phase (replicate.Client.Update). Structure is applied to the
//     World at once (spawns of server entities, non-predicted components);
//     it is never undone by a rollback. Predicted values go to the
//     Timeline as "server values at T" (Component.Authoritative,
//     AuthoritativeRemove, Resource.Authoritative), never straight into the
//     predicted components; despawns as Timeline.DespawnAt(e, T); a
//     complete tick as Timeline.Complete(T). Game code makes its own
//     changes from outside the simulation the same way (Component.Insert,
//     Remove at a tick).
//  2. Timeline.Step(sim): decides whether to roll back: every complete
//     tick with authoritative values not yet checked is compared with the
//     history (with the World for Now; the type's compare function, exact
//     equality by default; every such tick in Forced mode), and requests
//     (Timeline.Request, changes made in the past) are added; all of them
//     consolidate into one rollback to the oldest tick T. The current
//     state is saved as tick Now (by the re-simulation when T is earlier).
//     The rollback restores T's predicted state, applies T's
//     authoritative values and changes, then re-simulates T+1 .. Now with
//     InRollback true and Tick the tick being re-simulated, applying each
//     tick's values and changes after simulating it and saving it again.
//     Then Step simulates the next tick, applies the values already
//     received for it (a client behind the server), and makes it Now.
//  3. Send phase: the game sends its input for the tick (not during
//     rollbacks).
//
// A value for T applies at the end of T: its tick's state includes it, the
// simulation of T+1 starts from it. So a blueprint or spawn received for T
// exists at the start of T+1, as in bevy_timewarp.
//
// # Changes in the past
//
// Inserting a component in the past is an authoritative value for a
// component the history lacks at T (a mismatch); removing one is
// AuthoritativeRemove. Spawning in the past is a World spawn now (identity
// is structure) plus values at T: before T the entity has no predicted
// components in any re-simulation. Despawn is a marker (Timeline.Despawn
// from the simulation, DespawnAt from outside): the entity's predicted
// components are removed at once, its identity and history stay, a
// rollback to an earlier tick revives it, and the World despawn happens
// when the marker's tick T leaves the window, at the end of the Step that
// simulates T+W+1 (W the window). A marker the simulation made is
// predicted state: a rollback before it drops it, and the re-simulation
// makes it again only if it still happens. A DespawnAt(e, T) in the past
// requests a rollback to T, unless the simulation already put e's marker
// at T (a predicted despawn, such as a bullet expiring on both sides at
// the same tick): the rollback would change nothing
// (TestDespawnAtPredicted).
//
// Values, removals and despawns older than the window (after a network
// cut or a stall longer than the window) apply at the oldest tick the
// history holds (Timeline.Oldest), before that tick's own values, and the
// next Step rolls back there: every tick held then has them, as the
// server's state had them since their tick (a bullet the server spawned
// during a cut has the velocity of its spawn at every tick held, a
// bullet it despawned is gone from every tick held), not from Now only.
// They are counted (Stats.RangeFaults, LastRangeFault) and reported to
// the OnRangeFault function: the one Attach and NewClientFrame install
// asks the server for a resync (see RNG and resyncs). An authoritative
// component value or removal older than the window waits for the next
// Step first: a newer one of the same entity and type arriving before it
// (replication delivers a held-up batch at once, oldest first)
// supersedes it, counted in Stats.Superseded, not a range fault: an older
// late one is dropped, one older than a newer value within the window
// still applies from the oldest tick held until that value (late.go).
// Values more than W ticks ahead are refused (ErrTooFarAhead).
//
// What a range fault leaves uncertain is what the server did not send: a
// value unchanged on the server since before the cut, which the client's
// prediction changed meanwhile (its own ship moved by inputs the server
// never received). So from the oldest tick held at the first range fault
// until the resync, ticks are not final: Timeline.Confirmed reports false
// for them, and checksum reports of them are not sent. From the resync's
// tick on, complete ticks are Confirmed again once a Step compared them
// (TestRangeFaultHistory, TestClientFrameResyncOnRangeFault).
//
// For tests and checkers: an authoritative value does nothing until its
// tick is complete (call Complete, as replicate's TickComplete hook does;
// Insert needs no completeness), Component.At answers for Timeline.Oldest
// .. Now (Now from the World outside Step), Confirmed says which ticks
// to compare with the server's state, and each Component or Resource
// handle has its own Stats (ExampleComponent_Authoritative,
// ExampleComponent_At, ExampleComponent_Stats, ExampleTimeline_Despawn).
//
// # Corrections
//
// Types registered with LogCorrections get a Correction (entity, tick,
// before, after) for every entity whose value at Now a rollback changed;
// Decay is a frame-rate independent exponential decay of the visual
// offset for blending them away.
//
// # Invariants
//
//  1. A rollback never undoes entity identity or structure applied from
//     outside the predicted types: the entity allocator is not part of the
//     history, entities spawned after the tick rolled back to stay alive
//     (without predicted components before their first value), entities
//     despawned from the World since are skipped, never resurrected.
//  2. After a Step whose rollbacks were not held (HoldRollbacks), the
//     history at every complete tick it holds equals the authoritative
//     values received for that tick (for the predicted types the server
//     sent; with a tolerant compare function, within the tolerance), and
//     at every Confirmed tick the server's state.
//     TestCompleteTicksMatchServer checks it under loss and late delivery;
//     after a range fault, see above for the ticks before the resync.
//  3. Forced mode reaches the same state as the normal mode.
//  4. One rollback per Step at most, to the oldest tick needing it.
//  5. A rollback stamps change ticks only on values whose bytes it changes
//     (like a snapshot load), so observers see no phantom changes.
//  6. Steady-state Steps allocate nothing; history memory is bounded by
//     W+1 copies of each predicted store (less when stores are unchanged).
//
// # Determinism
//
// The simulation function passed to Step must be deterministic, as for
// P2P rollback: it reads only the World, the inputs stored for Tick(),
// deterministic time and the World's RNG (a predicted resource); no wall
// clock, no global RNG, no map iteration, no goroutines. It writes only
// predicted components and resources (writes to other types are not
// undone), and must not spawn or despawn World entities directly (a
// re-simulation would do it again): it spawns with Timeline.Spawn (see
// Predicted spawns) and despawns with Timeline.Despawn. Changes from outside the simulation (Insert,
// Authoritative, DespawnAt...) are refused inside it with ErrInStep, and
// outside it they must go through those calls, not straight into the
// predicted stores: a direct write is kept only until a rollback to an
// earlier tick, which does not replay it. Exact
// equality compares canonical bytes, so floats mismatch on any bit: give a
// tolerance with Compare, or use package fixed.
//
// # Predicted spawns
//
// A bullet fired by the client appears at once and becomes the server's
// bullet without a flicker or a duplicate (lightyear's prespawning). Client
// and server name the spawn with the same SpawnKey: the client whose input
// caused it, its tick, a game-defined kind and an index (the n-th of its
// kind in the tick, or a hash of what distinguishes it), all computed from
// the input and state of that tick, so both sides agree.
//
// The client's simulation calls Timeline.Spawn(key) at tick F (the key's
// tick must be the one simulated): a World entity tagged with the key (the
// SpawnKey component, structure, never rolled back) to which it gives its
// predicted components. The server spawns its entity with ServerSpawn (or
// sets SpawnKey itself) in the same tick as replicate.Replicated, so the
// key travels in the spawn's update (RegisterSpawnKey: a component of its
// own rule, sent once, 24 bytes). On the client, replicate asks the adopt
// hook (replicate.ComponentHooks.Adopt, installed by Attach when the
// protocol has SpawnKey, or AttachSpawns) with the key of each server
// spawn: a key the simulation spawned is adopted, that is the server
// entity maps to the predicted entity (no second entity; its history is
// kept; the server's values then flow into it as for any replicated
// entity; those of its spawn tick roll back there only when they differ
// from the prediction, so a correct prediction's match costs no
// rollback, TestPredictedSpawnMatched). replicate knows nothing of
// predict: the hook is typed on SpawnKey and answers with an entity.
//
// The Timeline keeps the keys whose tick is within the window, in a slice
// (a few per tick; looked up linearly, never iterated as a map). Decisions:
//
//   - Refused at completion. The server spawns key F while simulating
//     tick F, so its spawn travels in F's update; replicate's updates are
//     reliable and ordered, and a tick's mutation messages apply only
//     after the update carrying the newest spawns, so once tick F, or any
//     later tick, is complete (Complete, replicate's TickComplete) every
//     server spawn of F has reached the client and been adopted. A
//     predicted spawn of F still unclaimed then is one the server did not
//     make (it lacked the input, or guessed another player's differently):
//     the next Step despawns its entity and rolls back to F-1 (to F when
//     F is the oldest tick held; consolidated with the Step's other
//     reasons, one rollback), and the re-simulation's Spawn of the key
//     fails with ErrSpawnRefused, making nothing, so tick F and those
//     after it are simulated again without the spawn and its effects (a
//     bullet not fired keeps its round). Counted in
//     PredictedSpawnsRefused and PredictedSpawnsDropped. The key is
//     remembered as refused until F leaves the window: every later
//     re-simulation of F is refused too. A later tick's completion
//     counts because a tick whose mutation message was lost never
//     completes: under loss F itself may never be complete. A client
//     behind the server that simulates F after it completed gets
//     ErrSpawnRefused at once (no entity, counted as refused only). A
//     server spawn for a refused key cannot arrive through replicate (its
//     update came before the completion); for a game that reports
//     completeness itself too early, it is spawned as unpredicted.
//   - Unconfirmed. A predicted spawn no server spawn claimed when its tick
//     leaves the window without a tick at or after it having completed
//     (the link stalled for the whole window) is despawned and counted
//     (PredictedSpawnsDropped): the window is how long replication may
//     take to confirm anything, so the same bound serves. A spawn
//     arriving later is spawned normally.
//   - Rollback before F. The predicted entity keeps its identity, but has
//     no predicted components before F in the re-simulation (its history
//     starts at F). When the re-simulation spawns the key again, Spawn
//     returns the same entity, so a renderer sees no flicker. When it no
//     longer does, an unmatched entity is despawned right after tick F is
//     re-simulated (PredictedSpawnsUndone, also counted as dropped); a
//     matched one stays: it is the server's entity, replicate maps it,
//     and the server's values of its spawn tick give it its components
//     again at F. (Lightyear despawns a matched prespawn on a rollback
//     before its tick and lets the replay spawn a replacement; since our
//     adopted entity is the replicated one, not a predicted copy of it,
//     keeping it is what leaves the mapping valid and nothing duplicated.)
//   - Server spawn without prediction. A key the client never spawned is
//     spawned normally; the Timeline spawns the entity for replicate and
//     remembers its key (ServerSpawnsUnpredicted), so that a
//     re-simulation that now spawns the key (a correction gave the client
//     the ammunition it lacked) gets the server's entity, not a second
//     one. Keys of other clients (remote players' bullets) take this path
//     too, unless the client predicts them under their key.
//   - Errors. Spawning a key twice in one simulation of its tick, a key of
//     another tick, or outside Step is ErrSpawnKey; a refused key is
//     ErrSpawnRefused, which the game handles by not making the spawn.
//   - Resyncs. A full resync (Timeline.Resync) keeps the keys; a refusal
//     never rolls back to before the resync's tick (the resync's state
//     replaces that history), the entity is despawned all the same.
//     Completeness is not undone by a resync: a tick complete before it
//     stays complete.
//
// A predicted spawn the simulation despawns (Timeline.Despawn) before the
// server's spawn arrives is still matched: the server's values of the
// spawn tick roll back there, and the re-simulation despawns it again if
// that still happens.
//
// # Tick synchronisation
//
// ticksync.Sync keeps the client's simulation ahead of the server so that its
// input for tick F reaches the server before the server simulates F. It
// steers by the server's InputReports (input.Buffer.SendReports): how
// early each input message arrived and which were lost. Matched with the
// messages' send times (Sent) and the client's position (Position), they
// give the offset between the client's clock and the server's ticks
// whatever the client's own lead, so the lead settles without swinging.
// The inputs aim to arrive Safety + JitterMultiple x jitter + r ticks
// early (r covers the measured loss, see ticksync.Config.LateTarget), plus a
// slow frame's length; the redundancy follows r (Redundancy). The error
// sets tick.Clock's rate; far off, it snaps, never moving the tick
// backwards. Until the reports steer, it steers by the arrival of server
// ticks (Observe, Lead). PresentLead estimates the lead over the server's
// present. With InputDelay d the input sampled at F is for F+d. The
// design, its reasons and its figures are in ARCHITECTURE.md (predict,
// "Tick sync"). ticksync.Sync reads no clock.
//
// # Interpolation
//
// Entities the client does not predict are shown in the past, between two
// authoritative values, by an interp.Buffer buffer per type: Push(e, t, v)
// for each server value (a late one is inserted in tick order, a
// duplicate replaces, at most Capacity kept per entity, the oldest
// dropped), Complete(t) for each complete server tick, Remove(e) when the
// entity goes or becomes predicted. The shown time is
//
//	Latest() + alpha - delay,  delay = max(5 ms, 1.7*SendInterval) + 2*jitter
//
// (ShowTime, interp.Config.Delay: lightyear's min_delay and
// send_interval_ratio; the jitter term keeps the next value there in
// time). Latest() jumps by 0 to several ticks per frame as packets arrive
// (the choppiness of lightyear #423); ShowAt with ticksync.Sync.Received (the
// client's tick minus the lead it keeps) moves with the client's clock
// instead. At(e, tick, frac) interpolates by tick distance with the user's
// function (or a Lerp method, interp.LerpMethod), so a lost tick is bridged.
// Past the newest value it holds the newest value rather than extrapolate
// (counted in Stats().Holds: a sign the delay is too short), since an
// extrapolation overshoots a stop or a turn and jumps back. Replication
// sends changes only, so complete ticks without a value mean "unchanged":
// a value after such a gap is interpolated from the previous value held
// through the last complete tick, and an entity at rest that starts
// moving moves from the tick it started, not across the gap. Steady-state
// Push and At allocate nothing.
//
// # input.Type
//
// input.Register[T] registers a game input type with a replicate.Protocol
// (three unreliable messages: client to server, server to the other
// clients, and the server's input.Report to each client). The client's
// input.Sender.Add(client, F, v) keeps v for re-simulation (Input(F), the
// last Window ticks) and sends it with the inputs of the K-1 ticks before
// it (K = Redundancy, default 3, raised by ClientFrame with the loss the
// reports measure; with a fixed K = 3 an input is lost at 20% loss only
// when 3 messages in a row are, 0.8%: TestInputsSurviveLoss measures
// 99.2% real at 20% loss and 60 ms RTT when the client is far enough
// ahead for all three copies to count, 84% with K = 1). input.Type are at
// most MaxInputSize bytes, one message per tick. The server's
// input.Buffer (ReceiveAt(s, F) after Server.Receive, F the tick about to
// be simulated) gives Input(client, F) for the tick it simulates,
// repeating the last input when F's is missing; it counts missing (each
// tick once), late (arrived after its tick was simulated without it),
// duplicate and garbage inputs (ticks more than Window from the simulated
// tick) per client (Stats), and Peek reads an input and when it arrived
// without counting. It notes each message's arrival for the client's
// next input.Report (SendReports, once per tick). Forward sends
// each client's newest inputs to the others; a client's input.Remote
// gives another player's input for a tick, or the last known one. A
// remote player whose inputs arrive before the client simulates their
// ticks (it sends them early, for example with an input delay) is
// predicted exactly, without rollbacks (TestRemoteInputsMakePredictionExact).
//
// Receiving inputs allocates nothing in steady state, replicate's receive
// path included (BenchmarkServerInputs: 64 clients, 0 allocations per
// tick): replicate validates and decodes messages into values it reuses,
// the batch decoder decodes into the batch's own slice, and the default
// input codec is the canonical form (the same bytes as encoding/binary
// for a fixed-size T) without reflection per value. So the input.Batch
// values replicate returns are only valid until the next receive: Store
// copies the inputs out.
//
// # Integration with replicate
//
// Attach(client, tl) and AttachComponent(client, comp) per predicted type
// (replicate.go) install replicate's hooks: a value for tick T becomes
// Component.Authoritative(e, T, v); a value sent with the structure of T
// (a spawn, an insertion: replicate.ValueInserted) and a removal
// (AuthoritativeRemove) also Request(T), since the server sends them only
// once and T may never be complete (a value the history already holds at
// T requests nothing: the rollback would change nothing); a value replicate gives again because
// an entity it refers to appeared (replicate.ValueRemapped) is an Insert
// from the tick it appeared, not a correction of the past; a despawn is
// DespawnAt(e, T) (no rollback when the simulation predicted it), the
// World entity leaving after the window (replicate forgets its server id
// at once; Timeline.ServerEntity keeps it while the entity stays); a
// complete tick is Complete(T). Spawns need nothing: replicate spawns the World
// entity at once and keeps its mapping, which no rollback undoes; a spawn
// carrying a SpawnKey adopts the predicted entity of that key
// (AttachSpawns, see Predicted spawns). Hooks
// returns the client hooks for a game that adds its own. The frame, with
// the server in two phases (replicate.Server.Receive, simulate F,
// Server.SendTick(F)):
//
//	server: srv.Receive(); buf.Receive(srv); simulate(F) with buf.Input;
//	        buf.Forward(srv); srv.SendTick(F)
//	client: client.Update(); remote.Receive(client); tl.Step(simulate);
//	        sender.Add(client, F, input)
//
// ExampleAttach runs it (without inputs: ExampleRegisterInputs shows the
// buffer). Predicted types must be replicated with the same
// types on the server. AttachResource does for a replicated resource what
// AttachComponent does for a component.
//
// # The frame, composed
//
// ClientFrame (client.go) runs the client's frame over a
// replicate.Client with the pieces above: Frame(elapsed, input, sim)
// receives (Update, input.Remote.Receive, the InputReports to
// ticksync.Sync.Report), feeds the newest complete server tick to the ticksync.Sync
// (one sample per frame that received a newer one), sets a tick.Clock's
// rate from it, and for each step due asks the game for its input for
// InputTick(F), sends it with input.Sender at the redundancy the ticksync.Sync
// asks for, and runs Timeline.Step(sim); it ends with ticksync.Sync.Position.
// A frame runs at most 8 steps and carries the rest to the next frames
// (the clock drops only what is due beyond half the window). An
// overloaded client (frames over ClientFrameConfig.SlowFrame, 2 ticks)
// holds its rollbacks (Timeline.HoldRollbacks) until it has simulated
// twice the ticks a rollback would re-simulate, so that re-simulation
// cannot take every frame and a slow machine does not spiral
// (TestNoDeathSpiral: at 150 ms RTT a client whose rolling-back frames
// cost 1.5x the tick budget misses under 1% of its inputs; at 6x, its
// work per frame stays flat and under 3% miss). It installs Hooks(tl) chained with the game's own
// hooks, and the adoption of predicted spawns when the protocol has
// SpawnKey (AttachSpawns); the game attaches its component types. The RTT
// comes from the
// connection (ClientFrameConfig.RTT, QUIC's smoothed RTT); the jitter is
// measured by the frame: the mean deviation (gain 1/4) of each newer
// complete tick's arrival less its nominal time, the variation of the
// server-to-client delay as the client sees it. Nothing is stepped before
// the first complete server tick; that sample snaps, and the client
// catches up by MaxCatchUp steps a frame, so the Timeline starts near the
// server's first tick. ServerFrame (server.go) is the server's side:
// Receive, input.Buffer.ReceiveAt(F), the simulation of F with each
// client's buffered input, Forward, SendReports, SendTick(F). AttachSplit (split.go) is the
// per-entity choice for one type: entities the game interpolates get
// their values in an interp.Buffer buffer, the others are predicted as
// with AttachComponent. ExampleClientFrame and ExampleAttachSplit run
// them; TestChaosClientsConverge (4 clients, random inputs, 15% loss,
// jitter, 1200 ticks, virtual time) and TestFrameOverQUIC check that
// every client's history equals the server's state at every complete tick
// it compares. A complete tick is compared once it is older than the
// client's Now: the history of Now is saved by the next Step, and values
// received in a frame that stepped nothing are applied by the next Step.
// "rewind demo predict" runs it all over QUIC, bullets included: each
// client fires the bullets of the ships it predicts as predicted spawns
// under the key the server spawns them with (its own ship's from its
// inputs, the others' from their forwarded or last known inputs),
// expires them with Timeline.Despawn at the server's tick, and does not
// fire a bullet Spawn refuses (ErrSpawnRefused: a wrong guess of
// another ship's fire, or an input the server lacked, known once the
// tick completes).
//
// # RNG and resyncs
//
// The server owns the random generators (package replicate's RNG
// ownership): the world's rng.Rand as a resource, per-player or
// per-entity streams as components holding an rng.Rand. A client predicts
// them like any state: RegisterResource[rng.Rand] with AttachResource,
// Register of the stream component with AttachComponent. rng.Rand is
// plain data, so its history is a copy of its 16 bytes per tick; a
// rollback restores the generators of the tick it returns to, and the
// re-simulation draws again exactly what it drew the first time
// (TestRNGRestoredAfterRollback). A client predicting a random event
// therefore draws what the server draws, from the moment its first update
// (which holds the generators) arrives (TestLateJoinerFirstRandomEvent,
// TestSameSeedSameSequence, and the card game of
// TestDeckShuffleAcrossDisruption).
//
// A resync (replicate.ResyncFull, ResyncPartial, ResyncRNG) replaces the
// client's replicated state, or part of it, with the server's at tick T.
// A partial or RNG-only one replaces some values only: they arrive as
// authoritative values of T, which roll back to T like any correction,
// and the rest of the history stays valid. For a full one, Hooks' Resync
// hook calls Timeline.Resync(T) before the resync's values arrive: the
// history is reset at T (older ticks are forgotten; values,
// changes and requests of older ticks that arrive later are obsolete:
// ErrObsolete, Stats.Obsolete, never range faults), and the resync's
// values are authoritative values of T. With T in the window, the next
// Step rolls back to T and re-simulates to Now from the resynced state; a
// T ahead of Now applies when simulated; a T older than the window is a
// snap at Now. Stats.Resyncs counts them.
//
// Triggers: a range fault (the OnRangeFault function of Attach and
// NewClientFrame sends replicate.Client.RequestResync, at most one unanswered request a
// second; the server rate-limits too); a network interruption
// (replicate.ClientConfig.ResyncAfterSilence: a client that received
// nothing for that long asks with the first message after it); a desync
// (replicate.ServerConfig.ResyncOnDesync: a checksum report that differs).
//
// # Desync detection
//
// With replicate's ChecksumInterval set on both sides, a client reports
// the checksum of server tick T and the server compares it with its own
// (replicate's Desync detection). A predicting client's World holds
// predicted values of ticks ahead of T, so its World's checksum differs
// by design; AttachChecksum (installed by Attach and NewClientFrame)
// makes the report describe the client's confirmed state at T instead:
//
//   - the predicted types registered with the Timeline and replicated by
//     the protocol: their history at T, once the Step after T became
//     complete (the Step that compares T's authoritative values and rolls
//     back when they differ) made it final, that is the server's values
//     at T; a client behind the server waits until it simulated T and
//     stepped once more;
//   - everything else (the set of replicated entities, non-predicted
//     types and resources): the World when T completed, with nothing
//     newer applied, as without prediction;
//   - a type split by AttachSplit: the predicted entities' history at T
//     plus, for each entity of its interp.Buffer buffer, the value the
//     buffer holds for T (its newest value at or before T: the entity
//     was unchanged since, so that is the server's value at T).
//
// replicate computes the report at T's completion and holds it
// (replicate.Client.HoldChecksums); after each Step, the Timeline sums
// each predicted type's history at the held ticks now final with
// replicate.ComponentSummer and ResourceSummer (the same per-value terms
// as replicate's checksum: one implementation), replaces those parts and
// sends the report (ReportChecksum). Decisions:
//
//   - The history is read, not restored: restoring the World to T and
//     back would stamp changes and cost two restores per report; summing
//     the saved frame allocates nothing (BenchmarkChecksumPart: about
//     the cost of replicate.StateChecksum of the same world).
//   - A type registered with a compare function may keep a prediction the
//     compare accepted: the authoritative values received for T replace
//     the history's in the sum. A value the server sent at an earlier
//     tick and the client's tolerance let drift since still differs: use
//     exact comparison (the default) for types checked for desyncs.
//   - An entity the server despawned after T is still counted at T under
//     its server id: Hooks' Despawn hook notes the id while replicate
//     still maps it.
//   - The interpolated values of a split type are summed when T
//     completes (the HoldChecksums callback), not after the Step: replicate
//     reports T only when T is the newest tick seen and complete, so each
//     buffer then holds every value up to T and none newer, and replicate
//     still maps every entity alive at T. The interp.Buffer buffer needs
//     no capacity for the reports beyond its newest value (any Capacity
//     works); the sum waits with its report, at most 16 held reports
//     (one per report tick). An entity replicate no longer maps (gone at
//     or before T, not yet removed from the buffer) does not count. The
//     sum allocates nothing (TestSplitSummer).
//   - A report whose tick leaves the window before a Step makes it final,
//     or that a full resync made obsolete, is not sent
//     (Stats.ChecksumsDropped); Stats.ChecksumsReported counts the others.
//
// A desync names the differing types on both sides, and the server's
// ResyncOnDesync resyncs the client (partial when the entities agree):
// its values arrive as authoritative values of the resync's tick and
// roll back there like any correction (TestChecksumPredictingDesyncRepaired:
// a corrupted predicted velocity the server never sends again, or a
// corrupted non-predicted tag, is named at the next report tick, resynced
// partially, and later reports are clean). An interpolated value is never
// simulated, so it differs from the server's only if it was never sent:
// TestChecksumSplitDesyncNamed pushes one into the buffer, and it is
// named, resynced and clean after like a predicted one;
// TestChecksumSplitNoFalseDesync runs a split client under loss with no
// false desync.
package predict
