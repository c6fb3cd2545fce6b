package replicate_test

import (
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/tick"
)

// TestDesyncDump: a client whose copy of one entity's Health is corrupted
// is found out at the next report tick; the server's dump of that tick
// (captured after its send phase) and the client's (captured at its
// report, entities under their server ids) are written to files, and
// their diff is exactly that entity (by its server id), the field .HP and
// the two values.
func TestDesyncDump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newDesyncRig(t, 3, 2, false)
		defer r.close()
		dumpsOf := func(w *ecs.World, opts snapshot.DumpOptions) *snapshot.Dumps {
			reg := snapshot.NewRegistry(w)
			if err := errors.Join(snapshot.Copy[Position](reg), snapshot.Copy[Health](reg)); err != nil {
				t.Fatal(err)
			}
			return snapshot.NewDumps(reg, replicate.MaxPendingChecksums, opts)
		}
		srvDumps := dumpsOf(r.sw, snapshot.DumpOptions{Label: "server"})
		c := r.clients[1]
		cliDumps := dumpsOf(r.cws[1], snapshot.DumpOptions{Label: "client 1", Entity: c.ServerEntity})
		c.CaptureAtReports(func(tk tick.Tick) {
			if err := cliDumps.Capture(tk); err != nil {
				t.Error(err)
			}
		})
		pos := ecs.StoreOf[Position](r.sw)
		var srvEv *replicate.ServerEvent
		var cliEv *replicate.ClientEvent
		for i := 0; i < 200 && (srvEv == nil || cliEv == nil); i++ {
			if i == 40 {
				ce, _ := c.ClientEntity(ents[7])
				ecs.StoreOf[Health](r.cws[1]).Ptr(ce).HP += 100
			}
			for _, e := range ents {
				pos.Ptr(e).Y++
			}
			r.step()
			if tk := r.srv.Tick(); uint64(tk)%desyncInterval == 0 {
				if err := srvDumps.Capture(tk); err != nil {
					t.Fatal(err)
				}
			}
			for _, ev := range r.srv.Events() {
				if ev.Kind == replicate.ClientDesync && srvEv == nil {
					srvEv = &ev
				}
			}
			for _, ev := range c.Events() {
				if ev.Kind == replicate.EventDesync && cliEv == nil {
					cliEv = &ev
				}
			}
		}
		if srvEv == nil || cliEv == nil || srvEv.Tick != cliEv.Tick {
			t.Fatalf("desync events: server %+v, client %+v", srvEv, cliEv)
		}
		dir := t.TempDir()
		write := func(ds *snapshot.Dumps, name string) string {
			d, ok := ds.At(srvEv.Tick)
			if !ok {
				t.Fatalf("%s: no dump of tick %d", name, srvEv.Tick)
			}
			path := filepath.Join(dir, name)
			if err := snapshot.WriteDumpFile(path, d.Only(srvEv.Types)); err != nil {
				t.Fatal(err)
			}
			return path
		}
		a, err := snapshot.ReadDumpFile(write(srvDumps, "server.rwdump"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := snapshot.ReadDumpFile(write(cliDumps, "client1.rwdump"))
		if err != nil {
			t.Fatal(err)
		}
		diffs, total := snapshot.DiffDumps(a, b, 0)
		want := snapshot.FieldDiff{Type: srvEv.Types[0], Entity: ents[7], Field: ".HP", A: "7", B: "107"}
		if total != 1 || diffs[0] != want {
			t.Fatalf("diffs %v (%d), want %v", diffs, total, want)
		}
		t.Logf("tick %d: %s", a.Frame, diffs[0])
	})
}
