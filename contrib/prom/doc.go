// Package prom exposes rewind's operating figures (package ops/metrics)
// as Prometheus collectors, in a module of its own so that the library
// does not depend on client_golang.
//
// A collector reads its recorder's copy of the figures at each scrape;
// the game feeds the recorder once per tick (metrics.Server.Sample and
// the others), which allocates nothing, so registering collectors adds
// nothing to a tick's cost. Names follow Prometheus's conventions:
// <namespace>_<subsystem>_<name>_<unit>, counters ending in _total,
// histograms for durations in seconds:
//
//	rewind_server_clients                      gauge
//	rewind_server_client_connects_total        counter
//	rewind_server_client_disconnects_total     counter
//	rewind_server_sent_bytes_total{kind}       counter (updates, mutations, acks, messages, checksums, resyncs, control)
//	rewind_server_received_bytes_total{kind}   counter
//	rewind_server_rtt_seconds                  histogram
//	rewind_server_tick_duration_seconds        histogram
//	rewind_server_resyncs_total{kind}          counter (full, partial, rng)
//	rewind_server_desyncs_total                counter
//	rewind_server_desync_parts_total{part}     counter (a desync counts once per differing part)
//	rewind_server_violations_total             counter
//	rewind_server_late_inputs_total            counter
//	rewind_predict_rollbacks_total{client}             counter
//	rewind_predict_resimulated_ticks_total{client}     counter
//	rewind_predict_rollback_depth_ticks{client}        histogram
//	rewind_predict_mispredictions_total{client}        counter
//	rewind_predict_corrections_total{client}           counter
//	rewind_predict_resyncs_total{client}               counter
//	rewind_session_frame{session}                      gauge
//	rewind_session_rollbacks_total{session}            counter
//	rewind_session_rollback_frames_total{session}      counter
//	rewind_session_rollback_depth_frames{session}      histogram
//	rewind_session_stalls_total{session}               counter
//	rewind_session_desyncs_total{session}              counter
//	rewind_session_ping_seconds{session}               histogram
package prom
