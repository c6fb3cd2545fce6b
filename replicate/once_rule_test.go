package replicate_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// Shot is a server-only marker: a rule sends the Position of an entity
// that has one only with its spawn.
type Shot struct{}

// TestOnceByRuleChecksums: a component replicated Once by one rule
// (shots' Position, sent with their spawn only, then predicted by the
// client) and on change by another (everything else's Position). The
// server moves every entity each tick; clients keep the shots' spawn
// values. Checksums leave the Once values out on both sides (the updates
// tell clients which entities' Position is Once by rule, wire version 5),
// so 100 ticks of checksum reports find no desync; a shot turned into a
// normal entity (its marker removed) goes back to sending its Position
// and into the sums.
func TestOnceByRuleChecksums(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := replicate.NewProtocol()
		pos, err := replicate.Component[Position](p)
		if err != nil {
			t.Fatal(err)
		}
		hp, err := replicate.Component[Health](p, replicate.WithOwnRule())
		if err != nil {
			t.Fatal(err)
		}
		once := replicate.Once
		if err := p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{pos}}); err != nil {
			t.Fatal(err)
		}
		if err := p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{pos}, Filters: []replicate.Filter{replicate.With[Shot]()}, Mode: &once, Priority: 5}); err != nil {
			t.Fatal(err)
		}
		_ = hp
		r := newMemRigProto(t, transport.MessageNetworkConfig{Seed: 4}, replicate.ServerConfig{ChecksumInterval: desyncInterval}, testProto{p: p})
		defer r.close()
		r.ccfg.ChecksumInterval = desyncInterval
		shots := ecs.Register[Shot](r.sw)
		var ents []ecs.Entity
		for i := range 20 {
			e := spawnRep(r.sw, Position{X: float64(i)}, int32(i))
			if i%2 == 0 {
				_ = shots.Set(e, Shot{})
			}
			ents = append(ents, e)
		}
		r.connect(2, transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond})
		srvEv, cliEv := runDesync(r, ents, 100)
		if len(srvEv) != 0 || len(cliEv[0])+len(cliEv[1]) != 0 {
			t.Fatalf("desyncs with Once by rule: server %v, clients %v", srvEv, cliEv)
		}
		st, _ := r.srv.Stats(r.clients[0].ID())
		if st.ChecksumsChecked < 5 || st.Desyncs != 0 {
			t.Fatalf("%d checksums checked, %d desyncs", st.ChecksumsChecked, st.Desyncs)
		}
		// The clients hold the shots' spawn Position; the others move.
		cpos := ecs.StoreOf[Position](r.cws[0])
		for i, e := range ents {
			ce, _ := r.clients[0].ClientEntity(e)
			got, _ := cpos.Get(ce)
			if i%2 == 0 && got != (Position{X: float64(i)}) || i%2 == 1 && got.Y < 90 {
				t.Fatalf("entity %d (shot %v): client holds %+v", i, i%2 == 0, got)
			}
		}
		// A shot that stops being one sends its Position on change again,
		// and the sums include it: still no desync.
		_ = shots.Remove(ents[0])
		srvEv, cliEv = runDesync(r, ents, 60)
		if len(srvEv) != 0 || len(cliEv[0])+len(cliEv[1]) != 0 {
			t.Fatalf("desyncs after a rule change: server %v, clients %v", srvEv, cliEv)
		}
		ce, _ := r.clients[0].ClientEntity(ents[0])
		if got, _ := cpos.Get(ce); got.Y == 0 {
			t.Fatal("the former shot's Position is not sent on change")
		}
	})
}
