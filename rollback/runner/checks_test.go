package runner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
)

type cpos struct{ X int64 }
type cvel struct{ X int64 }

// A Runner driving a SyncTest session turns on checked mode, so a Step
// that writes through Read access fails loudly, naming the component type,
// instead of changing the world without a change tick (which a snapshot
// load might then not undo).
func TestSyncTestRunnerChecksReads(t *testing.T) {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	if err := snapshot.Copy[cpos](reg); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.Copy[cvel](reg); err != nil {
		t.Fatal(err)
	}
	pos, vel := ecs.StoreOf[cpos](w), ecs.StoreOf[cvel](w)
	e := w.Spawn()
	_ = pos.Set(e, cpos{})
	_ = vel.Set(e, cvel{X: 1})
	move := ecs.NewQuery2(pos.Write(), vel.Read())
	sess, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 1, CheckDistance: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Config{World: w, Registry: reg, Session: sess,
		ReadInput: func(rollback.PlayerHandle) []byte { return []byte{0} },
		Step: func(ctx *runner.Context) {
			for _, row := range move.All() {
				row.A.X += row.B.X
				if ctx.Frame == 5 {
					row.B.X++ // the bug: velocity is read-only here
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Checks() {
		t.Fatal("a Runner driving a SyncTest session did not turn on checked mode")
	}
	var got any
	func() {
		defer func() { got = recover() }()
		for range 10 {
			if err := r.RunFrame(); err != nil {
				t.Fatal(err)
			}
		}
	}()
	err, _ = got.(error)
	if !errors.Is(err, ecs.ErrWriteThroughRead) || !strings.Contains(err.Error(), "cvel") {
		t.Fatalf("RunFrame panicked with %v, want ErrWriteThroughRead naming cvel", got)
	}
}

// wrappedSession forwards the Session contract, as a game's logging or
// metrics wrapper would.
type wrappedSession struct{ rollback.Session }

// A Runner turns checked mode on through the Session contract, not the
// concrete type: a wrapper of a SyncTest session gets it, a wrapper of a
// P2P-like session (one that does not check determinism) does not.
func TestWrappedSyncTestChecksReads(t *testing.T) {
	for _, c := range []struct {
		name string
		sess rollback.Session
		want bool
	}{
		{"synctest", func() rollback.Session {
			s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 1, CheckDistance: 2})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}(), true},
		{"other", nopSession{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := ecs.New()
			reg := snapshot.NewRegistry(w)
			_, err := runner.New(runner.Config{World: w, Registry: reg, Session: wrappedSession{c.sess},
				ReadInput: func(rollback.PlayerHandle) []byte { return []byte{0} },
				Step:      func(*runner.Context) {}})
			if err != nil {
				t.Fatal(err)
			}
			if w.Checks() != c.want {
				t.Fatalf("checked mode %v for a wrapped %s session, want %v", w.Checks(), c.name, c.want)
			}
		})
	}
}
