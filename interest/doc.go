// Package interest decides which entities each client of a
// replicate.Server sees: interest management on top of replicate's
// per-client visibility. It calls Server.SetVisible and nothing else, so
// replicate knows nothing of it; a game that needs none of it never
// imports it.
//
// # Sources
//
// Two sources of visibility, each applied once per tick before
// Server.Send:
//
//   - Rooms: entities and clients join and leave rooms (a match, a zone, a
//     channel); a client sees the union of its rooms' entities.
//   - Grid: the game gives entities' positions (Move) and each client's
//     focus point (SetFocus) every tick; a client sees the entities near
//     its focus, with hysteresis so that nothing flips at the edge.
//     Grid.Priority gives replicate.ServerConfig.Priority the same
//     distances: near entities every tick, those at the edge every fourth.
//
// Both are meant for ServerConfig.HiddenByDefault: what no source shows
// stays hidden. A new client sees nothing until the game puts it in a
// room or gives it a focus, typically on replicate.ClientConnected; on
// replicate.ClientDisconnected the game calls ForgetClient, which makes
// no call (replicate forgets the client's view itself).
//
//	srv, _ := replicate.NewServer(replicate.ServerConfig{..., HiddenByDefault: true})
//	rooms := interest.NewRooms()
//	rooms.Add(matchID, player)      // entities
//	rooms.Join(matchID, clientID)   // clients
//	for each tick {
//		// simulate, move rooms' members
//		if err := rooms.Apply(srv); err != nil { ... }
//		srv.Send()
//	}
//
// # Combining sources
//
// A source calls SetVisible(id, e, true) when it starts showing e to
// client id and SetVisible(id, e, false) when it stops, and only then.
// Given straight to the server, two sources (or a source and the game's
// own SetVisible calls) would override each other: the last call wins.
// A Union counts the sources of each (client, entity) pair and shows the
// entity while any of them does: apply every source into the Union, add
// the game's own reasons with Union.SetVisible, then apply the Union to
// the server.
//
//	rooms.Apply(u)
//	grid.Apply(u)
//	u.Apply(srv)
//
// Used alone, Rooms calls SetVisible only for entities that are or were
// in one of its rooms, and Grid only for entities it tracks (Move), so
// the game's own SetVisible calls for other entities are left alone.
//
// # Cost
//
// Nothing here costs entities × clients per tick. Rooms keeps, per
// client, a reference count per entity (the rooms that show it); a
// change costs what it changes (a client joining a room of n entities: n
// counts; an entity entering a room of k clients: k), and Apply visits
// only the pairs whose count crossed zero since the previous Apply,
// calling SetVisible only for those whose answer changed (a change undone
// before Apply costs no call). Grid keeps entities in square cells:
// Move is O(1), and Apply scans, per client, the cells around its focus
// and the entities it sees, allocating nothing once its lists have grown.
//
// Measured (bench_test.go; 10,000 entities moving every tick in a
// 2000 × 2000 square, 64 clients following 64 of them, radius 100,
// margin 10, cells of 100, about 82 entities seen per client, 126
// SetVisible calls per tick; on a 2-core machine shared with other
// jobs, so times vary by 2x between runs): BenchmarkGrid, a tick of the
// grid (10,000 Moves, 64 SetFocus, Apply) costs 0.28-0.89 ms, 0 allocs,
// against 0.85-4.3 ms for the floor of the all-pairs check (640,000
// distances with the same hysteresis), 3-7x in paired runs; Apply is
// about half of it (4-5 µs per client), the Moves the rest, so the gap
// grows with the clients. BenchmarkSend: the server sends each
// client 201,104 bytes per tick with every entity visible and 2,098
// with the grid (96x less); Server.Send itself costs 32-82 ms against
// 12-30 ms, less than the bytes suggest, because replicate visits each
// changed entity for each client whether the client sees it or not.
//
// # Grid rule
//
// For a client with focus f and radius R (GridConfig.Radius, or
// Grid.SetRadius per client) and the grid's Margin M, an entity at
// distance d from f is shown when d <= R, hidden when d > R + M, and
// left as it was in between. Positions are 2D (a 3D game passes x and
// z); cells only index and never decide. Distances are computed without
// fused multiply-add, so the same inputs decide the same on every
// platform.
//
// # Determinism
//
// Every Apply's calls depend only on the sequence of calls made to the
// package: lookups use maps, but the order of SetVisible calls comes from
// slices (Rooms and Union: the order the changes were made; Grid: removed
// entities first, then clients in the order they were added, the cells of
// each client's square row by row, each cell's entities in list order,
// then the client's shown list). TestDeterminism checks it call for call.
//
// # Errors
//
// Apply goes on when the Visibility returns an error (the pair counts as
// told) and returns the first, wrapped with the call: replicate's
// ErrNotConnected means the client left and the game should call
// ForgetClient. NewGrid returns ErrConfig for a negative, infinite or NaN
// configuration; Union.SetVisible returns ErrUnbalanced for a hide with no
// show to undo.
//
// # Source files
//
// visibility.go (the Visibility interface), union.go (Union, the counting
// core Rooms uses), rooms.go (Rooms), grid.go (Grid), config.go
// (GridConfig and its defaults), errors.go.
package interest
