package interest_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Position is the replicated component of the tests.
type Position struct{ X, Y float64 }

// Beat is a replicated resource the rig changes every tick, so that every
// client gets an update every tick and its UpdateTick names the tick whose
// visibility it holds.
type Beat struct{ N uint64 }

func newProtocol(tb testing.TB) *replicate.Protocol {
	tb.Helper()
	p := replicate.NewProtocol()
	if _, err := replicate.Component[Position](p, replicate.WithOwnRule()); err != nil {
		tb.Fatal(err)
	}
	if _, err := replicate.ReplicateResource[Beat](p); err != nil {
		tb.Fatal(err)
	}
	return p
}

func spawn(w *ecs.World, x, y float64) ecs.Entity {
	e := w.Spawn()
	_ = ecs.Register[replicate.Replicated](w).Set(e, replicate.Replicated{})
	_ = ecs.Register[Position](w).Set(e, Position{x, y})
	return e
}

// call is one SetVisible call.
type call struct {
	id  replicate.ClientID
	e   ecs.Entity
	vis bool
}

type pair struct {
	id replicate.ClientID
	e  ecs.Entity
}

// recorder is a Visibility that records its calls and the set they make,
// and counts calls that change nothing.
type recorder struct {
	calls     []call
	shown     map[pair]bool
	redundant int
}

func newRecorder() *recorder { return &recorder{shown: map[pair]bool{}} }

func (r *recorder) SetVisible(id replicate.ClientID, e ecs.Entity, vis bool) error {
	r.calls = append(r.calls, call{id, e, vis})
	p := pair{id, e}
	if r.shown[p] == vis {
		r.redundant++
	}
	if vis {
		r.shown[p] = true
	} else {
		delete(r.shown, p)
	}
	return nil
}

// set returns the entities shown to id, sorted.
func (r *recorder) set(id replicate.ClientID) []ecs.Entity {
	var s []ecs.Entity
	for p := range r.shown {
		if p.id == id {
			s = append(s, p.e)
		}
	}
	slices.Sort(s)
	return s
}

// rig is a replication server with HiddenByDefault and its clients on a
// transport.MessageNetwork; build it inside synctest.Test, so the
// network and the server's clock run on virtual time and a run replays
// exactly from its seed. Each client's view is counted through its
// ClientHooks: spawns and despawns per server entity.
type rig struct {
	t       *testing.T
	net     *transport.MessageNetwork
	ln      *transport.MessageNetworkListener
	sw      *ecs.World
	srv     *replicate.Server
	clients []*rigClient
	cancel  context.CancelFunc
	served  chan error
}

type rigClient struct {
	c        *replicate.Client
	w        *ecs.World
	addr     netip.AddrPort
	set      map[ecs.Entity]bool // server entities present, from the hooks
	spawns   map[ecs.Entity]int
	despawns map[ecs.Entity]int
}

// rigTick is the rig's tick; the virtual clock advances by it per step.
const rigTick = time.Second / 60

func newRig(t *testing.T, seed uint64, n int, link transport.LinkConfig) *rig {
	t.Helper()
	p := newProtocol(t)
	r := &rig{t: t, sw: ecs.New(), served: make(chan error, 1)}
	r.net = transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed})
	var err error
	if r.ln, err = r.net.Listen(netip.AddrPort{}); err != nil {
		t.Fatal(err)
	}
	if r.srv, err = replicate.NewServer(replicate.ServerConfig{World: r.sw, Protocol: p, HiddenByDefault: true}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.served <- r.srv.Serve(ctx, r.ln) }()
	for range n {
		conn, err := r.net.Dial(context.Background(), r.ln.Addr())
		if err != nil {
			t.Fatal(err)
		}
		rc := &rigClient{w: ecs.New(), addr: conn.LocalAddr(),
			set: map[ecs.Entity]bool{}, spawns: map[ecs.Entity]int{}, despawns: map[ecs.Entity]int{}}
		if rc.c, err = replicate.NewClient(replicate.ClientConfig{World: rc.w, Protocol: p}); err != nil {
			t.Fatal(err)
		}
		c := rc.c
		c.SetClientHooks(replicate.ClientHooks{
			Spawn: func(e ecs.Entity, _ tick.Tick) {
				se, ok := c.ServerEntity(e)
				if !ok {
					t.Errorf("spawn of unmapped client entity %v", e)
				}
				rc.spawns[se]++
				rc.set[se] = true
			},
			Despawn: func(e ecs.Entity, _ tick.Tick) bool {
				se, ok := c.ServerEntity(e)
				if !ok {
					t.Errorf("despawn of unmapped client entity %v", e)
				}
				rc.despawns[se]++
				delete(rc.set, se)
				return false
			},
		})
		if err := c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		r.clients = append(r.clients, rc)
	}
	r.setLinks(link)
	for k := 0; ; k++ {
		done := true
		for _, rc := range r.clients {
			done = done && rc.c.State() == replicate.Connected
		}
		if done {
			break
		}
		if k == 600 {
			t.Fatalf("clients not connected after %d ticks", k)
		}
		r.step()
	}
	return r
}

// send beats and sends one server tick.
func (r *rig) send() {
	b := ecs.RegisterResource[Beat](r.sw)
	if p := b.Ptr(); p != nil {
		b.Set(Beat{p.N + 1})
	} else {
		b.Set(Beat{1})
	}
	r.srv.Send()
}

func (r *rig) setLinks(link transport.LinkConfig) {
	for _, rc := range r.clients {
		r.net.SetLink(rc.addr, r.ln.Addr(), link)
		r.net.SetLink(r.ln.Addr(), rc.addr, link)
	}
}

// step sends one server tick, updates every client, and lets one tick of
// virtual time pass (time.Sleep inside the synctest bubble: no real wait).
func (r *rig) step() {
	r.send()
	for _, rc := range r.clients {
		rc.c.Update()
	}
	time.Sleep(rigTick)
}

// view returns the server entities client rc holds, sorted, checking that
// the hooks, the client's entity map and its World agree.
func (rc *rigClient) view() ([]ecs.Entity, error) {
	var s []ecs.Entity
	for se := range rc.set {
		if _, ok := rc.c.ClientEntity(se); !ok {
			return nil, fmt.Errorf("hooks spawned %v but the client does not map it", se)
		}
		s = append(s, se)
	}
	slices.Sort(s)
	if n := rc.c.Entities(); n != len(s) {
		return nil, fmt.Errorf("client maps %d entities, hooks say %d", n, len(s))
	}
	if n := ecs.Register[Position](rc.w).Len(); n != len(s) {
		return nil, fmt.Errorf("client world holds %d positions, hooks say %d", n, len(s))
	}
	return s, nil
}

func (r *rig) close() {
	r.t.Helper()
	for _, rc := range r.clients {
		rc.c.Close()
	}
	r.srv.Close()
	r.cancel()
	if err := <-r.served; err != nil {
		r.t.Errorf("Serve: %v", err)
	}
	r.ln.Close()
	r.net.Close()
}
