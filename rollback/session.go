package rollback

// Session is the contract every session type fulfils: P2PSession,
// SyncTestSession, SpectatorSession and ReplaySession. Code that drives a
// session (package rollback/runner, a game loop) depends on it alone, so a
// wrapper that forwards every method keeps every feature.
//
// A frame of the game loop: AddLocalInput for each of LocalHandles, then
// AdvanceFrame, then carry out the returned requests in order, reporting the
// checksum of each saved state the session WantsChecksum of with
// ReportChecksum. Call Poll when not advancing. With Config.EndFrame, keep
// going until Finished.
type Session interface {
	// LocalHandles lists the players whose inputs this process adds (none
	// for spectators and replays; every player for SyncTest).
	LocalHandles() []PlayerHandle
	// AddLocalInput sets a local player's input for the current frame.
	AddLocalInput(h PlayerHandle, input []byte) error
	// AdvanceFrame returns the requests to carry out before the next call.
	AdvanceFrame() ([]Request, error)
	// ReportChecksum reports the checksum (and per-type parts) of the state
	// saved as frame f.
	ReportChecksum(f Frame, sum uint64, parts []Part)
	// WantsChecksum reports whether the checksum of saved frame f is used.
	WantsChecksum(f Frame) bool
	// CurrentFrame is the frame the next Advance simulates.
	CurrentFrame() Frame
	// ConfirmedFrame is the newest frame that will never be re-simulated:
	// saved states before it may be freed, and the state saved at
	// ConfirmedFrame()+1 or earlier is final.
	ConfirmedFrame() Frame
	// SnapshotDepth is how many saved frames Load requests may reach back
	// (0 when the session never loads).
	SnapshotDepth() int
	// FramesAhead is how many frames this session runs ahead of its peers
	// (0 for sessions without peers); a game loop runs slower while it is
	// positive.
	FramesAhead() int
	// Poll receives and answers network traffic without advancing.
	Poll()
	// Events returns and clears the queued events.
	Events() []Event
	// Finished reports whether the match reached Config.EndFrame and
	// everything up to it is settled (see each session's Finished).
	Finished() bool
	// ChecksDeterminism reports whether the session exists to check that
	// the game is deterministic (true for SyncTestSession only). The code
	// that drives it then runs the game in its strictest mode: the
	// rollback/runner turns on the World's checked mode
	// (ecs.World.SetChecks). A wrapper forwards it like the rest.
	ChecksDeterminism() bool
	// Close ends the session (and flushes a recording).
	Close() error
}

// Every session type implements Session.
var (
	_ Session = (*P2PSession)(nil)
	_ Session = (*SyncTestSession)(nil)
	_ Session = (*SpectatorSession)(nil)
	_ Session = (*ReplaySession)(nil)
)
