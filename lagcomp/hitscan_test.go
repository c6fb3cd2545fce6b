package lagcomp_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Shot is a client's hit-scan shot: what it was showing (the claim), the
// server entity it aimed at and the aim point.
type Shot struct {
	ID     uint32
	Claim  lagcomp.Claim
	Target ecs.Entity // server entity
	AimX   float64
	AimY   float64
}

// Shots carries a client's last shots: like a game's inputs, shots go
// unreliably, each repeated in the next messages, so a lost datagram
// costs no retransmission delay. Eight: at 10% loss a shot is lost only
// if the eight messages that carry it are (1 in 10^8); with four, one of
// the test's 3,000 shots was lost about one seed in four.
type Shots struct {
	N uint8
	S [8]Shot
}

const hitRadius = 1.0

// hit is the game's hit test, the same on the client and the server.
func hit(target Pos, aimX, aimY float64) bool {
	return math.Hypot(target.X-aimX, target.Y-aimY) < hitRadius
}

// targetAt is where target k is at server tick t: smooth curved motion.
func targetAt(k int, t tick.Tick) Pos {
	a := float64(t)/25 + float64(k)
	return Pos{X: 8*math.Sin(a) + 3*float64(k), Y: 6 * math.Cos(a*0.7)}
}

// hitscanClient is one shooter: a replication client whose targets are
// interpolated, and the verdicts its screen showed.
type hitscanClient struct {
	c       *replicate.Client
	w       *ecs.World
	buf     *interp.Buffer[Pos]
	verdict map[uint32]bool
	shown   map[uint32]Pos
	known   map[uint32][2]Pos // the buffer's values at the claim's two ticks
	rnd     *rand.Rand
	nextID  uint32
	frames  int // frames since connected
	recent  []Shot
	shots   replicate.MessageType[Shots]
}

// send sends the client's last shots.
func (hc *hitscanClient) send() {
	var m Shots
	m.N = uint8(copy(m.S[:], hc.recent))
	_ = hc.shots.SendToServer(hc.c, m)
}

// TestHitscanVerdictsAgree: clients at 50, 150 and 250 ms round trip
// shoot at interpolated moving targets, 1,000 shots each, drawing their
// targets at the claim they send and judging each shot on that picture;
// the server judges it against the lag-compensated view of the claim. At
// 0% loss every verdict agrees; at 10% loss at least 99% do (a lost
// value makes the client interpolate across two ticks where the server
// has every tick, moving the target by a hair: only aims within that hair
// of the target's edge can differ).
func TestHitscanVerdictsAgree(t *testing.T) {
	for _, loss := range []float64{0, 0.1} {
		t.Run(fmt.Sprintf("loss=%v", loss), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { hitscan(t, loss) })
		})
	}
}

func hitscan(t *testing.T, loss float64) {
	const shotsEach, nTargets = 1000, 6
	rtts := []time.Duration{50 * time.Millisecond, 150 * time.Millisecond, 250 * time.Millisecond}
	p := replicate.NewProtocol()
	if _, err := replicate.Component[Pos](p, replicate.WithOwnRule()); err != nil {
		t.Fatal(err)
	}
	shotType, err := replicate.RegisterMessage[Shots](p, replicate.ClientToServer, transport.Unreliable)
	if err != nil {
		t.Fatal(err)
	}
	net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 11})
	defer net.Close()
	ln, err := net.Listen(netip.AddrPort{})
	if err != nil {
		t.Fatal(err)
	}
	sw := ecs.New()
	pos := ecs.Register[Pos](sw)
	rep := ecs.Register[replicate.Replicated](sw)
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: p})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() {
		srv.Close()
		cancel()
		<-served
	}()
	hist := lagcomp.New(sw, lagcomp.Config{})
	tracked, err := lagcomp.Track(hist, lerpPos)
	if err != nil {
		t.Fatal(err)
	}
	var targets []ecs.Entity
	for k := range nTargets {
		e := sw.Spawn()
		_ = rep.Set(e, replicate.Replicated{})
		_ = pos.Set(e, targetAt(k, 0))
		targets = append(targets, e)
	}

	var clients []*hitscanClient
	for i, rtt := range rtts {
		conn, err := net.Dial(context.Background(), ln.Addr())
		if err != nil {
			t.Fatal(err)
		}
		link := transport.LinkConfig{Latency: rtt / 2, Jitter: 2 * time.Millisecond, Loss: loss}
		net.SetLink(conn.LocalAddr(), ln.Addr(), link)
		net.SetLink(ln.Addr(), conn.LocalAddr(), link)
		hc := &hitscanClient{shots: shotType, w: ecs.New(), verdict: map[uint32]bool{}, shown: map[uint32]Pos{}, known: map[uint32][2]Pos{}, rnd: rand.New(rand.NewPCG(uint64(i), 5))}
		hc.buf = interp.NewBuffer(interp.Config{Capacity: 64}, lerpPos)
		if hc.c, err = replicate.NewClient(replicate.ClientConfig{World: hc.w, Protocol: p}); err != nil {
			t.Fatal(err)
		}
		buf := hc.buf
		if err := replicate.SetHooks(hc.c, replicate.ComponentHooks[Pos]{Value: func(e ecs.Entity, t tick.Tick, v Pos, kind replicate.ValueKind) bool {
			if kind != replicate.ValueRemapped {
				buf.Push(e, t, v)
			}
			return false
		}}); err != nil {
			t.Fatal(err)
		}
		hc.c.SetClientHooks(replicate.ClientHooks{TickComplete: buf.Complete})
		if err := hc.c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, hc)
	}

	// The server's tick: judge the shots received, simulate, capture, send.
	agree, disagree, judged, clamped := make([]int, len(clients)), make([]int, len(clients)), 0, 0
	byID := map[replicate.ClientID]int{}
	seen := make([]map[uint32]bool, len(clients))
	for i := range seen {
		seen[i] = map[uint32]bool{}
	}
	var tk tick.Tick
	judge := func(i int, s Shot) {
		before := hist.Stats().Clamped
		target, ok := tracked.At(hist.At(s.Claim), s.Target)
		if hist.Stats().Clamped != before {
			clamped++
			t.Logf("client %d shot %d at tick %d: claim of tick %d clamped", i, s.ID, tk, s.Claim.Tick)
		}
		got := ok && hit(target, s.AimX, s.AimY)
		want, sent := clients[i].verdict[s.ID]
		if !sent {
			t.Fatalf("client %d: shot %d was never fired", i, s.ID)
		}
		if got == want {
			agree[i]++
		} else {
			disagree[i]++
			// A verdict may differ only where the client lacked a value
			// the server has: it interpolated across a lost tick.
			a, _ := tracked.At(hist.At(lagcomp.Claim{Tick: s.Claim.Tick}), s.Target)
			b, _ := tracked.At(hist.At(lagcomp.Claim{Tick: s.Claim.Tick + 1}), s.Target)
			k := clients[i].known[s.ID]
			if k[0] == a && k[1] == b {
				t.Errorf("client %d shot %d: verdicts differ though the client held the server's values of ticks %d and %d", i, s.ID, s.Claim.Tick, s.Claim.Tick+1)
			}
			t.Logf("client %d shot %d: claim %+v; the client drew %+v, the server %+v; the client's values of the two ticks %+v %+v, the server's %+v %+v", i, s.ID, s.Claim, clients[i].shown[s.ID], target, k[0], k[1], a, b)
		}
		judged++
	}
	serverTick := func() {
		srv.Receive()
		for _, m := range shotType.ReceiveFromClients(srv) {
			i, ok := byID[m.Client]
			if !ok {
				t.Fatalf("shots from unknown client %d", m.Client)
			}
			for _, s := range m.Message.S[:min(int(m.Message.N), len(m.Message.S))] {
				if seen[i][s.ID] {
					continue
				}
				seen[i][s.ID] = true
				judge(i, s)
			}
		}
		for k, e := range targets {
			_ = pos.Set(e, targetAt(k, tk))
		}
		hist.Capture(tk)
		if err := srv.SendTick(tk); err != nil {
			t.Fatal(err)
		}
	}
	// A client's frame: receive, then fire one shot at a target drawn at
	// the claim it sends.
	fire := func(hc *hitscanClient, alpha float64) {
		hc.c.Update()
		if hc.c.State() != replicate.Connected {
			return
		}
		// Every frame sends the last shots, as a game sends its inputs:
		// each shot goes in four messages.
		defer hc.send()
		if int(hc.nextID) >= shotsEach {
			return
		}
		// A player joins the game half a second after connecting: the
		// buffer then holds the ticks it draws.
		if hc.frames++; hc.frames < 30 {
			return
		}
		if _, ok := hc.buf.Latest(); !ok {
			return
		}
		st, sf := hc.buf.ShowTime(alpha, hc.buf.Config().Delay(2*time.Millisecond))
		claim := lagcomp.NewClaim(st, sf)
		var ce ecs.Entity
		var shown Pos
		found := false
		ents := ecs.StoreOf[Pos](hc.w).Column().Entities
		for range nTargets {
			if len(ents) == 0 {
				break
			}
			cand := ents[hc.rnd.IntN(len(ents))]
			if v, ok := hc.buf.At(cand, claim.Tick, claim.Fraction()); ok {
				ce, shown, found = cand, v, true
				break
			}
		}
		if !found {
			return
		}
		se, ok := hc.c.ServerEntity(ce)
		if !ok {
			return
		}
		// Aim around the target: about half the shots hit.
		aimX := shown.X + (hc.rnd.Float64()*2-1)*1.4*hitRadius
		aimY := shown.Y + (hc.rnd.Float64()*2-1)*1.4*hitRadius
		id := hc.nextID
		hc.nextID++
		hc.verdict[id] = hit(shown, aimX, aimY)
		hc.shown[id] = shown
		k0, _ := hc.buf.At(ce, claim.Tick, 0)
		k1, _ := hc.buf.At(ce, claim.Tick+1, 0)
		hc.known[id] = [2]Pos{k0, k1}
		hc.recent = append(hc.recent, Shot{ID: id, Claim: claim, Target: se, AimX: aimX, AimY: aimY})
		if len(hc.recent) > len(Shots{}.S) {
			hc.recent = hc.recent[1:]
		}
	}

	rnd := rand.New(rand.NewPCG(9, 9))
	for tk = 1; ; tk++ {
		serverTick()
		for i, hc := range clients {
			if hc.c.State() == replicate.Connected {
				byID[hc.c.ID()] = i
			}
			fire(hc, rnd.Float64())
		}
		time.Sleep(time.Second / 60)
		if judged == shotsEach*len(clients) {
			break
		}
		if tk > 4000 {
			for i := range clients {
				for id := range uint32(shotsEach) {
					if !seen[i][id] {
						t.Logf("client %d shot %d never arrived", i, id)
					}
				}
			}
			t.Fatalf("after %d ticks %d of %d shots judged", tk, judged, shotsEach*len(clients))
		}
	}
	for i := range clients {
		pct := 100 * float64(agree[i]) / float64(agree[i]+disagree[i])
		t.Logf("loss %v, rtt %v: %d shots, %d verdicts agree (%.2f%%), %d differ", loss, rtts[i], agree[i]+disagree[i], agree[i], pct, disagree[i])
		if loss == 0 && disagree[i] != 0 || pct < 99 {
			t.Errorf("rtt %v at loss %v: %d of %d verdicts differ", rtts[i], loss, disagree[i], agree[i]+disagree[i])
		}
	}
	if clamped != 0 {
		t.Errorf("%d honest claims clamped", clamped)
	}
}
