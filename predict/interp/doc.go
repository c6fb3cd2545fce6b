// Package interp shows the entities a predicting client does not
// predict in the past, between two authoritative values.
//
// A Buffer per type holds the server's values by tick: Push(e, t, v) for
// each server value (a late one is inserted in tick order, a duplicate
// replaces, at most Config.Capacity kept per entity, the oldest
// dropped), Complete(t) for each complete server tick, Remove(e) when
// the entity goes or becomes predicted. The shown time is
//
//	Latest() + alpha - delay,  delay = max(5 ms, 1.7*SendInterval) + 2*jitter
//
// (ShowTime, Config.Delay: lightyear's min_delay and
// send_interval_ratio; the jitter term keeps the next value there in
// time). Latest() jumps by 0 to several ticks per frame as packets
// arrive (the choppiness of lightyear #423); ShowAt with
// ticksync.Sync.Received (the client's tick minus the lead it keeps)
// moves with the client's clock instead. At(e, tick, frac) interpolates
// by tick distance with the user's function (or a Lerp method,
// LerpMethod), so a lost tick is bridged.
//
// Past the newest value it holds the newest value rather than
// extrapolate (counted in Stats().Holds: a sign the delay is too short),
// since an extrapolation overshoots a stop or a turn and jumps back.
// Replication sends changes only, so complete ticks without a value mean
// "unchanged": a value after such a gap is interpolated from the
// previous value held through the last complete tick, and an entity at
// rest that starts moving moves from the tick it started, not across the
// gap. Steady-state Push and At allocate nothing.
//
// predict.AttachSplit routes one replicated type's values to a Buffer
// for the entities the game interpolates and to the predict.Timeline for the
// others.
package interp
