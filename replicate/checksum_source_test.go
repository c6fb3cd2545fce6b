package replicate_test

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// partOf returns the sum of the part named name.
func partOf(t *testing.T, ps []replicate.Part, name string) uint64 {
	t.Helper()
	for _, p := range ps {
		if p.Name == name {
			return p.Sum
		}
	}
	t.Fatalf("no part %q in %v", name, ps)
	return 0
}

// TestChecksumSummers: a ComponentSummer's terms over the client's own
// values, and a ResourceSummer's sum of the client's resource, are the
// parts Client.Checksum computes, entity references mapped back to server
// entities (the Leader resource names a player) included; an unregistered
// type is ErrUnknownType.
func TestChecksumSummers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rp := newResProto(t)
		r := newMemRigProto(t, transport.MessageNetworkConfig{Seed: 5}, replicate.ServerConfig{}, rp.testProto)
		defer r.close()
		streams := ecs.Register[rng.Rand](r.sw)
		for range 3 { // server ids differ from the client's: the mapping shows
			r.sw.Spawn()
		}
		var ents []ecs.Entity
		for i := range 5 {
			e := spawnRep(r.sw, Position{X: float64(i), Y: 2}, 0)
			_ = streams.Set(e, rng.Stream(9, uint64(i)))
			ents = append(ents, e)
		}
		ecs.RegisterResource[Score](r.sw).Set(Score{Red: 3, Blue: 4})
		ecs.RegisterResource[Leader](r.sw).Set(Leader{E: ents[2]})
		r.connect(1, transport.LinkConfig{Latency: 10 * time.Millisecond})
		for range 10 {
			r.step()
		}
		c, cw := r.clients[0], r.cws[0]
		_, parts := c.Checksum(nil)
		srvSum, srvParts := r.srv.Checksum(nil)
		if sum, _ := c.Checksum(nil); sum != srvSum {
			t.Fatalf("client checksum %x, server %x (%v / %v)", sum, srvSum, parts, srvParts)
		}

		pos, err := replicate.NewComponentSummer[Position](c)
		if err != nil {
			t.Fatal(err)
		}
		var sum, raw uint64
		col := ecs.StoreOf[Position](cw).Column()
		for k, e := range col.Entities {
			se, _ := c.ServerEntity(e)
			sum += pos.Term(se, &col.Values[k])
			raw += pos.Term(e, &col.Values[k])
		}
		if raw == sum {
			t.Fatal("client and server ids are the same: the test shows no mapping")
		}
		if want := partOf(t, parts, pos.Name()); sum != want || pos.Name() != "github.com/rewindgo/rewind/replicate_test.Position" {
			t.Fatalf("summer %q: %x, Checksum's part %x", pos.Name(), sum, want)
		}

		leader, err := replicate.NewResourceSummer[Leader](c)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := ecs.GetResource[Leader](cw)
		if ce, _ := c.ClientEntity(ents[2]); l.E != ce || ce == ents[2] {
			t.Fatalf("the client's leader %v is not the mapped %v", l.E, ce)
		}
		if got, want := leader.Sum(&l), partOf(t, parts, leader.Name()); got != want || leader.Name() != "resource github.com/rewindgo/rewind/replicate_test.Leader" {
			t.Fatalf("resource summer %q: %x, Checksum's part %x", leader.Name(), got, want)
		}
		l.E = 0 // another value, another sum
		if leader.Sum(&l) == partOf(t, parts, leader.Name()) {
			t.Fatal("a different leader sums the same")
		}

		if _, err := replicate.NewComponentSummer[Health](c); !errors.Is(err, replicate.ErrUnknownType) {
			t.Fatalf("summer of an unregistered component: %v", err)
		}
		if _, err := replicate.NewResourceSummer[Health](c); !errors.Is(err, replicate.ErrUnknownType) {
			t.Fatalf("summer of an unregistered resource: %v", err)
		}
	})
}

// TestHoldChecksums: a client holding its checksum reports sends none by
// itself and tells the holder each report tick; ReportChecksum sends the
// held report of a tick once (the World's parts: clean; a replaced part
// that differs: a desync naming its type alone) and refuses a tick not
// held; HoldChecksums(nil) sends reports at once again and drops the held
// ones.
func TestHoldChecksums(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newDesyncRig(t, 4, 1, false)
		defer r.close()
		c := r.clients[0]
		var due []tick.Tick
		c.HoldChecksums(func(t tick.Tick) { due = append(due, t) })
		sent := c.Stats().ChecksumsSent
		srv, cli := runDesync(r, ents, 35)
		if c.Stats().ChecksumsSent != sent || len(due) < 3 || len(srv)+len(cli[0]) != 0 {
			t.Fatalf("holding: sent %d (before %d), due %v, events %v %v", c.Stats().ChecksumsSent, sent, due, srv, cli)
		}
		for i, d := range due {
			if uint64(d)%desyncInterval != 0 || (i > 0 && d != due[i-1]+desyncInterval) {
				t.Fatalf("due ticks %v, want consecutive report ticks", due)
			}
		}
		before, _ := r.srv.Stats(c.ID())
		if !c.ReportChecksum(due[0], nil) || c.ReportChecksum(due[0], nil) || c.ReportChecksum(due[0]+1, nil) {
			t.Fatal("ReportChecksum: want true once for a held tick, false for a tick sent or never held")
		}
		health, err := replicate.NewComponentSummer[Health](c)
		if err != nil {
			t.Fatal(err)
		}
		wrong := []replicate.Part{{Name: health.Name(), Sum: 1}, {Name: "no such part", Sum: 2}}
		if !c.ReportChecksum(due[1], wrong) {
			t.Fatal("held report refused")
		}
		srv, cli = runDesync(r, ents, 5)
		after, _ := r.srv.Stats(c.ID())
		if after.ChecksumsChecked != before.ChecksumsChecked+2 || after.Desyncs != 1 ||
			len(srv) != 1 || srv[0].Tick != due[1] || !slices.Equal(srv[0].Types, []string{health.Name()}) ||
			len(cli[0]) != 1 || cli[0][0].Tick != due[1] {
			t.Fatalf("after two reports: stats %+v, events %v %v", after, srv, cli)
		}

		c.HoldChecksums(nil)
		n := len(due)
		runDesync(r, ents, 30)
		if len(due) != n || c.ReportChecksum(due[2], nil) || c.Stats().ChecksumsSent < sent+4 {
			t.Fatalf("released: due %v, sent %d", due, c.Stats().ChecksumsSent)
		}
	})
}
