package rollback

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"time"
)

// Defaults of Config fields left at their zero value. They match GGRS.
const (
	DefaultNumPlayers        = 2
	DefaultMaxPrediction     = 8
	DefaultFPS               = 60
	DefaultDisconnectTimeout = 2000 * time.Millisecond
	DefaultDisconnectNotify  = 500 * time.Millisecond
	DefaultCheckDistance     = 2
	DefaultMaxFramesBehind   = 10
	DefaultCatchupSpeed      = 1
	DefaultMaxInputSize      = 16
	DefaultMaxEvents         = 100
	DefaultRecordChecksums   = 60
)

// Limits of Config fields.
const (
	// MaxPlayers is the largest NumPlayers.
	MaxPlayers = 8
	// MaxSpectators is the most spectators one host serves.
	MaxSpectators = 32
	// MaxInputLimit is the largest MaxInputSize.
	MaxInputLimit = 64
	// MaxPredictionLimit is the largest MaxPrediction (the input queues hold
	// 128 frames and must cover the window plus the largest input delay).
	MaxPredictionLimit = 60
	// MaxInputDelay is the largest input delay.
	MaxInputDelay = 30
	// SpectatorBuffer is the number of frames a spectator holds ahead of the
	// frame it shows.
	SpectatorBuffer = 60
)

// PlayerKind says where a player's inputs come from.
type PlayerKind uint8

const (
	// Local players' inputs are added with AddLocalInput.
	Local PlayerKind = iota + 1
	// Remote players' inputs arrive from Addr. Several remote players may
	// share one address (one process with several local players).
	Remote
	// Spectators receive every player's confirmed inputs from this session
	// (the host) and send none.
	Spectator
)

// Player registers one player or spectator of a P2P session.
type Player struct {
	// Handle is 0..NumPlayers-1 for Local and Remote players and NumPlayers
	// or above for spectators.
	Handle PlayerHandle
	Kind   PlayerKind
	// Addr is where a Remote player or a Spectator is reached.
	Addr netip.AddrPort
}

// Predictor guesses a remote player's input for frames that have not arrived,
// from the last input received from that player. Predict appends the guess
// to dst (which has length 0) and returns it. It is called only when a
// previous input exists; before the first input, Config.DefaultInput is used.
type Predictor interface {
	Predict(dst, last []byte) []byte
}

// PredictRepeatLast predicts that a player keeps doing what they did last
// (the default, and right for held buttons).
type PredictRepeatLast struct{}

// Predict returns last.
func (PredictRepeatLast) Predict(dst, last []byte) []byte { return append(dst, last...) }

// PredictDefault predicts the default input (nothing pressed), right for
// games whose inputs are mostly events.
type PredictDefault struct {
	// Input is the default input; nil means an empty input.
	Input []byte
}

// Predict returns p.Input.
func (p PredictDefault) Predict(dst, _ []byte) []byte { return append(dst, p.Input...) }

// PredictorFunc adapts a function to Predictor.
type PredictorFunc func(dst, last []byte) []byte

// Predict calls f.
func (f PredictorFunc) Predict(dst, last []byte) []byte { return f(dst, last) }

// Config configures a session. The zero value of each field means its
// documented default; New* reject invalid values with errors wrapping
// ErrInvalidConfig that name the field.
type Config struct {
	// NumPlayers is the number of active players, 1..MaxPlayers. Default 2.
	NumPlayers int
	// Players registers every player handle 0..NumPlayers-1 (P2P: each
	// exactly once, as Local or Remote) and any spectators (handles from
	// NumPlayers, at most MaxSpectators). SyncTest ignores it: every player
	// is local. Spectator sessions ignore it.
	Players []Player

	// MaxPrediction is how many frames a peer may run ahead of the last
	// frame with every input confirmed, predicting the rest and rolling
	// back. Default 8, at most MaxPredictionLimit. See Lockstep for 0.
	MaxPrediction int
	// Lockstep sets the prediction window to 0: a frame advances only when
	// every input for it is confirmed, and no Load is ever requested; Saves
	// are requested only for the frames whose checksums desync detection
	// and the recording use (none without them). Pair it with an input
	// delay of about the one-way latency.
	Lockstep bool
	// InputDelay is the initial input delay in frames of every local player
	// (0..MaxInputDelay; 2-4 are typical). Change it per player at run time
	// with SetInputDelay.
	InputDelay int
	// FPS is the simulation rate, used for time sync. Default 60.
	FPS int
	// SparseSaving asks for Save requests only for confirmed frames (plus
	// desync-check frames), trading longer rollbacks for fewer saves. Use it
	// when saving costs much more than simulating. Not for SyncTest.
	SparseSaving bool
	// DesyncInterval enables desync detection: every DesyncInterval frames
	// the peers compare the checksum of the confirmed frame. 0 disables it
	// (the default). Reporting checksums with parts lets the
	// EventDesyncDetected event name the types that differ.
	DesyncInterval int
	// DesyncDumpBytes, above 0, makes peers exchange desync dumps: after
	// an EventDesyncDetected that names the differing types, each peer
	// sends the other its dump of those types at that frame (from the
	// session's DumpSource, which rollback/runner sets with its
	// Config.Dumps), at most DesyncDumpBytes bytes (and at most 1 MiB; a
	// larger dump is not sent), and EventDesyncDump carries both; once per
	// peer, for the first desync with it (later ones are usually its
	// consequences). Opt-in:
	// default 0 (off). Both peers need it for the exchange to complete.
	DesyncDumpBytes int
	// EndFrame, when positive, is the length of the match in frames: the
	// session simulates frames 0..EndFrame-1 and then stays at frame
	// EndFrame (AdvanceFrame no longer needs local inputs nor advances, but
	// still returns the rollbacks late inputs cause, and a Save of frame
	// EndFrame so that its checksum is reported). Keep calling AdvanceFrame
	// (or Poll) until Finished reports true: every frame up to EndFrame is
	// then confirmed on every peer, checked for desyncs, recorded and sent
	// to the spectators. 0 (the default) means an endless match.
	EndFrame int
	// DisconnectTimeout is how long a peer may be silent before it is
	// disconnected. Default 2 s.
	DisconnectTimeout time.Duration
	// DisconnectNotifyDelay is how long a peer may be silent before
	// EventNetworkInterrupted. Default 500 ms.
	DisconnectNotifyDelay time.Duration

	// CheckDistance is how many frames a SyncTest session loads back and
	// re-simulates every frame: default 2, must be below the prediction
	// window; NoCheck disables rollbacks (and saving).
	CheckDistance int

	// MaxFramesBehind is how far a spectator may fall behind the host
	// before it catches up: default 10, 1..SpectatorBuffer-1.
	MaxFramesBehind int
	// CatchupSpeed is how many frames a spectator advances per call while
	// catching up: default 1.
	CatchupSpeed int

	// Predictor guesses missing remote inputs. Default PredictRepeatLast.
	Predictor Predictor
	// MaxInputSize is the largest input in bytes, 1..MaxInputLimit. Default
	// 16. Inputs may vary in length up to it.
	MaxInputSize int
	// DefaultInput is the input of frames before a player's first and of
	// disconnected players. Default: empty. It must not exceed MaxInputSize.
	DefaultInput []byte

	// Record, when set, receives a recording of the match: every confirmed
	// input and a checksum every RecordChecksumInterval frames, in the
	// versioned format read by NewReplay. Call Close to flush it.
	Record io.Writer
	// RecordChecksumInterval is the spacing of checksums in a recording.
	// Default 60.
	RecordChecksumInterval int
	// RecordMeta is stored in the recording's header for the game (for
	// example the seed and settings needed to reproduce the match).
	RecordMeta []byte

	// Seed seeds the session's handshake magic numbers and nonces. 0 takes
	// them from crypto/rand. Tests set it for exact replays.
	Seed uint64
	// Now is the session's clock for timeouts, pings and retries. Default
	// time.Now (which testing/synctest virtualises). Never used for the
	// simulation.
	Now func() time.Time
	// Logger receives diagnostics. Nil is silent.
	Logger *slog.Logger
	// MaxEvents caps the event queue; the oldest events are dropped. Default 100.
	MaxEvents int
}

// NoCheck as Config.CheckDistance disables SyncTest rollbacks.
const NoCheck = -1

// resolved is Config with defaults applied and values checked.
type resolved struct {
	Config
	maxPred int
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

func (c Config) resolve() (resolved, error) {
	r := resolved{Config: c}
	d := &r.Config
	if d.NumPlayers == 0 {
		d.NumPlayers = DefaultNumPlayers
	}
	if d.NumPlayers < 1 || d.NumPlayers > MaxPlayers {
		return r, invalid("NumPlayers %d: want 1..%d", d.NumPlayers, MaxPlayers)
	}
	r.maxPred = d.MaxPrediction
	if r.maxPred == 0 {
		r.maxPred = DefaultMaxPrediction
	}
	if r.maxPred < 0 || r.maxPred > MaxPredictionLimit {
		return r, invalid("MaxPrediction %d: want 1..%d (Lockstep for 0)", d.MaxPrediction, MaxPredictionLimit)
	}
	if d.Lockstep {
		if d.MaxPrediction != 0 {
			return r, invalid("Lockstep with MaxPrediction %d: lockstep means a window of 0", d.MaxPrediction)
		}
		r.maxPred = 0
	}
	if d.InputDelay < 0 || d.InputDelay > MaxInputDelay {
		return r, invalid("InputDelay %d: want 0..%d", d.InputDelay, MaxInputDelay)
	}
	if d.FPS == 0 {
		d.FPS = DefaultFPS
	}
	if d.FPS < 1 || d.FPS > 1000 {
		return r, invalid("FPS %d: want 1..1000", d.FPS)
	}
	if d.DesyncDumpBytes < 0 || d.DesyncDumpBytes > 1<<20 {
		return r, invalid("DesyncDumpBytes %d: want 0 (off) up to 1 MiB", d.DesyncDumpBytes)
	}
	if d.DesyncInterval < 0 {
		return r, invalid("DesyncInterval %d: want 0 (off) or a positive interval", d.DesyncInterval)
	}
	if d.EndFrame < 0 || d.EndFrame >= math.MaxInt32-2*queueLen {
		return r, invalid("EndFrame %d: want 0 (endless) or a frame count below %d", d.EndFrame, math.MaxInt32-2*queueLen)
	}
	if d.DisconnectTimeout == 0 {
		d.DisconnectTimeout = DefaultDisconnectTimeout
	}
	if d.DisconnectNotifyDelay == 0 {
		d.DisconnectNotifyDelay = DefaultDisconnectNotify
	}
	if d.DisconnectTimeout < 0 || d.DisconnectNotifyDelay < 0 {
		return r, invalid("DisconnectTimeout %v / DisconnectNotifyDelay %v: must not be negative", d.DisconnectTimeout, d.DisconnectNotifyDelay)
	}
	if d.DisconnectNotifyDelay > d.DisconnectTimeout {
		return r, invalid("DisconnectNotifyDelay %v exceeds DisconnectTimeout %v", d.DisconnectNotifyDelay, d.DisconnectTimeout)
	}
	if d.CheckDistance == 0 {
		d.CheckDistance = DefaultCheckDistance
	}
	if d.CheckDistance < NoCheck {
		return r, invalid("CheckDistance %d: want a positive distance or NoCheck", d.CheckDistance)
	}
	if d.MaxFramesBehind == 0 {
		d.MaxFramesBehind = DefaultMaxFramesBehind
	}
	if d.MaxFramesBehind < 1 || d.MaxFramesBehind >= SpectatorBuffer {
		return r, invalid("MaxFramesBehind %d: want 1..%d", d.MaxFramesBehind, SpectatorBuffer-1)
	}
	if d.CatchupSpeed == 0 {
		d.CatchupSpeed = DefaultCatchupSpeed
	}
	if d.CatchupSpeed < 1 {
		return r, invalid("CatchupSpeed %d: want at least 1", d.CatchupSpeed)
	}
	if d.Predictor == nil {
		d.Predictor = PredictRepeatLast{}
	}
	if d.MaxInputSize == 0 {
		d.MaxInputSize = DefaultMaxInputSize
	}
	if d.MaxInputSize < 1 || d.MaxInputSize > MaxInputLimit {
		return r, invalid("MaxInputSize %d: want 1..%d", d.MaxInputSize, MaxInputLimit)
	}
	if len(d.DefaultInput) > d.MaxInputSize {
		return r, invalid("DefaultInput has %d bytes, more than MaxInputSize %d", len(d.DefaultInput), d.MaxInputSize)
	}
	if d.RecordChecksumInterval == 0 {
		d.RecordChecksumInterval = DefaultRecordChecksums
	}
	if d.RecordChecksumInterval < 0 {
		return r, invalid("RecordChecksumInterval %d: must be positive", d.RecordChecksumInterval)
	}
	if len(d.RecordMeta) > maxRecordMeta {
		return r, invalid("RecordMeta has %d bytes, more than %d", len(d.RecordMeta), maxRecordMeta)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.MaxEvents == 0 {
		d.MaxEvents = DefaultMaxEvents
	}
	if d.MaxEvents < 1 {
		return r, invalid("MaxEvents %d: must be positive", d.MaxEvents)
	}
	return r, nil
}

// checkPlayers validates the P2P player list: every handle 0..NumPlayers-1
// exactly once as Local or Remote, spectators from NumPlayers, addresses
// valid, no duplicates.
func (r *resolved) checkPlayers() error {
	seen := make([]bool, r.NumPlayers)
	spect := 0
	var specHandles []PlayerHandle
	for i, p := range r.Players {
		switch p.Kind {
		case Local, Remote:
			if p.Handle < 0 || int(p.Handle) >= r.NumPlayers {
				return invalid("Players[%d]: handle %d out of range 0..%d for a %s player", i, p.Handle, r.NumPlayers-1, kindName(p.Kind))
			}
			if seen[p.Handle] {
				return invalid("Players[%d]: handle %d registered twice", i, p.Handle)
			}
			seen[p.Handle] = true
			if p.Kind == Remote && !p.Addr.IsValid() {
				return invalid("Players[%d]: remote player %d has no valid address", i, p.Handle)
			}
		case Spectator:
			if int(p.Handle) < r.NumPlayers {
				return invalid("Players[%d]: spectator handle %d must be at least NumPlayers (%d)", i, p.Handle, r.NumPlayers)
			}
			for _, h := range specHandles {
				if h == p.Handle {
					return invalid("Players[%d]: handle %d registered twice", i, p.Handle)
				}
			}
			specHandles = append(specHandles, p.Handle)
			if !p.Addr.IsValid() {
				return invalid("Players[%d]: spectator %d has no valid address", i, p.Handle)
			}
			spect++
		default:
			return invalid("Players[%d]: unknown kind %d", i, p.Kind)
		}
	}
	if spect > MaxSpectators {
		return invalid("%d spectators, at most %d", spect, MaxSpectators)
	}
	for h, ok := range seen {
		if !ok {
			return invalid("player handle %d is not registered (every handle 0..%d needs a Local or Remote player)", h, r.NumPlayers-1)
		}
	}
	return nil
}

func kindName(k PlayerKind) string {
	switch k {
	case Local:
		return "local"
	case Remote:
		return "remote"
	case Spectator:
		return "spectator"
	}
	return "unknown"
}
