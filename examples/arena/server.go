package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// tickRate is the simulation rate of server and clients.
const tickRate = 60

// checksumInterval is replicate's desync detection interval: every half
// second each client reports a checksum of its state and the server
// answers with its verdict (replicate.ClientCounters.Desyncs).
const checksumInterval = 30

// server is the authoritative game: the shooter's World replicated to
// every connected client, each client's ship steered by its inputs
// (predict.ServerFrame), hit-scans judged with lag compensation. It
// knows nothing of windows or QUIC: serve gives it a listener.
type server struct {
	log    *slog.Logger
	proto  *protocol
	game   *shooter.Server
	srv    *replicate.Server
	frame  *predict.ServerFrame[shooter.Stick]
	tick   tick.Tick
	served []chan error // one per listener served

	mx        *metrics.Server             // the --dashboard's recorder (nil: none)
	scansSent int                         // the verdicts sent so far
	players   map[replicate.ClientID]bool // connected players with a ship
	joined    int                         // players that ever connected
	events    []string
	sendErrs  int
}

// newServer returns a server of an empty arena. log may be nil (silent).
func newServer(log *slog.Logger) (*server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	proto, err := newProtocol()
	if err != nil {
		return nil, err
	}
	s := &server{log: log, proto: proto, game: shooter.NewServer(), players: map[replicate.ClientID]bool{}}
	// The clients show the other ships interpolated: a scan is judged
	// against the ships as the shooter's screen showed them.
	s.game.ShowOthersInterpolated(true)
	s.srv, err = replicate.NewServer(replicate.ServerConfig{World: s.game.World(), Protocol: proto.Protocol.Protocol,
		TickRate: tickRate, ChecksumInterval: checksumInterval})
	if err != nil {
		return nil, err
	}
	s.frame = predict.NewServerFrame(s.srv, proto.Inputs)
	return s, nil
}

// serve accepts clients from ln until ctx is done (in a goroutine; close
// collects its result). It may be called once per listener: QUIC and
// WebSocket clients play on one server.
func (s *server) serve(ctx context.Context, ln transport.MessageListener) {
	done := make(chan error, 1)
	s.served = append(s.served, done)
	go func() { done <- s.srv.Serve(ctx, ln) }()
}

// step runs one server tick: receive, simulate with the buffered inputs,
// send; then the tick's truth (every truthEvery ticks), the verdicts of
// new scans, and ships for players who joined or left.
func (s *server) step() error {
	t0 := time.Now()
	s.tick++
	var simErr error
	err := s.frame.Frame(s.tick, func(t tick.Tick, input func(replicate.ClientID) shooter.Stick) {
		simErr = s.game.Step(t, func(p uint64) shooter.Stick { return input(replicate.ClientID(p)) })
	})
	if simErr != nil {
		return simErr
	}
	if err != nil {
		s.note(fmt.Sprintf("tick %v: %v", s.tick, err))
	}
	if s.tick%truthEvery == 0 && len(s.players) > 0 {
		st := s.game.State(nil)
		s.send(s.proto.truths.SendToClients(s.srv, replicate.All(), truth{Tick: uint32(s.tick), Digest: stateDigest(st), Entities: uint32(len(st))}))
	}
	for _, r := range s.game.Scans()[s.scansSent:] {
		v := verdict{Player: r.Player, Tick: uint32(r.Tick), Target: r.Target}
		if r.Hit {
			v.Hit = 1
		}
		s.send(s.proto.verdicts.SendToClients(s.srv, replicate.All(), v))
	}
	s.scansSent = len(s.game.Scans())
	// Ships change after the truth: a ship added now exists from the next
	// tick on, as the clients receive it.
	evs := s.srv.Events()
	if s.mx != nil {
		s.mx.Sample(time.Since(t0))
		s.mx.Events(evs)
	}
	for _, ev := range evs {
		switch ev.Kind {
		case replicate.ClientConnected:
			if _, err := s.game.AddShip(uint64(ev.Client)); err != nil {
				return err
			}
			s.players[ev.Client] = true
			s.joined++
			s.log.Info("arena: player joined", "player", ev.Client, "tick", s.tick)
			s.note(fmt.Sprintf("tick %v: player %d joined", s.tick, ev.Client))
		case replicate.ClientDisconnected:
			if s.players[ev.Client] {
				s.game.RemoveShip(uint64(ev.Client))
				delete(s.players, ev.Client)
			}
			s.log.Info("arena: player left", "player", ev.Client, "tick", s.tick, "reason", ev.Reason)
			s.note(fmt.Sprintf("tick %v: player %d left: %s", s.tick, ev.Client, ev.Reason))
		default:
			s.note(fmt.Sprintf("tick %v: client %d %v: %s", s.tick, ev.Client, ev.Kind, ev.Reason))
		}
	}
	return nil
}

func (s *server) send(err error) {
	if err != nil {
		s.sendErrs++
		s.log.Warn("arena: message not sent", "err", err)
	}
}

// note keeps the last events for the summary.
func (s *server) note(ev string) {
	s.events = append(s.events, ev)
	if len(s.events) > 20 {
		s.events = s.events[1:]
	}
}

// close stops the replication server and waits for the accept loops.
func (s *server) close() error {
	s.srv.Close()
	var errs []error
	for _, done := range s.served {
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// hits counts the scans judged so far and the hits among them.
func (s *server) hits() (scans, hits int) {
	for _, r := range s.game.Scans() {
		scans++
		if r.Hit {
			hits++
		}
	}
	return scans, hits
}

// pace sleeps until the next tick is due (period after the previous
// one); far behind, it does not try to catch up in a burst. It reports
// false when ctx is done.
func pace(ctx context.Context, next *time.Time, period time.Duration) bool {
	now := time.Now()
	*next = next.Add(period)
	d := next.Sub(now)
	if d < -250*time.Millisecond {
		*next = now
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
