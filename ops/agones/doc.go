// Package agones runs a dedicated game server under Agones: a client of
// the Agones game-server SDK over its REST API (SDK), with plain
// net/http, and the lifecycle of a match server around it (Run).
//
// The SDK server is a sidecar on localhost, at the port in
// AGONES_SDK_HTTP_PORT (9358 when unset), without authentication. It may
// start after the game server, so every call retries while the sidecar
// does not answer (Config.RetryFor). The endpoints used: POST /ready,
// /health, /allocate, /reserve ({"seconds": N}), /shutdown; PUT
// /metadata/label and /metadata/annotation ({"key": ..., "value":
// ...}); GET /gameserver and GET /watch/gameserver, a stream of
// GameServer JSON objects, one per change.
//
// Run is the lifecycle: set labels and annotations, mark the server
// Ready, ping Health periodically, watch for the Allocated state and then
// let the game accept players; on SIGTERM (the context) or the match's
// end, drain (finish the match or save a checkpoint) and Shutdown.
// Match is that game for a replicate.Server: players are accepted from
// the allocation on (Server.Serve), no longer once draining, and a match
// that does not end within MatchConfig.FinishWithin is saved
// (MatchConfig.Save).
//
// Package agonestest is a fake of the SDK's REST API that records the
// calls, for tests of a game server's lifecycle without a cluster.
package agones
