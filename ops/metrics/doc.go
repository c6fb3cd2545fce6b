// Package metrics records the operating figures of rewind's netcode with
// no dependency beyond the library: a replication server's clients, bytes
// by kind, round-trip times, resyncs and desyncs, violations and tick
// durations (Server), a predicting client's rollbacks, their depth and
// mispredictions (Predict), and a rollback session's (Session).
//
// A recorder is fed on the game's goroutine, once per tick, and allocates
// nothing there once its storage has grown to the number of clients; any
// goroutine reads a consistent copy of the figures (Read), which the
// Prometheus adapter (module github.com/rewindgo/rewind/contrib, package
// prom) and the live dashboard (package ops/dashboard) do at their own
// pace. Counters only grow: a client's counts stay in the totals after it
// leaves.
//
// Histograms (Histogram) have fixed upper bounds, in seconds for times
// and in ticks for rollback depths, so they map one to one onto
// Prometheus histograms.
package metrics
