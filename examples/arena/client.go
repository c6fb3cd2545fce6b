package main

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/effect"
	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/predict/ticksync"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// window is the clients' rollback window: 2 s, so that an update delayed
// by a few retransmissions on a lossy link still lands inside it.
const window = 120

// Kinds of the effects' keys (predict.SpawnKey) beside a bullet's
// (shooter.KindBullet): a hit-scan that missed, one that hit. The verdict
// is part of the key, so a re-simulation that turns a hit into a miss
// (a correction moved the own ship) cancels the hit marker and plays the
// miss.
const (
	kindScan uint32 = 2
	kindHit  uint32 = 3
)

// record is what a client knows of one server entity: its client entity,
// the tick the server spawned it at and, once despawned, the tick of the
// despawn; its player and whether it is another player's ship (shown
// interpolated), noted while it lives.
type record struct {
	ce     ecs.Entity
	born   tick.Tick
	gone   tick.Tick
	isGone bool
	player uint64
	remote bool
	ship   bool
	noted  bool
}

// fx is the payload of an effect: where it happened and, for a scan,
// its predicted verdict.
type fx struct {
	X, Y   int32
	Scan   bool
	Hit    bool
	Target uint64
}

// fxEvent is an effect played or cancelled (client.fxLog).
type fxEvent struct {
	key  predict.SpawnKey
	play bool
}

// flash is an effect being shown: a muzzle flash or a hit marker.
type flash struct {
	key  predict.SpawnKey
	fx   fx
	age  int  // frames shown
	done bool // confirmed: its tick is final, no rollback can cancel it
}

// client is one player's side of the game: a replication client whose
// World a Timeline predicts (own ship and bullets predicted, the other
// ships interpolated, predict.AttachSplit), the frame that drives it, the
// effects of shots and scans (effect.Tracker), and the checks that make a
// run's summary: the server's truths compared with the confirmed state,
// the server's verdicts with the predicted ones. It knows nothing of
// windows or QUIC: connect gives it a conn.
type client struct {
	log    *slog.Logger
	proto  *protocol
	world  *ecs.World
	rc     *replicate.Client
	conn   transport.MessageConn
	tl     *predict.Timeline
	game   *shooter.Client
	body   *predict.Component[shooter.Body]
	bullet *predict.Component[shooter.Bullet]
	ships  *ecs.Store[shooter.Ship]
	interp *interp.Buffer[shooter.Body]
	frame  *predict.ClientFrame[shooter.Stick]
	fx     *effect.Tracker[predict.SpawnKey, fx]
	sim    func(tick.Tick)

	// read returns the player's buttons for a tick (the keyboard, or a
	// bot); the client adds the lag compensation claim to scans.
	read func(t tick.Tick) uint8
	// checkFrom is the first tick whose truth is compared: a few ticks
	// after the start, whose mutations replicate may have applied before
	// the Timeline was there to see them.
	checkFrom tick.Tick
	arrived   map[ecs.Entity]tick.Tick // before start: the tick each entity arrived at

	recs     map[ecs.Entity]*record // by server entity
	byClient map[ecs.Entity]ecs.Entity
	complete []tick.Tick // complete server ticks, the newest window of them

	// Corrections of the last frame (AfterStep) and the smoothing offsets.
	corr    []predict.Correction[shooter.Body]
	offsets map[ecs.Entity][2]float64
	maxCorr int32

	// The checks.
	truths     []truth     // received, not yet checked
	matched    []tick.Tick // the ticks of the last 64 truths matched
	nMatched   int         // truths matched in all
	mismatches int
	firstDiff  string
	unchecked  int
	verdicts   map[tick.Tick]verdict // the server's verdicts of the own scans
	agreed     int
	disagreed  int
	serverHits int
	checkedTo  int // own scans compared so far

	// fxLog, when not nil, records every effect played (true) and
	// cancelled (false), in order (tests).
	fxLog *[]fxEvent

	flashes            []flash
	hitMarkers         int
	graph              netGraph
	lastIn, lastOut    uint64
	startIn, startOut  uint64
	started            time.Time
	resimThisFrame     int
	correctedThisFrame int
}

// newClient returns a client whose inputs come from read, not connected
// yet. log may be nil (silent). Its predicted side (the Timeline and all
// that hangs on it) is built by start once the first server tick has
// arrived.
func newClient(read func(t tick.Tick) uint8, log *slog.Logger) (*client, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	proto, err := newProtocol()
	if err != nil {
		return nil, err
	}
	c := &client{log: log, proto: proto, world: ecs.New(), read: read,
		recs: map[ecs.Entity]*record{}, byClient: map[ecs.Entity]ecs.Entity{},
		offsets: map[ecs.Entity][2]float64{}, verdicts: map[tick.Tick]verdict{}}
	if c.rc, err = replicate.NewClient(replicate.ClientConfig{World: c.world, Protocol: proto.Protocol.Protocol,
		ChecksumInterval: checksumInterval}); err != nil {
		return nil, err
	}
	c.ships = ecs.Register[shooter.Ship](c.world)
	// Until start, note the tick each entity reached the client at: a
	// bullet's body, sent once, is its value at that tick.
	c.arrived = map[ecs.Entity]tick.Tick{}
	c.rc.SetClientHooks(replicate.ClientHooks{Spawn: func(e ecs.Entity, t tick.Tick) { c.arrived[e] = t }})
	return c, nil
}

// start builds the predicted side at server tick t0, the tick of the
// last update applied, once complete: the World holds the server's state
// at the end of t0 (replicate wrote it, no Timeline hooked yet; each
// bullet's body, sent once with the bullet, is flown from the tick it
// arrived at to t0), so the Timeline starts there (predict.New at t0). A Timeline started at 0 on a server long
// running would refuse the values of ticks more than the window ahead
// (bullets in flight, whose bodies are sent once, would never arrive)
// and catch up by a few extra ticks per frame, for minutes. The entities
// already there are noted, and the other ships' bodies move from the
// World to the interpolation buffer (predict.AttachSplit's split: the
// own ship and the bullets are predicted).
func (c *client) start(t0 tick.Tick) error {
	bodies := ecs.Register[shooter.Body](c.world)
	type held struct {
		e ecs.Entity
		b shooter.Body
	}
	var others []held
	bullets := ecs.Register[shooter.Bullet](c.world)
	for e, b := range bodies.Values() {
		at, ok := c.arrived[e]
		if !ok || at.After(t0) {
			at = t0
		}
		if se, ok := c.rc.ServerEntity(e); ok {
			c.recs[se] = &record{ce: e, born: at}
			c.byClient[e] = se
		}
		if c.remoteShip(e) {
			others = append(others, held{e, b})
		}
		if _, ok := bullets.Get(e); ok {
			p := bodies.Ptr(e)
			for range t0.Sub(at) {
				shooter.Fly(p)
			}
		}
	}
	c.arrived = nil
	c.interp = interp.NewBuffer[shooter.Body](interp.Config{Capacity: window}, shooter.LerpBody)
	for _, o := range others {
		if err := bodies.Remove(o.e); err != nil {
			return err
		}
		c.interp.Push(o.e, t0, o.b)
	}
	c.interp.Complete(t0)
	c.complete = append(c.complete, t0)
	c.checkFrom = t0.Add(truthEvery)
	c.tl = predict.New(c.world, t0, predict.Config{Window: window})
	var err error
	if c.game, err = shooter.NewClient(c.tl, predict.LogCorrections()); err != nil {
		return err
	}
	c.body, c.bullet = c.game.Body(), c.game.Bullet()
	if err := predict.AttachSplit(c.rc, c.body, c.interp, c.remoteShip); err != nil {
		return err
	}
	if err := predict.AttachComponent(c.rc, c.bullet); err != nil {
		return err
	}
	c.fx = effect.New(effect.Config[predict.SpawnKey, fx]{Play: c.play, Cancel: c.cancel, Confirm: c.confirm})
	c.tl.AddEffects(c.fx)
	c.game.SetEffects(
		func(t tick.Tick, key predict.SpawnKey, b shooter.Body) { c.fx.Fire(t, key, fx{X: b.X, Y: b.Y}) },
		func(t tick.Tick, r shooter.ScanResult) {
			f := fx{Scan: true, Hit: r.Hit, Target: r.Target}
			if own, ok := c.ownBody(); ok {
				f.X, f.Y = own.X, own.Y
			}
			c.fx.Fire(t, scanKey(r.Player, t, r.Hit), f)
		})
	c.frame, err = predict.NewClientFrame(c.rc, c.tl, c.proto.Inputs, predict.ClientFrameConfig{
		Sync: ticksync.Config{TickRate: tickRate},
		RTT: func() time.Duration {
			if c.conn == nil {
				return 0
			}
			return c.conn.Stats().RTT
		},
		Hooks: replicate.ClientHooks{
			Spawn: func(ce ecs.Entity, t tick.Tick) {
				se, _ := c.rc.ServerEntity(ce)
				c.recs[se] = &record{ce: ce, born: t}
				c.byClient[ce] = se
			},
			Despawn: func(ce ecs.Entity, t tick.Tick) bool {
				if se, ok := c.byClient[ce]; ok {
					r := c.recs[se]
					c.note(r)
					r.gone, r.isGone = t, true
				}
				return false
			},
			TickComplete: func(t tick.Tick) {
				c.interp.Complete(t)
				c.complete = append(c.complete, t)
				if len(c.complete) > 2*window {
					c.complete = slices.Delete(c.complete, 0, len(c.complete)-window)
				}
			},
		},
		AfterStep: func(tick.Tick) { c.corr = append(c.corr, c.body.Corrections()...) },
	})
	if err != nil {
		return err
	}
	steer := func(player uint64) shooter.Stick {
		v, _ := c.frame.Sender().Input(c.tl.Tick())
		return v // only the own ship has a Body: the others are interpolated
	}
	c.sim = func(t tick.Tick) { c.game.Step(t, steer) }
	c.game.SetScanner(uint64(c.rc.ID()), c.shown)
	c.startIn, c.startOut = c.bytes()
	c.lastIn, c.lastOut = c.startIn, c.startOut
	c.started = time.Now()
	return nil
}

// connect starts the handshake over conn.
func (c *client) connect(conn transport.MessageConn) error {
	c.conn = conn
	c.started = time.Now()
	return c.rc.Connect(conn)
}

// scanKey names the effect of player's scan at tick t with its verdict.
func scanKey(player uint64, t tick.Tick, hit bool) predict.SpawnKey {
	k := predict.SpawnKey{Client: replicate.ClientID(player), Tick: t, Kind: kindScan}
	if hit {
		k.Kind = kindHit
	}
	return k
}

// input is the frame's input of tick t: the player's buttons, with the
// claim of lag compensation on a scan (the moment the screen shows the
// interpolated ships at as this input is made).
func (c *client) input(t tick.Tick) shooter.Stick {
	in := shooter.Stick{Buttons: c.read(t)}
	if shooter.Scans(in, t) {
		st, sf := c.showAt(t)
		in.Seen, _ = lagcomp.NewRecent(t, st, sf)
	}
	return in
}

// showAt returns the time the screen shows the interpolated ships at
// while tick t is the input being made.
func (c *client) showAt(t tick.Tick) (tick.Tick, float64) {
	rt, rf := c.frame.Sync().Received(t, 0)
	return c.interp.ShowAt(rt, rf, c.interp.Config().Delay(c.frame.Jitter()))
}

// shown appends to dst the other ships as the screen showed them for a
// scan with claim cl: interpolated at the claim.
func (c *client) shown(cl lagcomp.Claim, _ tick.Tick, dst []shooter.Target) []shooter.Target {
	for e, sh := range c.ships.Values() {
		if replicate.ClientID(sh.Player) == c.rc.ID() || !c.live(e) {
			continue
		}
		if b, ok := c.interp.At(e, cl.Tick, cl.Fraction()); ok {
			dst = append(dst, shooter.Target{Player: sh.Player, Body: b})
		}
	}
	return dst
}

// live reports whether client entity e is still in the game at the
// Timeline's present: an entity the server despawned may stay in the
// World a while (the Timeline keeps it for rollbacks, an interpolated
// ship holds its last value), but it is not shown.
func (c *client) live(e ecs.Entity) bool {
	se, ok := c.byClient[e]
	if !ok {
		return true
	}
	r := c.recs[se]
	return !r.isGone || c.tl.Now().Before(r.gone)
}

// remoteShip reports whether e is another player's ship.
func (c *client) remoteShip(e ecs.Entity) bool {
	s, ok := c.ships.Get(e)
	return ok && replicate.ClientID(s.Player) != c.rc.ID()
}

// ownBody returns the own ship's predicted body.
func (c *client) ownBody() (shooter.Body, bool) {
	for e, sh := range c.ships.Values() {
		if replicate.ClientID(sh.Player) == c.rc.ID() {
			return c.body.Store().Get(e)
		}
	}
	return shooter.Body{}, false
}

// connected reports whether the client is playing: connected, and its
// predicted side started.
func (c *client) connected() bool { return c.tl != nil && c.rc.State() == replicate.Connected }

// newestComplete returns the newest complete server tick at or after the
// last update (replicate.Client.TickComplete keeps the last 64): the tick
// the world holds the server's values of. Not the update's own tick: a
// slow client (a browser drawing a few frames a second) receives a dozen
// ticks at once, and over WebSocket the server drops the oldest unreliable
// messages of a backed-up socket, which can be the update tick's own
// mutations every time while nothing moves: the client never started.
func (c *client) newestComplete() (tick.Tick, bool) {
	u := c.rc.UpdateTick()
	if u == 0 {
		return 0, false
	}
	for t := u + 63; ; t-- {
		if c.rc.TickComplete(t) {
			return t, true
		}
		if t == u {
			return 0, false
		}
	}
}

// update runs one frame of elapsed wall time: receive, step the ticks
// due, then the checks, the effects' ages, the smoothing and the net
// graph. Until the first server tick has arrived it only receives, then
// starts the predicted side (start) at the newest complete tick.
func (c *client) update(elapsed time.Duration, smooth predict.Decay) error {
	if c.tl == nil {
		c.rc.Update()
		if c.rc.State() == replicate.Disconnected {
			return fmt.Errorf("disconnected: %v", c.rc.Err())
		}
		if t, ok := c.newestComplete(); ok && c.rc.State() == replicate.Connected {
			return c.start(t)
		}
		return nil
	}
	c.corr = c.corr[:0]
	st0 := c.tl.Stats()
	held := c.frame.Stats().HeldFrames
	c.frame.Frame(elapsed, c.input, c.sim)
	if err := c.game.Err(); err != nil {
		return err
	}
	if c.rc.State() == replicate.Disconnected {
		return fmt.Errorf("disconnected: %v", c.rc.Err())
	}
	st := c.tl.Stats()
	c.resimThisFrame = int(st.TicksResimulated - st0.TicksResimulated)
	c.correctedThisFrame = int(st.Corrections - st0.Corrections)
	for _, ev := range c.rc.Events() {
		if ev.Kind != replicate.EventConnected {
			c.log.Info("arena: client event", "event", ev.Reason)
		}
	}
	c.receive()
	if c.frame.Stats().HeldFrames == held {
		// An overloaded frame held its rollbacks (predict's SlowFrame):
		// the server values it received are applied by a later Step,
		// and the truths compared then.
		c.checkTruths()
	}
	c.checkVerdicts()
	c.forget()
	c.age()
	c.smooth(elapsed, smooth)
	c.sample(elapsed)
	return nil
}

// receive collects the server's messages.
func (c *client) receive() {
	c.truths = append(c.truths, c.proto.truths.ReceiveFromServer(c.rc)...)
	for _, v := range c.proto.verdicts.ReceiveFromServer(c.rc) {
		if replicate.ClientID(v.Player) != c.rc.ID() {
			continue
		}
		c.verdicts[tick.Tick(v.Tick)] = v
		if v.Hit == 1 {
			c.serverHits++
		}
	}
}

// play, cancel and confirm are the effect callbacks: a flash (a shot) or
// a hit marker (a scan that hit, as predicted) appears when first
// predicted and goes when a rollback removes it.
func (c *client) play(_ tick.Tick, k predict.SpawnKey, f fx) {
	if c.fxLog != nil {
		*c.fxLog = append(*c.fxLog, fxEvent{key: k, play: true})
	}
	if f.Scan && f.Hit {
		c.hitMarkers++
	}
	c.flashes = append(c.flashes, flash{key: k, fx: f})
}

func (c *client) cancel(_ tick.Tick, k predict.SpawnKey, _ fx) {
	if c.fxLog != nil {
		*c.fxLog = append(*c.fxLog, fxEvent{key: k})
	}
	c.flashes = slices.DeleteFunc(c.flashes, func(f flash) bool { return f.key == k })
}

func (c *client) confirm(_ tick.Tick, k predict.SpawnKey, _ fx) {
	for i := range c.flashes {
		if c.flashes[i].key == k {
			c.flashes[i].done = true
		}
	}
}

// flashFrames is how long a flash or hit marker stays on screen.
const flashFrames = 30

// age ages the flashes and drops the old ones.
func (c *client) age() {
	c.flashes = slices.DeleteFunc(c.flashes, func(f flash) bool { return f.age >= flashFrames })
	for i := range c.flashes {
		c.flashes[i].age++
	}
}

// smooth adds the frame's corrections to the entities' visual offsets
// (before minus after: the picture starts where it was) and decays them.
func (c *client) smooth(elapsed time.Duration, d predict.Decay) {
	for _, k := range c.corr {
		c.maxCorr = max(c.maxCorr, shooter.Distance(k.Before, k.After))
		o := c.offsets[k.Entity]
		o[0] += float64(wrap(k.Before.X - k.After.X))
		o[1] += float64(wrap(k.Before.Y - k.After.Y))
		c.offsets[k.Entity] = o
	}
	for e, o := range c.offsets {
		o[0], o[1] = d.Apply(o[0], elapsed), d.Apply(o[1], elapsed)
		if o == [2]float64{} {
			delete(c.offsets, e)
			continue
		}
		c.offsets[e] = o
	}
}

// wrap returns d the short way around the arena's wrapping edges.
func wrap(d int32) int32 {
	switch {
	case d > shooter.Size/2:
		return d - shooter.Size
	case d < -shooter.Size/2:
		return d + shooter.Size
	}
	return d
}

// bytes returns the bytes received and sent so far: the transport's wire
// bytes when it counts them (QUIC), the message bytes otherwise.
func (c *client) bytes() (in, out uint64) {
	if c.conn != nil {
		if s := c.conn.Stats(); s.WireBytesReceived+s.WireBytesSent > 0 {
			return s.WireBytesReceived, s.WireBytesSent
		}
	}
	s := c.rc.Stats()
	return s.BytesIn, s.BytesOut
}

// sample adds the frame's figures to the net graph.
func (c *client) sample(elapsed time.Duration) {
	in, out := c.bytes()
	var ping time.Duration
	if c.conn != nil {
		ping = c.conn.Stats().RTT
	}
	c.graph.add(sample{
		ping: ping, in: in - c.lastIn, out: out - c.lastOut, dt: elapsed,
		ahead: c.frame.Ahead(), depth: c.resimThisFrame, corrections: c.correctedThisFrame,
	})
	c.lastIn, c.lastOut = in, out
}

// close ends the connection.
func (c *client) close() {
	c.rc.Close()
	if c.conn != nil {
		c.conn.Close()
	}
}
