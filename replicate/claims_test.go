package replicate_test

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// TestMappingClaimFlood (issue 21, defect 4): a client's MapClientEntity
// claims for 4,096 server entities that never reach it fill its cap (the
// next claim is ErrTooLarge), yet a full resync of that client in a
// 20,000-entity world (100,000 with REWIND_LONG=1, not -short or -race) costs the server
// about what it costs without them (it used to cost 9-31 times more:
// every spawn scanned every claim); after 10 s the claims have expired,
// the cap has room again and the client's retained bytes are back down.
// A claim whose entity does reach the client is still honoured.
func TestMappingClaimFlood(t *testing.T) {
	for _, n := range memWorldSizes(20000) {
		t.Run(fmt.Sprint("entities=", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { claimFlood(t, n) })
		})
	}
}

func claimFlood(t *testing.T, n int) {
	r := newMemRig(t, 4, replicate.ServerConfig{})
	defer r.close()
	r.spawnMany(n)
	r.connect(1, transport.LinkConfig{Latency: 10 * time.Millisecond})
	c := r.clients[0]
	for c.Entities() < n {
		r.step()
	}
	// resync returns the CPU time of the Send that builds a full resync,
	// and steps until the client has applied it.
	resync := func() time.Duration {
		want := c.Stats().Resyncs + 1
		if err := r.srv.Resync(c.ID(), "test"); err != nil {
			t.Fatal(err)
		}
		c0 := cpuTime()
		r.srv.Send()
		d := cpuTime() - c0
		for k := 0; c.Stats().Resyncs < want; k++ {
			if k == 600 {
				t.Fatal("resync not applied")
			}
			c.Update()
			time.Sleep(memTick)
			r.step()
		}
		return d
	}
	// The least CPU time of three resyncs (the first warms the buffers).
	resync3 := func() time.Duration {
		return min(resync(), resync(), resync())
	}
	base := resync3()
	st0, _ := r.srv.Stats(c.ID())

	// 4,096 claims for server entities that never exist.
	claim := func(from uint32) error {
		for i := range uint32(4096) {
			if err := r.srv.MapClientEntity(c.ID(), ecs.NewEntity(1<<24+from+i, 1), ecs.NewEntity(1<<24+from+i, 1)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := claim(0); err != nil {
		t.Fatal(err)
	}
	if err := r.srv.MapClientEntity(c.ID(), ecs.NewEntity(1<<25, 1), ecs.NewEntity(1<<25, 1)); !errors.Is(err, replicate.ErrTooLarge) {
		t.Fatalf("claim 4,097: %v, want ErrTooLarge", err)
	}
	flooded := resync3()
	st1, _ := r.srv.Stats(c.ID())
	t.Logf("%d entities: full resync %v of CPU without claims, %v with 4,096 waiting; retained %d bytes, %d with the claims",
		n, base, flooded, st0.RetainedBytes, st1.RetainedBytes)
	// (Generous: process CPU time on a shared machine is noisy; the scan
	// cost 16-20 times a resync without claims.)
	if base > 0 && flooded > 3*base+10*time.Millisecond {
		t.Errorf("a resync costs %v with 4,096 claims waiting, %v without", flooded, base)
	}

	for range 11 * 60 { // the claims expire after 10 s
		r.step()
	}
	st2, _ := r.srv.Stats(c.ID())
	// A claim whose entity reaches the client is honoured.
	predicted := r.cws[0].Spawn()
	se := spawnRep(r.sw, Position{X: -1}, -1)
	if err := r.srv.MapClientEntity(c.ID(), se, predicted); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		r.step()
	}
	if got, ok := c.ClientEntity(se); !ok || got != predicted {
		t.Fatalf("claimed entity: client entity %v %v, want %v", got, ok, predicted)
	}
	if err := claim(1 << 16); err != nil {
		t.Fatalf("claims after the old ones expired: %v", err)
	}
	if st2.RetainedBytes > st0.RetainedBytes+4096 {
		t.Errorf("retained %d bytes after the claims expired, %d before them", st2.RetainedBytes, st0.RetainedBytes)
	}
}
