// Package snapshot saves, restores, compares and checksums an ecs.World at a
// frame: what P2P rollback does every frame, and what client prediction does
// when an authoritative value for a past tick arrives.
//
// # Strategies
//
// Every saved type is registered with a Registry with one strategy:
//
//   - Copy: plain data (numbers, bools, arrays and structs of them, ecs.Entity).
//     Saved and restored with a memory copy, checksummed from its bytes. Types
//     holding pointers, slices, maps, channels, funcs, interfaces or strings are
//     refused with ErrNotPlainData naming the field: they cannot take this path
//     silently.
//   - Clone: the type deep-copies itself (Clone() T), on save and on load, so a
//     saved frame never shares memory with the live World. For checksums it
//     implements encoding.BinaryAppender, or is registered with NoChecksum.
//   - Codec: the type encodes itself (AppendBinary / UnmarshalBinary).
//
// The entity allocator and ecs.Hierarchy are always saved.
//
// # The ring
//
// A Ring holds the last Depth frames: Save(f), Load(f), Confirm(f) (frees
// frames before f), SetDepth to follow a prediction window. Loading a frame
// that is not held is an error (ErrFrameNotHeld) and changes nothing. In
// steady state Save and Load allocate nothing. Entity layouts are shared
// between frames that saved the same layout, so a ring of depth D holds D
// copies of the component values plus about one copy of each layout.
//
// Load reconciles the entity set (entities spawned after the frame disappear,
// entities despawned since come back with the same identity and generation;
// the next Spawn returns what it returned after the original frame) and
// resources (present or absent as at the frame). It stamps change ticks with
// care: for copy types exactly the values whose bytes the load changes are
// marked as written, so a replication layer sees no phantom changes; clone and
// codec types mark every value written since the save.
//
// # Checksums
//
// Registry.Checksum and Ring.SaveChecksum compute one Part per type (plus
// EntitiesPart for the allocator) and a frame checksum combining them. The
// hash is XXH64 over a canonical byte form (little-endian fields in
// declaration order, platform-sized ints widened to 8 bytes, no padding), so
// the same state has the same checksum in every process, on every machine and
// with every Go version; hash/maphash is never used. Parts are named by the
// type's package path and name. Diff compares two frames' parts and names the
// types that differ, which is what a desync report shows.
//
// # Dumps: desyncs down to the entity and field
//
// A checksum says that two states differ and its Parts say in which
// types; a Dump says where. Registry.Dump captures the registered types
// (or those a desync named) entity by entity: copy types as their
// canonical bytes with the field layout of their canonical form (paths
// such as ".Pos.X", kinds, sizes), clone and codec types as their own
// encodings. DiffDumps compares two dumps of the same frame (two peers,
// a server and a client, a first simulation and a re-simulation) and
// lists each differing field of each entity with both values, entities
// present on one side only, and resources. Dumps keeps the dumps of the
// last few frames, because a desync is found some frames after the state
// it concerns. Dumps travel as files (WriteDumpFile, ReadDumpFile: a
// versioned encoding, bounded to DefaultDumpMaxBytes when read, malformed
// input refused with ErrDumpFormat); "rewind diff A B" prints the
// differences. Dumping is opt-in: it encodes the world (rollback/runner's
// Config.Dumps does it on checked frames only, and by default only for
// SyncTest).
//
// # Encoded states
//
// Ring.Encode writes a saved frame in an exact byte form (the allocator's
// slots, generations and free list; every type's entities in store order
// and values: copy types as canonical bytes, codec types through their
// codec), the same on every machine, and Ring.LoadEncoded loads it into
// another process's World with the same registrations: the same entity
// ids, the same next Spawn, the same checksum. That is what a peer
// rejoining a rollback match loads (rollback/runner). Decoding validates
// untrusted bytes in full before touching the World (ErrStateFormat,
// bounded by MaxEncodedBytes). A Clone type has no exact byte form: a
// world holding one cannot be encoded (ErrNotEncodable; register it with
// Codec instead).
//
// # Determinism
//
// Floating-point values are checksummed bit for bit: a game whose floats
// differ across architectures (see package fixed and the project's
// determinism notes) will show those differences as desyncs, as it should.
package snapshot
