package interest_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/interest"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// gridModel is the rule of Grid written out naively: every entity against
// every client, each Apply.
type gridModel struct {
	margin  float64
	pos     map[ecs.Entity][2]float64
	focus   map[replicate.ClientID][3]float64 // x, y, radius
	clients []replicate.ClientID
	shown   map[pair]bool
}

func newGridModel(margin float64) *gridModel {
	return &gridModel{margin: margin, pos: map[ecs.Entity][2]float64{}, focus: map[replicate.ClientID][3]float64{}, shown: map[pair]bool{}}
}

func (m *gridModel) apply() {
	for _, id := range m.clients {
		f := m.focus[id]
		for e, p := range m.pos {
			d := math.Hypot(p[0]-f[0], p[1]-f[1])
			switch {
			case f[2] >= 0 && d <= f[2]:
				m.shown[pair{id, e}] = true
			case !(f[2] >= 0 && d <= f[2]+m.margin):
				delete(m.shown, pair{id, e})
			}
		}
	}
}

func (m *gridModel) set(id replicate.ClientID) []ecs.Entity {
	var s []ecs.Entity
	for p := range m.shown {
		if p.id == id {
			s = append(s, p.e)
		}
	}
	slices.Sort(s)
	return s
}

func (m *gridModel) remove(e ecs.Entity) {
	delete(m.pos, e)
	for _, id := range m.clients {
		delete(m.shown, pair{id, e})
	}
}

// gridDriver moves entities and clients at random on a Grid and the model
// alike. Positions are on a 1/8 lattice, so distances compare exactly.
type gridDriver struct {
	rnd   *rand.Rand
	g     *interest.Grid
	m     *gridModel
	ents  []ecs.Entity
	world float64
}

func (d *gridDriver) coord() float64 { return float64(d.rnd.IntN(int(d.world)*8)) / 8 }

func (d *gridDriver) move(e ecs.Entity) {
	p, ok := d.m.pos[e]
	if !ok || d.rnd.IntN(10) == 0 {
		p = [2]float64{d.coord(), d.coord()} // jump
	} else {
		p[0] += float64(d.rnd.IntN(65)-32) / 8
		p[1] += float64(d.rnd.IntN(65)-32) / 8
	}
	d.g.Move(e, p[0], p[1])
	d.m.pos[e] = p
}

// TestGridRule: 300 entities walking and jumping, 6 clients whose focus
// walks and whose radius changes, entities removed and their slots reused
// by new entities (with and without Remove), a client forgotten and one added: after every Apply,
// what the calls made shown is exactly what the rule gives (visible within
// R, hidden beyond R + margin, as before in between), and no call repeats
// what the Visibility already has.
func TestGridRule(t *testing.T) {
	for _, cell := range []float64{7, 25, 400} {
		t.Run(fmt.Sprint("cell", cell), func(t *testing.T) {
			g, err := interest.NewGrid(interest.GridConfig{Radius: 20, Margin: 4, CellSize: cell})
			if err != nil {
				t.Fatal(err)
			}
			m, rec := newGridModel(4), newRecorder()
			d := &gridDriver{rnd: rand.New(rand.NewPCG(3, 4)), g: g, m: m, world: 200}
			for i := range 300 {
				d.ents = append(d.ents, ecs.Entity(uint64(1)<<32|uint64(i)))
			}
			addClient := func(id replicate.ClientID) {
				m.clients = append(m.clients, id)
				f := [3]float64{d.coord(), d.coord(), 20}
				m.focus[id] = f
				g.SetFocus(id, f[0], f[1])
			}
			for id := range replicate.ClientID(6) {
				addClient(id + 1)
			}
			for tk := range 400 {
				for i, e := range d.ents {
					switch k := d.rnd.IntN(100); {
					case k < 60:
						d.move(e)
					case k == 60 && tk > 0:
						g.Remove(e)
						m.remove(e)
						// The slot comes back as a new entity.
						d.ents[i] = ecs.Entity(uint64(e.Generation()+1)<<32 | uint64(e.Index()))
					case k == 61 && tk > 0:
						// Despawned and reused without Remove: the Move
						// of the new entity replaces the old one.
						m.remove(e)
						d.ents[i] = ecs.Entity(uint64(e.Generation()+1)<<32 | uint64(e.Index()))
						d.move(d.ents[i])
					}
				}
				for _, id := range m.clients {
					f := m.focus[id]
					f[0] += float64(d.rnd.IntN(33)-16) / 8
					f[1] += float64(d.rnd.IntN(33)-16) / 8
					if d.rnd.IntN(30) == 0 {
						f[2] = []float64{-1, 0, 10, 20, 35}[d.rnd.IntN(5)]
						g.SetRadius(id, f[2])
					}
					m.focus[id] = f
					g.SetFocus(id, f[0], f[1])
				}
				if tk == 200 {
					g.ForgetClient(3)
					m.clients = slices.DeleteFunc(m.clients, func(id replicate.ClientID) bool { return id == 3 })
					for p := range rec.shown {
						if p.id == 3 {
							delete(rec.shown, p)
						}
					}
					for p := range m.shown {
						if p.id == 3 {
							delete(m.shown, p)
						}
					}
					addClient(9)
				}
				if err := g.Apply(rec); err != nil {
					t.Fatal(err)
				}
				m.apply()
				for _, id := range m.clients {
					if got, want := rec.set(id), m.set(id); !slices.Equal(got, want) {
						t.Fatalf("tick %d, client %d: shown %v, want %v", tk, id, got, want)
					}
				}
			}
			if rec.redundant != 0 {
				t.Fatalf("%d calls changed nothing", rec.redundant)
			}
			t.Logf("%d calls in 400 ticks", len(rec.calls))
		})
	}
}

// TestGridHysteresis: radius 10, margin 2. An entity walking in reaches
// R and is shown once; then it swings between 9 and 11.9 from the focus
// for 100 ticks, across the radius edge and across a cell border at 10,
// and is never hidden; an entity that swings in the band from outside is
// never shown; beyond 12 the first is hidden, once.
func TestGridHysteresis(t *testing.T) {
	g, err := interest.NewGrid(interest.GridConfig{Radius: 10, Margin: 2, CellSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	a, b := ecs.Entity(1<<32|1), ecs.Entity(1<<32|2)
	g.SetFocus(1, 0, 0)
	step := func(xa, yb float64) {
		g.Move(a, xa, 0)
		g.Move(b, 0, yb)
		if err := g.Apply(rec); err != nil {
			t.Fatal(err)
		}
	}
	for x := 30.0; x >= 10; x-- {
		step(x, 11.5)
	}
	if want := []call{{1, a, true}}; !slices.Equal(rec.calls, want) {
		t.Fatalf("walking in: calls %v, want %v", rec.calls, want)
	}
	for i := range 100 {
		xa, yb := 9.0, 10.5
		if i%2 == 1 {
			xa, yb = 11.9, 11.9
		}
		step(xa, yb)
	}
	if len(rec.calls) != 1 {
		t.Fatalf("swinging within the margin: calls %v", rec.calls[1:])
	}
	step(12.01, 11.9)
	if want := []call{{1, a, true}, {1, a, false}}; !slices.Equal(rec.calls, want) {
		t.Fatalf("leaving: calls %v, want %v", rec.calls, want)
	}
	if g.Visible(1, a) || g.Visible(1, b) {
		t.Fatal("Visible disagrees with the calls")
	}
}

// TestGridEntersAndLeaves: an entity crossing the world at constant speed
// passes two clients' views: each is shown it once when it comes within
// R and hidden once when it is beyond R + margin, at the ticks the
// distances say, and a client far away is told nothing.
func TestGridEntersAndLeaves(t *testing.T) {
	g, err := interest.NewGrid(interest.GridConfig{Radius: 10, Margin: 2, CellSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	e := ecs.Entity(1<<32 | 5)
	g.SetFocus(1, 50, 0)
	g.SetFocus(2, 100, 3)
	g.SetFocus(3, 0, 500)
	type at struct {
		x int
		c call
	}
	var got []at
	for x := 0; x <= 150; x++ {
		g.Move(e, float64(x), 0)
		n := len(rec.calls)
		if err := g.Apply(rec); err != nil {
			t.Fatal(err)
		}
		for _, c := range rec.calls[n:] {
			got = append(got, at{x, c})
		}
	}
	// Client 2 sees it from x with (100-x)² + 9 <= 100, that is x = 91,
	// and loses it once (x-100)² + 9 > 144, that is x = 112.
	want := []at{{40, call{1, e, true}}, {63, call{1, e, false}}, {91, call{2, e, true}}, {112, call{2, e, false}}}
	if !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
}

// TestGridNaNIsFar: a NaN position or focus counts as infinitely far.
func TestGridNaNIsFar(t *testing.T) {
	g, _ := interest.NewGrid(interest.GridConfig{})
	rec := newRecorder()
	e := ecs.Entity(1<<32 | 1)
	g.SetFocus(1, 0, 0)
	g.Move(e, 1, 1)
	_ = g.Apply(rec)
	g.Move(e, math.NaN(), 1)
	_ = g.Apply(rec)
	if want := []call{{1, e, true}, {1, e, false}}; !slices.Equal(rec.calls, want) {
		t.Fatalf("calls %v, want %v", rec.calls, want)
	}
	g.Move(e, 1, 1)
	g.SetFocus(1, math.NaN(), 0)
	_ = g.Apply(rec)
	if len(rec.calls) != 2 {
		t.Fatalf("NaN focus showed %v", rec.calls[2:])
	}
	if _, err := interest.NewGrid(interest.GridConfig{Radius: math.NaN()}); err == nil {
		t.Fatal("NaN radius accepted")
	}
}

// TestGridOverReplicate: 80 entities walking on a server with
// HiddenByDefault, 4 clients over the in-memory network (virtual time,
// 10% loss) with foci that walk too. After every tick each client holds
// exactly what the grid's rule showed it at the tick of the update it
// applied; after healing, what it shows now.
func TestGridOverReplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, 11, 4, transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.1})
		defer r.close()
		g, err := interest.NewGrid(interest.GridConfig{Radius: 15, Margin: 3, CellSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		m := newGridModel(3)
		d := &gridDriver{rnd: rand.New(rand.NewPCG(5, 6)), g: g, m: m, world: 100}
		pos := ecs.StoreOf[Position](r.sw)
		for range 80 {
			e := spawn(r.sw, 0, 0)
			d.ents = append(d.ents, e)
		}
		for _, rc := range r.clients {
			m.clients = append(m.clients, rc.c.ID())
			m.focus[rc.c.ID()] = [3]float64{d.coord(), d.coord(), 15}
		}
		start := r.srv.Tick()
		hist := map[tick.Tick][][]ecs.Entity{}
		run := func(ticks int, moving bool) {
			for range ticks {
				if moving {
					for _, e := range d.ents {
						if _, ok := m.pos[e]; !ok || d.rnd.IntN(2) == 0 {
							d.move(e)
							p := m.pos[e]
							_ = pos.Set(e, Position{p[0], p[1]})
						}
					}
					for _, id := range m.clients {
						f := m.focus[id]
						f[0] += float64(d.rnd.IntN(17)-8) / 8
						f[1] += float64(d.rnd.IntN(17)-8) / 8
						m.focus[id] = f
						g.SetFocus(id, f[0], f[1])
					}
				}
				if err := g.Apply(r.srv); err != nil {
					t.Fatal(err)
				}
				m.apply()
				r.send()
				now := make([][]ecs.Entity, len(r.clients))
				for i, id := range m.clients {
					now[i] = m.set(id)
				}
				hist[r.srv.Tick()] = now
				for i, rc := range r.clients {
					rc.c.Update()
					got, err := rc.view()
					if err != nil {
						t.Fatalf("client %d: %v", i, err)
					}
					var want []ecs.Entity
					if ut := rc.c.UpdateTick(); ut.After(start) {
						want = hist[ut][i]
					}
					if !slices.Equal(got, want) {
						t.Fatalf("tick %v, client %d at update %v: holds %v, want %v", r.srv.Tick(), i, rc.c.UpdateTick(), got, want)
					}
				}
				time.Sleep(rigTick)
			}
		}
		run(300, true)
		r.setLinks(transport.LinkConfig{})
		run(120, false)
		shown := 0
		for i, rc := range r.clients {
			got, _ := rc.view()
			if want := m.set(m.clients[i]); !slices.Equal(got, want) {
				t.Fatalf("client %d after healing: holds %v, want %v", i, got, want)
			}
			shown += len(got)
		}
		var spawns int
		for _, rc := range r.clients {
			for _, n := range rc.spawns {
				spawns += n
			}
		}
		if spawns < 40 || shown == 0 {
			t.Fatalf("too little happened: %d spawns, %d shown at the end", spawns, shown)
		}
		t.Logf("%d spawns on the clients, %d entities shown at the end", spawns, shown)
	})
}

// TestGridRemoveAndBack: an entity removed and moved back in before Apply
// is hidden and shown again, once each, and later leaves the view with a
// single hide.
func TestGridRemoveAndBack(t *testing.T) {
	g, _ := interest.NewGrid(interest.GridConfig{Radius: 10})
	rec := newRecorder()
	e := ecs.Entity(1<<32 | 4)
	g.SetFocus(1, 0, 0)
	g.Move(e, 1, 0)
	_ = g.Apply(rec)
	for range 3 {
		g.Remove(e)
		g.Move(e, 2, 0)
		_ = g.Apply(rec)
	}
	g.Move(e, 100, 0)
	_ = g.Apply(rec)
	_ = g.Apply(rec)
	want := []call{{1, e, true}, {1, e, false}, {1, e, true}, {1, e, false}, {1, e, true}, {1, e, false}, {1, e, true}, {1, e, false}}
	if !slices.Equal(rec.calls, want) {
		t.Fatalf("calls %v, want %v", rec.calls, want)
	}
}
