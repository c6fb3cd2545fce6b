package interest_test

import (
	"fmt"
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

// roomsModel is the test's own account of membership: what each client
// should see is computed from it, not from Rooms.
type roomsModel struct {
	ents    map[interest.RoomID]map[ecs.Entity]bool
	members map[replicate.ClientID]map[interest.RoomID]bool
}

func newRoomsModel() *roomsModel {
	return &roomsModel{ents: map[interest.RoomID]map[ecs.Entity]bool{}, members: map[replicate.ClientID]map[interest.RoomID]bool{}}
}

func (m *roomsModel) set(mp map[interest.RoomID]map[ecs.Entity]bool, room interest.RoomID) map[ecs.Entity]bool {
	if mp[room] == nil {
		mp[room] = map[ecs.Entity]bool{}
	}
	return mp[room]
}

// want is the union of client id's rooms, sorted.
func (m *roomsModel) want(id replicate.ClientID) []ecs.Entity {
	u := map[ecs.Entity]bool{}
	for room := range m.members[id] {
		for e := range m.ents[room] {
			u[e] = true
		}
	}
	s := make([]ecs.Entity, 0, len(u))
	for e := range u {
		s = append(s, e)
	}
	slices.Sort(s)
	return s
}

// roomsDriver makes random membership changes on Rooms and the model
// alike, and, given a world, spawns entities into rooms and despawns them.
type roomsDriver struct {
	rnd     *rand.Rand
	rooms   *interest.Rooms
	m       *roomsModel
	w       *ecs.World // nil: no spawns or despawns
	live    []ecs.Entity
	clients []replicate.ClientID
	nRooms  int
}

func (d *roomsDriver) room() interest.RoomID { return interest.RoomID(d.rnd.IntN(d.nRooms)) }

func (d *roomsDriver) op() {
	id := d.clients[d.rnd.IntN(len(d.clients))]
	room := d.room()
	switch k := d.rnd.IntN(100); {
	case k < 15:
		d.rooms.Join(room, id)
		if d.m.members[id] == nil {
			d.m.members[id] = map[interest.RoomID]bool{}
		}
		d.m.members[id][room] = true
	case k < 30:
		d.rooms.Leave(room, id)
		delete(d.m.members[id], room)
	case k < 60:
		e := d.live[d.rnd.IntN(len(d.live))]
		d.rooms.Add(room, e)
		d.m.set(d.m.ents, room)[e] = true
	case k < 85:
		e := d.live[d.rnd.IntN(len(d.live))]
		d.rooms.Remove(room, e)
		delete(d.m.ents[room], e)
	case k < 93 && d.w != nil:
		e := spawn(d.w, 0, 0)
		d.live = append(d.live, e)
		d.rooms.Add(room, e)
		d.m.set(d.m.ents, room)[e] = true
	case k < 100 && d.w != nil && len(d.live) > 10:
		i := d.rnd.IntN(len(d.live))
		e := d.live[i]
		d.rooms.RemoveEntity(e)
		for _, s := range d.m.ents {
			delete(s, e)
		}
		if err := d.w.Despawn(e); err != nil {
			panic(err)
		}
		d.live = slices.Delete(d.live, i, i+1)
	}
}

// TestRoomsApplyTellsOnlyChanges: after every Apply, what the calls made
// shown is exactly each client's union of rooms, and no call repeats what
// the Visibility already has (a membership change undone before Apply
// costs nothing).
func TestRoomsApplyTellsOnlyChanges(t *testing.T) {
	rooms, m, rec := interest.NewRooms(), newRoomsModel(), newRecorder()
	d := &roomsDriver{rnd: rand.New(rand.NewPCG(1, 2)), rooms: rooms, m: m, nRooms: 5}
	for i := range 80 {
		d.live = append(d.live, ecs.Entity(uint64(1)<<32|uint64(i)))
	}
	for id := range replicate.ClientID(8) {
		d.clients = append(d.clients, id+1)
	}
	for tk := range 500 {
		for range 1 + d.rnd.IntN(6) {
			d.op()
		}
		if err := rooms.Apply(rec); err != nil {
			t.Fatal(err)
		}
		for _, id := range d.clients {
			want := m.want(id)
			if got := rec.set(id); !slices.Equal(got, want) {
				t.Fatalf("tick %d, client %d: shown %v, want %v", tk, id, got, want)
			}
			for _, e := range d.live {
				if rooms.Visible(id, e) != slices.Contains(want, e) {
					t.Fatalf("tick %d: Visible(%d, %v) wrong", tk, id, e)
				}
			}
		}
	}
	if rec.redundant != 0 {
		t.Fatalf("%d calls changed nothing", rec.redundant)
	}
	// Join and leave before Apply: no call.
	n := len(rec.calls)
	rooms.Join(77, 1)
	rooms.Add(77, ecs.Entity(uint64(1)<<32|999))
	rooms.Leave(77, 1)
	rooms.Apply(rec)
	if len(rec.calls) != n {
		t.Fatalf("a change undone before Apply made %d calls", len(rec.calls)-n)
	}
}

// TestRoomsCostFollowsChange: a client joining a room of n entities costs
// n calls, an entity added to a room of k clients k calls, and a tick
// without changes none, however many entities the rooms hold.
func TestRoomsCostFollowsChange(t *testing.T) {
	rooms, rec := interest.NewRooms(), newRecorder()
	for i := range 10000 {
		rooms.Add(interest.RoomID(i%10), ecs.Entity(uint64(1)<<32|uint64(i)))
	}
	for id := range replicate.ClientID(20) {
		rooms.Join(interest.RoomID(id%10), id+1)
	}
	_ = rooms.Apply(rec)
	if len(rec.calls) != 20*1000 {
		t.Fatalf("%d calls for 20 clients in rooms of 1000", len(rec.calls))
	}
	rec.calls = rec.calls[:0]
	_ = rooms.Apply(rec)
	if len(rec.calls) != 0 {
		t.Fatalf("%d calls for a tick without changes", len(rec.calls))
	}
	rooms.Add(3, ecs.Entity(uint64(1)<<32|20000)) // room 3 has clients 4 and 14
	_ = rooms.Apply(rec)
	if len(rec.calls) != 2 {
		t.Fatalf("%d calls for one entity added to a room of 2 clients", len(rec.calls))
	}
	rec.calls = rec.calls[:0]
	rooms.Join(3, 1) // client 1 sees room 0; room 3 holds 1001 entities
	_ = rooms.Apply(rec)
	if len(rec.calls) != 1001 {
		t.Fatalf("%d calls for a client joining a room of 1001", len(rec.calls))
	}
}

// TestRoomsLeaveGameCallsAlone: Rooms never calls SetVisible for an entity
// that was never in a room, and ForgetClient makes no call.
func TestRoomsLeaveGameCallsAlone(t *testing.T) {
	rooms, rec := interest.NewRooms(), newRecorder()
	inRoom, other := ecs.Entity(uint64(1)<<32|1), ecs.Entity(uint64(1)<<32|2)
	rooms.Add(1, inRoom)
	rooms.Join(1, 7)
	rooms.Join(2, 7)
	rooms.Leave(1, 7)
	rooms.Join(1, 7)
	_ = rooms.Apply(rec)
	rooms.ForgetClient(7)
	_ = rooms.Apply(rec)
	for _, c := range rec.calls {
		if c.e == other || c.id != 7 || !c.vis {
			t.Fatalf("unexpected call %+v", c)
		}
	}
	if len(rec.calls) != 1 {
		t.Fatalf("calls %v, want one show", rec.calls)
	}
	if len(rooms.Clients(1)) != 0 || len(rooms.Clients(2)) != 0 {
		t.Fatal("a forgotten client is still in a room")
	}
}

// TestRoomsOverReplicate: a server and 6 clients over the in-memory
// network (virtual time, seeded), 4 rooms, 400 ticks of random joins,
// leaves, additions, removals, spawns into rooms and despawns. After every
// tick, each client holds exactly the union of its rooms as of the last
// update it applied (updates are reliable and ordered, so the client is
// never ahead and never holds a mix of two ticks; a resource changing
// every tick gives every client an update every tick, so a change late
// by one tick is caught); after the links heal,
// the union of its rooms now. An entity in no room that the game shows
// one client directly stays shown. Each client saw every entity spawned and
// despawned exactly as often as that entity entered and left its union.
func TestRoomsOverReplicate(t *testing.T) {
	for _, loss := range []float64{0, 0.1} {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("loss%.0f%%/seed%d", loss*100, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { roomsOverReplicate(t, seed, loss) })
			})
		}
	}
}

func roomsOverReplicate(t *testing.T, seed uint64, loss float64) {
	const nClients = 6
	link := transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: loss}
	r := newRig(t, seed, nClients, link)
	defer r.close()
	rooms, m := interest.NewRooms(), newRoomsModel()
	d := &roomsDriver{rnd: rand.New(rand.NewPCG(seed, 9)), rooms: rooms, m: m, w: r.sw, nRooms: 4}
	for i := range 60 {
		d.live = append(d.live, spawn(r.sw, float64(i), 0))
	}
	for _, rc := range r.clients {
		d.clients = append(d.clients, rc.c.ID())
	}
	// An entity in no room, shown to client 0 by the game directly: Rooms
	// leaves it alone.
	direct := spawn(r.sw, -1, 0)
	if err := r.srv.SetVisible(d.clients[0], direct, true); err != nil {
		t.Fatal(err)
	}
	want := func(i int) []ecs.Entity {
		w := m.want(d.clients[i])
		if i == 0 {
			w = append(w, direct)
			slices.Sort(w)
		}
		return w
	}
	start := r.srv.Tick() // nothing was visible up to here
	hist := map[tick.Tick][][]ecs.Entity{}
	wantAt := func(i int, tk tick.Tick) []ecs.Entity {
		if !tk.After(start) {
			return nil
		}
		return hist[tk][i]
	}
	run := func(ticks int, ops bool) {
		for range ticks {
			if ops {
				for range 1 + d.rnd.IntN(4) {
					d.op()
				}
			}
			if err := rooms.Apply(r.srv); err != nil {
				t.Fatal(err)
			}
			r.send()
			now := make([][]ecs.Entity, nClients)
			for i := range d.clients {
				now[i] = want(i)
			}
			hist[r.srv.Tick()] = now
			for i, rc := range r.clients {
				rc.c.Update()
				got, err := rc.view()
				if err != nil {
					t.Fatalf("tick %v, client %d: %v", r.srv.Tick(), i, err)
				}
				if want := wantAt(i, rc.c.UpdateTick()); !slices.Equal(got, want) {
					t.Fatalf("tick %v, client %d at update %v: holds %v, want %v", r.srv.Tick(), i, rc.c.UpdateTick(), got, want)
				}
			}
			time.Sleep(rigTick)
		}
	}
	run(400, true)
	if loss > 0 {
		var lost uint64
		for _, rc := range r.clients {
			lost += r.net.LinkStats(r.ln.Addr(), rc.addr).Lost + r.net.LinkStats(rc.addr, r.ln.Addr()).Lost
		}
		if lost == 0 {
			t.Fatal("the links lost nothing")
		}
		t.Logf("%d datagrams lost", lost)
	}
	r.setLinks(transport.LinkConfig{})
	run(120, false)
	for i, rc := range r.clients {
		if rc.c.State() != replicate.Connected {
			t.Fatalf("client %d: %v (%v)", i, rc.c.State(), rc.c.Err())
		}
		got, _ := rc.view()
		if want := want(i); !slices.Equal(got, want) {
			t.Fatalf("client %d after healing: holds %v, want %v", i, got, want)
		}
		// Spawns and despawns: once per entry into and exit from the union.
		spawns, despawns := map[ecs.Entity]int{}, map[ecs.Entity]int{}
		var prev []ecs.Entity
		for tk := start + 1; !tk.After(r.srv.Tick()); tk++ {
			cur := hist[tk][i]
			for _, e := range cur {
				if !slices.Contains(prev, e) {
					spawns[e]++
				}
			}
			for _, e := range prev {
				if !slices.Contains(cur, e) {
					despawns[e]++
				}
			}
			prev = cur
		}
		if !equalCounts(spawns, rc.spawns) || !equalCounts(despawns, rc.despawns) {
			t.Fatalf("client %d: spawns %v despawns %v, want %v and %v", i, rc.spawns, rc.despawns, spawns, despawns)
		}
	}
}

func equalCounts(a, b map[ecs.Entity]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRoomChangeSpawnsOnce: over links losing 10% of their datagrams, a
// client moving from room A (entities 0..29) to room B (20..49) in one
// tick is sent a despawn of each of 0..19 and a spawn of each of 30..49,
// exactly once, and nothing for 20..29, which it sees through both; then
// it leaves B and, ten ticks later, joins A: 20..49 despawned once, 0..29
// spawned once.
func TestRoomChangeSpawnsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, 7, 3, transport.LinkConfig{Latency: 25 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.1})
		defer r.close()
		var ents []ecs.Entity
		for i := range 50 {
			ents = append(ents, spawn(r.sw, float64(i), 0))
		}
		rooms := interest.NewRooms()
		const a, b = 1, 2
		for i, e := range ents {
			if i < 30 {
				rooms.Add(a, e)
			}
			if i >= 20 {
				rooms.Add(b, e)
			}
		}
		c0 := r.clients[0]
		rooms.Join(a, c0.c.ID())
		rooms.Join(b, r.clients[1].c.ID())
		run := func(n int) {
			for range n {
				if err := rooms.Apply(r.srv); err != nil {
					t.Fatal(err)
				}
				r.step()
			}
		}
		check := func(what string, spawned, despawned []ecs.Entity) {
			t.Helper()
			want := func(es []ecs.Entity) map[ecs.Entity]int {
				m := map[ecs.Entity]int{}
				for _, e := range es {
					m[e] = 1
				}
				return m
			}
			if !equalCounts(c0.spawns, want(spawned)) {
				t.Fatalf("%s: spawns %v, want each of %v once", what, c0.spawns, spawned)
			}
			if !equalCounts(c0.despawns, want(despawned)) {
				t.Fatalf("%s: despawns %v, want each of %v once", what, c0.despawns, despawned)
			}
			clear(c0.spawns)
			clear(c0.despawns)
		}
		run(120)
		check("joining A", ents[:30], nil)
		rooms.Leave(a, c0.c.ID())
		rooms.Join(b, c0.c.ID())
		run(180)
		check("moving from A to B", ents[30:], ents[:20])
		rooms.Leave(b, c0.c.ID())
		run(10)
		rooms.Join(a, c0.c.ID())
		run(180)
		check("leaving B, then joining A", ents[:30], ents[20:])
		if got, _ := c0.view(); !slices.Equal(got, ents[:30]) {
			t.Fatalf("client holds %v, want room A", got)
		}
	})
}
