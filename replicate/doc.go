// Package replicate is server-authoritative replication in the
// bevy_replicon model: a server owns the world, and each client holds a
// copy of what it may see.
//
// # Protocol
//
// Server and clients build the same Protocol: replicated component types
// (Component, with the canonical little-endian codec for plain data, a
// custom Codec, or a wire form for quantization via WithWireForm; modes
// OnChange and Once), Rules that replicate sets of components together under
// With / Without filters and priorities, and message types (RegisterMessage)
// in either direction on a reliable-ordered, reliable-unordered or
// unreliable channel, and replicated resources (ReplicateResource, with the
// same codecs and modes). Its Hash is checked when a client connects: a client
// built with another protocol is refused with ErrProtocolMismatch, whose
// message names the first component, resource or message type that
// differs (the rejection carries an outline of the server's protocol). An
// Authenticate hook checks a token before anything is replicated.
//
// Rules filter as in bevy_replicon: a component replicates only through the
// rules that contain it, and a rule applies to an entity that has all of
// its components and passes its filters. So a rule over Position and
// Velocity sends neither until the entity has both, and a rule with
// Without[Secret] sends nothing of an entity that has a Secret. A
// component registered WithOwnRule also has a rule of its own (it
// replicates wherever an entity has it); a component in no rule makes
// NewServer and NewClient fail with ErrRegistered.
//
// # What travels
//
// Entities marked Replicated are replicated. Each server tick (the send
// phase, below), every client gets:
//
//   - at most one update message, reliable and ordered, applied atomically:
//     entity mappings (client-predicted spawns adopted by their server
//     entity), despawns, component removals, and spawns and insertions with
//     their values. An update also carries every value of the touched
//     entities that the client has not acknowledged, so older mutations of
//     those entities are stale.
//   - mutation messages, unreliable, with the latest values of components
//     changed since the client last acknowledged them, split at entity
//     boundaries to fit a datagram (one entity too large for a datagram
//     goes on the reliable-unordered channel). Each names the update tick it
//     needs, the last one with entities (the client holds it until then;
//     an update of resources alone is not needed), carries a sequence number the
//     client acknowledges, and its index and count within the tick, so the
//     client knows when all data of a tick has arrived. Values not
//     acknowledged in time (about 1.5 round trips, measured from the acks
//     themselves so queueing counts, backing off while messages keep timing
//     out) are resent with their latest value; a late ack of an earlier send
//     still counts. The client does not write values older than what it
//     has (a value hook still gets them, with their tick).
//
// Values are encoded once per tick and shared by every client; the entities
// that changed in a tick are laid out once, in datagram-sized segments. A
// client that is up to date (every older change of the segment's entities
// acknowledged, nothing resent or held back since) gets a whole segment as
// one message in one copy, without the server touching its per-entity
// state, so a server's cost per client stays small when most clients keep
// up. Clients behind, and entities hidden from a client, go entity by
// entity. A priority
// per entity (SetPriority) throttles mutations with an accumulator: priority
// × ticks since the last send must reach 1, so low priorities send less often
// but never starve. Visibility is per client and entity (SetVisible,
// ServerConfig.HiddenByDefault): a hidden entity is not sent, one that
// becomes visible is sent whole, one that becomes hidden is despawned on that
// client. Late joiners get everything they may see in their first update;
// a disconnected client's state is dropped on both sides.
//
// An update of any size reaches its client: one larger than 64 KiB (a late
// joiner's first update holds the whole visible world) is cut into parts,
// sent at most 1 MiB per tick and client so it does not fill the
// connection's send queue at once, with the updates of later ticks queued
// behind it (at most ServerConfig.MaxUpdateBacklog queued, 256 MiB by
// default: a client beyond it is disconnected as not keeping up). The
// client buffers the parts (at most ClientConfig.MaxUpdateBytes, 256 MiB by
// default) and applies the update atomically once it has all of them;
// mutations and messages that need it wait until then. A 100,000-entity
// world (about 3.4 MB) reaches a joining client in a handful of ticks.
//
// # The server frame
//
// A server frame of tick F, F being the game's simulation tick, has two
// phases around the simulation (the frame of bevy_replicon with
// bevy_timewarp):
//
//  1. Receive phase (Server.Receive): accept new connections and read the
//     clients' hellos, acks and messages. The game then takes the client
//     messages (MessageType.ReceiveFromClients: inputs for F) and
//     simulates F.
//  2. Send phase (Server.SendTick(F)): replicate what changed in the world
//     since the previous send, that is the values after simulating F, and
//     the server messages queued since. A client takes a value for tick F
//     as the server's state at the end of F.
//
// Ticks come from the game, not from the library: they must increase from
// one send to the next, gaps allowed (ErrTick otherwise), and Server.Tick
// is the last one sent. Server.Send is the one-call frame for loops that
// do not read messages before simulating: Receive (unless it ran since the
// last send) and SendTick(Tick()+1); a game that reads messages inside
// Send's frame gets them one frame later.
//
// # Client
//
// The client maps server entities to its own, maps entity references inside
// components and messages (ecs.MapEntitieser) in both directions, rewrites a
// value when an entity it refers to appears later (or reappears under a new
// client entity after being hidden) or leaves the client (despawned or
// hidden: the reference becomes none), at a cost linear in the references
// written and the entities that came or went, keeps a per-entity
// confirmation history of the last 64 ticks, and reports complete ticks
// (ClientConfig.TickComplete, Client.TickComplete).
//
// Hooks (hooks.go) tell a prediction layer (package predict, whose Attach
// installs them) or the game about each change with the server tick it
// belongs to, and may take the change instead of having it written into
// the World: per component type (SetHooks) a value hook, told whether the
// value is new authority for its tick (ValueAuthoritative, from a
// mutation; ValueInserted, sent once with the structure of the tick in
// its update: a spawn, an insertion) or a value received before and given
// again because an entity it refers to appeared or left (ValueRemapped, at
// the tick of that update, never at the value's old tick), and a removal
// hook. A mutation older than what the entity has is not written into the
// World but still reaches the value hook with its tick; per client (Client.SetClientHooks) spawn,
// despawn (a taken despawn leaves the entity in the World for its owner)
// and tick completeness; and per component type an adopt hook, asked
// with the type's value in each spawn which existing client entity, if
// any, the server entity is (package predict matches its predicted spawns
// by a key this way). SetReceiveHook is the value hook for
// authoritative values alone. Entity identity and mappings stay
// replicate's: nothing a hook does to predicted values undoes them.
//
// # Resources
//
// A resource registered with ReplicateResource (an ecs.Resource[T], for
// example the world's rng.Rand) travels in the update message of the tick
// it changed in, after that tick's entities: its value when inserted or
// changed (OnChange; Once sends it only when it appears on a client), its
// removal when removed. A value is sent only when its encoding changed, so
// an untouched resource costs nothing and one handed out for writing but
// left as it was neither. Because the update is reliable, ordered and
// applied atomically, a client that has applied the update of tick T
// holds exactly the server's resources of T (mutations, unreliable and
// latest-value, give no such guarantee; resources.go says why the update
// was chosen, and what it costs: a resource changing every tick makes an
// update every tick). Server.FilterResource shows a resource to some
// clients only (hidden: removed there); a late joiner gets the present
// resources in its first update; a disconnect removes them on the client.
// Entity references in a resource follow their entities as in components.
// SetResourceReceiveHook gives a prediction layer the values with their
// tick. rng.Rand is plain data: as a resource it is the world stream, as a
// component a per-player or per-entity stream, both on the canonical codec
// (16 bytes); BenchmarkRNGWire reports its bytes per tick.
//
// A client message may hold empty references (the zero Entity); any other
// entity it names must be one replicated to that client.
//
// Server messages are delivered after the update of the tick they were sent
// in (unless registered Independent). One that does not fit its channel
// (ServerConfig.MaxMessageSize, 1 MiB by default, on the reliable channels;
// the conns' datagram size on Unreliable) is refused by SendToClients with
// ErrTooLarge and costs no client its connection. Client messages referring to entities
// the client cannot see are refused.
//
// Receiving game messages allocates nothing in steady state: the server
// validates each arrival by decoding it into a value it reuses, and
// ReceiveFromClients and ReceiveFromServer return a slice, and decode into
// values, that the next call for the same type reuses. Read them before
// the next call and copy what you keep; a Codec's Decode must set all of
// *v (it may reuse v's slices).
//
// # Hostile clients
//
// Everything a client sends is validated: decoders return errors (and have
// fuzz targets), and each violation is counted; a client that keeps
// misbehaving (ServerConfig.MaxViolations per second) is disconnected. Each
// client has its own quota (ServerConfig.MaxMessagesPerTick and
// MaxBytesPerTick, 256 messages and 64 KiB by default): no more is read from
// it per tick, nor waits of it in the server's inboxes until the game takes
// its messages; the rest waits in its own connection. There is no shared
// inbox cap, so nothing a client sends touches other clients: however much
// one sends, the others' messages are read the tick they arrive.
//
// A connection holds a client slot (ServerConfig.MaxClients) only once its
// hello passed the protocol check and authentication. Until then it is
// pending: it must say hello within ServerConfig.HelloTimeout (5 s by
// default) or it is rejected, and at most ServerConfig.MaxPending (64)
// connections wait at once, a newer one closing the oldest. Connections
// that never speak therefore cannot make the server refuse honest clients
// as full, and cost little while they wait (no per-entity state).
//
// A connected client is joining until it proves itself: its first
// acknowledgement shows that its first update (the whole world it may
// see) arrived, since a client acknowledges a mutation message only once
// it applied the update it needs. A joining client holds its entity
// states and its queued first update, so at most
// ServerConfig.MaxJoining (16) join at once: a hello that passes beyond
// them waits (pending, holding neither) and is admitted, in arrival
// order, when a joining client proves itself or leaves; one still
// waiting after HelloTimeout is rejected as busy. A joining client that
// has acknowledged nothing ServerConfig.JoinTimeout (10 s) after its
// first update was all handed to its connection is disconnected. The
// server's state of a client follows the clients present: it is freed
// when the client leaves.
//
// # Transports
//
// Server and Client run over transport.MessageConn: the in-memory network
// of package transport (tests, listen servers) or QUIC (transport/quic).
// Time comes from ServerConfig.Now, so tests run on virtual time.
//
// # Checkpoints and checksums
//
// SaveState and LoadState write and read the replicated state of a world:
// every Replicated entity with its registered components, and the present
// replicated resources (RNG streams included), entity references remapped
// on load (server restarts, debugging, checkpoints). LoadState checks the
// whole input before it changes the world (a refused state spawns
// nothing), then grows the world and each store once and writes.
//
// Decision: repeated loads go through a Loader, which keeps its input
// buffer, its binding of the protocol to the world and its table of
// loaded entities (LoadedEntities: saved to loaded, held in slices, with
// Lookup and ecs.EntityMapper; valid until the next load) from one load
// to the next. Reloading into the same world emptied of the previous
// load's entities (a client applying pushed checkpoints, a tool that
// reloads) allocates nothing once the world, its stores and the Loader's
// buffers have grown to the largest state; a first load, or a larger
// state, grows them. LoadState is a one-off Loader whose table it copies
// into a map, for code that loads once. The saved form interleaves each
// entity's values, so the write pass decodes value by value (a plain-data
// value whose canonical bytes are its memory is a copy, and is checked by
// its length alone) rather than copying columns in bulk.
//
// Checkpoints captures the replicated state every CheckpointConfig.Interval
// ticks (300 by default, 5 s at 60 Hz; the game calls Capture when Due,
// right after Server.Send) into a ring of at most Max checkpoints (8)
// whose memory, with the one spare set of buffers the next capture reuses,
// stays under MaxBytes (64 MiB), the oldest dropped first.
//
// Decision: a capture is a memory copy of the replicated stores, and
// serialization waits until a checkpoint is used. Capture copies each
// replicated component's column (entity ids and values) and each
// replicated resource into the buffers of the checkpoint it drops, as
// package snapshot's copy strategy does, so it costs about a raw copy of
// those bytes and allocates nothing in steady state; values that hold
// pointers (a component with its own codec over a slice, say) are stored
// as their codec bytes instead, so a checkpoint never shares memory with
// the live world. Checkpoint.AppendState writes the SaveState form from
// the copy (what a save or a client is sent, what LoadState reads) and
// Checkpoint.Checksum computes the checksum with its per-type parts from
// it, once: most checkpoints are dropped unused and never pay for either.
// A ring from Server.NewCheckpoints also records which components the
// rules replicated per entity, so its checksums are Server.Checksum at the
// capture tick. (package snapshot's Registry is not used itself: it saves
// the entity allocator and every registered type by its strategy, where a
// checkpoint needs the protocol's types and codecs.)
//
// A resync or late join does not push a checkpoint: the server sends the
// current state through the late-join update path (see Resync), one tick
// and the same wire format as any update. A checkpoint of an earlier tick
// would need the changes since that tick on top, and a second way of
// applying state on the client; BenchmarkCheckpointResync puts the resync
// of 10,000 entities (server and client) at about 1.7 times a
// checkpoint's capture, encoding and load, not enough to carry that.
//
// The checksum (StateChecksum on a world, Server.Checksum, Client.Checksum)
// is computed alike on both sides: one part for the set of replicated
// entities and one per component and resource type, each an
// order-independent sum over server entity ids and the codec's bytes
// (XXH64, the same in every process; the frame sum combines the parts as
// package snapshot does). The client maps its entities and the references
// in its values back to server ids, so a client that applied a tick
// completely, sees everything and wrote nothing itself agrees with the
// server; snapshot.Diff of the parts names the types that differ. Types
// replicated Once are left out (the server may change them after sending).
//
// # Desync detection
//
// With ServerConfig.ChecksumInterval and ClientConfig.ChecksumInterval set
// to the same N (default 0: off), a client reports its Client.Checksum
// (sum and parts) of every server tick that is a multiple of N, once it
// has applied all of that tick and nothing newer, in a ChecksumReport on
// the reliable-ordered channel. The server keeps its own checksum of the
// last 16 such ticks (computed in their send phase, nothing else), compares,
// and answers with a ChecksumVerdict naming the differing parts; a
// difference raises a ClientDesync ServerEvent (client, tick, Types: the
// part names) and an EventDesync ClientEvent on that client, and is counted
// (ConnectionStats.Desyncs, ClientCounters.Desyncs). A checksum is only
// comparable when the client sees everything: clients with a visibility
// filter (SetVisible false, HiddenByDefault, FilterResource) are not
// checked (ConnectionStats.ChecksumsUnchecked). A value still being
// resent after a loss, or held back by a priority below 1, can show as a
// desync of its tick. On a report tick the tick's mutations wait for the
// update of that tick, so the complete tick a client reports includes its
// resources.
//
// A client that predicts holds predicted values, ticks ahead of the
// server, in its World, so the World's checksum is not its state at the
// reported tick. Client.HoldChecksums hands the reports to a checksum
// source: each report is computed at its usual moment (the entities
// part and the types the source does not keep are right then) and held;
// the source replaces the parts of its own types with their sums at the
// report's tick, from the values it keeps per tick (ComponentSummer,
// ResourceSummer: the same per-value terms as Client.Checksum, so there
// is one checksum implementation), and sends it (Client.ReportChecksum).
// Package predict is such a source (predict.AttachChecksum).
//
// # RNG ownership
//
// The server owns every random generator that decides the game: the
// world's stream (an rng.Rand resource) and per-player or per-entity
// streams (components holding an rng.Rand). They replicate like any
// other state, on change, in the update (resources) or the mutations
// (components) of the tick that drew from them, so a client that applied
// tick T holds the server's generators of T and, predicting, draws what
// the server draws (package predict keeps them in its history). A type is
// RNG state when registered with RNGState, or when it is rng.Rand itself;
// the mark (part of the protocol hash) puts it in the scope of RNG-only
// resyncs.
//
// # Resync
//
// A resync replaces a client's replicated state, or part of it, with the
// server's at one tick, atomically with the update of that tick. It comes
// in three kinds:
//
//   - ResyncFull (Server.Resync): the server forgets what it believes the
//     client has (visibility kept) and builds the client's next update as
//     for a late joiner (in parts when large); the client clears its
//     replicated state when it applies that update, in the same call
//     (client entities are spawned anew).
//   - ResyncPartial (Server.ResyncEntities): the named entities only.
//     Their replicated components travel in the update (with every value
//     the client has not acknowledged); the client removes the ones the
//     server no longer replicates on them, spawns the ones it lost and
//     despawns those the server does not have. Nothing else is touched.
//   - ResyncRNG (Server.ResyncRNG): the RNG state only: every RNG
//     component of every entity the client has, and the RNG resources.
//
// The update is preceded by a Resync message naming its tick, the kind,
// the reason and (partial, RNG-only) the entities and components
// replaced. The kind and reason are in ServerEvent ClientResync and
// ClientEvent EventResync (fields Resync and Reason), counted by kind in
// ConnectionStats.ResyncKinds and ClientCounters.ResyncKinds; the client
// hook ClientHooks.Resync is called before the update applies (package
// predict resets its history there). Resyncs asked for before one Send
// merge (different kinds into a full one).
//
// Triggers. ServerConfig.ResyncOnDesync resyncs a client whose desync was
// detected, choosing the kind from the differing checksum parts (a report
// names types, not entities): RNG-only when every differing part is RNG
// state; partial, over the client's entities that have a differing
// component type (and the differing resources), when the entities part
// agrees; full when it differs, when no server entity has the differing
// type (the client holds a component the server has on none), or when
// the client's last resync was partial or RNG-only and no report came
// back clean since. A client asks for a full resync with
// Client.RequestResync (a ResyncRequest message): package predict does on
// a range fault. A network interruption is detected by the client: one that
// received nothing for ClientConfig.ResyncAfterSilence asks for a resync
// with the first message after the silence (with tick tracking the
// server sends every client something every tick, so silence means a
// broken path, while a late joiner receiving a large first update is
// never silent; the server could not tell lost acks from lost updates).
//
// Budget. Every client has one resync budget for the resyncs the server
// decides on its own account, requests and desyncs together: one per
// ServerConfig.ResyncRequestInterval (1 s). A request beyond it is
// refused (ConnectionStats.ResyncRequestsRefused); a desync beyond it
// waits for a later report (ConnectionStats.ResyncsDeferred), which
// comes every ChecksumInterval ticks while it lasts. The server checks one
// report per client and report tick (a repeated or older one is counted
// unchecked), takes no action on a report of a tick before the client's
// last resync (that resync replaces the state it describes), logs desync
// warnings at most once a second per client, and disconnects a client
// still desynced after ServerConfig.MaxUnrepairedResyncs (3) resyncs in a
// row with no clean report in between ("desync persists after N
// resyncs"). Resyncs the game asks for (Server.Resync, ResyncEntities,
// ResyncRNG) are not limited, and count toward MaxUnrepairedResyncs.
//
// # Statistics
//
// Server.Stats returns a client's ConnectionStats (round trip, loss, bytes
// and rates, resends, violations, the memory kept for it); Client.Stats
// returns the client's own ClientCounters (messages applied, stale,
// held, malformed).
//
// # Wire format
//
// The bytes of every message are specified in wire.go, which lays them
// out; wire_test.go pins each message kind with golden bytes. Varints are
// read by package internal/bin and must be minimally encoded. A client of
// another wire version is rejected.
//
// # Source files
//
// The front door is config.go (ServerConfig, ClientConfig, defaults),
// errors.go, protocol.go (Protocol, components, rules), messages.go
// (message types), server.go, client.go and hooks.go (the client's hooks).
// The server's frame, in order: receive.go (the receive phase: connections,
// hellos, acks, client messages, quotas), then the send phase: changes.go (the world's changes of the tick, values
// encoded once), update.go (each client's update), parts.go (large updates
// in parts, on both sides), visibility.go (visibility and priority),
// segments.go (shared segments taken whole), packing.go (mutation
// messages), acks.go (acks, loss and resends). state.go holds the server's
// per-entity and per-client state, grouped by concern; apply.go and refs.go
// the client's side of applying updates and mutations; resources.go
// replicated resources on both sides; save.go the saved state form
// (SaveState, LoadState), loader.go its reusable Loader; checkpoint.go the checkpoint ring and the state
// checksum, checkpoint_state.go a checkpoint's copied columns, their
// encoding and checksum; desync.go the checksum reports and verdicts;
// resync.go resyncs (server side, kinds, RNGState) and resync_client.go
// the client's side, requests and interruptions; claims.go the server's
// entity mapping claims (MapClientEntity).
package replicate
