// Package dashboard serves a live view of a match's figures (package
// ops/metrics) to a browser: one page, embedded in the binary, that plots
// tick durations, each client's round-trip time and bandwidth, rollbacks
// of predicting clients and rollback sessions, and lists the last
// desyncs and resyncs, updated by server-sent events while the match
// runs.
//
// New returns an http.Handler, so mounting it is one line (under a
// prefix with http.StripPrefix: the page's URLs are relative); Serve
// listens on an address and serves it for the lifetime of a context, as
// the CLI's --dashboard flag does. Routes: "/" the page, "/figures" the
// figures as one JSON object, "/events" the same objects as a
// text/event-stream, one every Config.Interval.
package dashboard
