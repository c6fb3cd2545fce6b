// Package replicate is server-authoritative replication in the
// bevy_replicon model: a server owns the world, and each client holds a
// copy of what it may see. The server sends, each tick, what changed in
// the world (reliable, atomic updates for structure; unreliable,
// acknowledged and resent mutations for values), plus game messages both
// ways and replicated resources; the client applies them to its own
// World under its own entity ids, mapping entity references. Package
// predict builds client-side prediction on top of it.
//
// # A frame
//
// Server and client build the same Protocol, then run one frame per tick:
//
//	// Server, frame of tick F:
//	srv.Receive()                          // connections, acks, client messages
//	for _, m := range move.ReceiveFromClients(srv) { /* inputs for F */ }
//	simulate(world, F)                     // the game changes the World
//	srv.SendTick(F)                        // updates, mutations, messages of F
//
//	// Client, each frame:
//	move.SendToServer(client, input)       // sent at once
//	client.Update()                        // apply what arrived
//	msgs := scored.ReceiveFromServer(client)
//	if client.TickComplete(F) { /* the World holds the server's F */ }
//
// Server.Send is Receive plus SendTick(Tick()+1), for loops that read no
// messages before simulating. Example_frame runs this frame end to end.
//
// # Where to start
//
//   - Protocol: NewProtocol, Component (with WithOwnRule, WithCodec,
//     WithWireForm, modes OnChange and Once), Protocol.AddRule with Rule,
//     With and Without (ExampleRule), RegisterMessage and MessageType,
//     ReplicateResource (ExampleReplicateResource). Both sides must build
//     the same one: its Hash is checked at connection (ErrProtocolMismatch
//     names the first type that differs).
//   - Server: ServerConfig (World, Protocol, limits, Authenticate,
//     Priority per client, BudgetPerTick), NewServer, Server.AddConn or
//     Server.Serve, then Receive and SendTick each tick; Server.SetVisible
//     (per client and entity; package interest builds rooms and a grid on
//     it), SetPriority (per entity), FilterResource, MapClientEntity,
//     Events, Stats (ConnectionStats: where the bytes go). Entities marked
//     Replicated are replicated. A quant.Codec (package quant) given to
//     WithCodec quantizes a component; WithSendEvery sends slow data
//     every n ticks; mutations go as deltas from what each client
//     acknowledged unless ServerConfig.NoDeltas (Example_bandwidth).
//   - Client: ClientConfig, NewClient, Client.Connect, then Update each
//     frame; ClientEntity and ServerEntity map ids, TickComplete says when
//     a tick is whole, Stats (ClientCounters). Hooks (SetHooks,
//     SetClientHooks, SetReceiveHook) hand changes with their tick to a
//     prediction layer instead of writing them (package predict's Attach).
//   - State: SaveState, LoadState and Loader; Checkpoints
//     (ExampleCheckpoints); StateChecksum, Server.Checksum and
//     Client.Checksum, compared per Part for desync detection
//     (ServerConfig.ChecksumInterval); resyncs (Server.Resync,
//     ResyncEntities, ResyncRNG: ExampleServer_ResyncRNG); a desync down
//     to the entity and field: Client.CaptureAtReports with snapshot.Dumps
//     on both sides, compared with snapshot.DiffDumps or "rewind diff".
//   - Transports: anything that is a transport.MessageConn: the in-memory
//     network of package transport (tests, Example) or transport/quic.
//
// The examples: Example (connect and replicate one entity), Example_frame
// (a whole server and client frame with messages both ways),
// Example_bandwidth (quantization, a byte budget and deltas), ExampleRule,
// ExampleReplicateResource, ExampleCheckpoints, ExampleServer_ResyncRNG and
// ExampleClient_HoldChecksums.
//
// # Guarantees in brief
//
//   - A client applies each update atomically, in order, and never writes a
//     value older than what it has; a value not acknowledged in time is
//     resent with its latest value.
//   - Values are encoded once per tick and shared by every client; a
//     client that keeps up costs the server little more than a copy.
//   - A delta names its baseline, a value the client received; a client
//     that no longer holds it drops the message unacknowledged
//     (ClientCounters.DeltaMisses) and gets the values again, absolute.
//     The baselines cost the server one copy of each changed value for
//     64 ticks (at most 32 MiB), whatever the number of clients.
//   - Everything a client sends is validated and bounded (quotas per tick,
//     violations counted, a misbehaving client disconnected); the memory
//     the server keeps per client is bounded (ConnectionStats.RetainedBytes).
//   - The wire format is specified in wire.go and pinned by golden bytes;
//     varints must be minimally encoded (package internal/bin).
//
// The design (what travels and why, the server frame in detail, the
// client's mapping and hooks, resources, hostile clients, checkpoints,
// checksums, desync detection, RNG ownership, resyncs) and a map of the
// source files are in ARCHITECTURE.md, section "replicate: design notes".
package replicate
