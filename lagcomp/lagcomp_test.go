package lagcomp_test

import (
	"errors"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/tick"
)

type Pos struct{ X, Y float64 }

func lerpPos(a, b Pos, f float64) Pos { return Pos{a.X + (b.X-a.X)*f, a.Y + (b.Y-a.Y)*f} }

// posAt is where the test's entity k is at tick t.
func posAt(k int, t tick.Tick) Pos {
	return Pos{X: float64(k) + float64(t)*0.5, Y: float64(k * int(t) % 7)}
}

type rig struct {
	w    *ecs.World
	pos  *ecs.Store[Pos]
	h    *lagcomp.History
	ty   *lagcomp.Type[Pos]
	ents []ecs.Entity
}

func newRig(t *testing.T, n int, cfg lagcomp.Config) *rig {
	t.Helper()
	r := &rig{w: ecs.New()}
	r.pos = ecs.Register[Pos](r.w)
	r.h = lagcomp.New(r.w, cfg)
	var err error
	if r.ty, err = lagcomp.Track(r.h, lerpPos); err != nil {
		t.Fatal(err)
	}
	for range n {
		r.ents = append(r.ents, r.w.Spawn())
	}
	return r
}

// step moves every entity to its place at tick t and captures t.
func (r *rig) step(t tick.Tick) {
	for k, e := range r.ents {
		if r.w.Alive(e) {
			_ = r.pos.Set(e, posAt(k, t))
		}
	}
	r.h.Capture(t)
}

// A view shows each entity exactly where it was at the claimed tick,
// interpolated with the game's lerp at the claim's fraction.
func TestViewShowsThePast(t *testing.T) {
	r := newRig(t, 20, lagcomp.Config{})
	for tk := tick.Tick(0); tk < 100; tk++ {
		r.step(tk)
	}
	for _, c := range []lagcomp.Claim{lagcomp.NewClaim(99, 0), lagcomp.NewClaim(90, 0.25), lagcomp.NewClaim(45, 0.5), lagcomp.NewClaim(40, 0.999)} {
		v := r.h.At(c)
		if vt, vf := v.Tick(); vt != c.Tick || vf != c.Fraction() {
			t.Fatalf("claim %+v: view of tick %d fraction %v", c, vt, vf)
		}
		for k, e := range r.ents {
			got, ok := r.ty.At(v, e)
			want := lerpPos(posAt(k, c.Tick), posAt(k, c.Tick+1), c.Fraction())
			if c.Tick == 99 {
				want = posAt(k, 99)
			}
			if !ok || got != want {
				t.Fatalf("claim %+v entity %d: %+v %v, want %+v", c, k, got, ok, want)
			}
		}
		n := 0
		r.ty.Each(v, func(e ecs.Entity, p Pos) bool {
			if q, _ := r.ty.At(v, e); q != p {
				t.Fatalf("Each gives %+v for %v, At %+v", p, e, q)
			}
			n++
			return true
		})
		if n != len(r.ents) {
			t.Fatalf("Each visited %d entities, want %d", n, len(r.ents))
		}
	}
	if st := r.h.Stats(); st.Clamped != 0 || st.Future != 0 {
		t.Fatalf("in-range claims counted as clamped: %+v", st)
	}
}

// An entity spawned after the claimed tick is not in the view; one
// despawned since still is.
func TestViewMembershipAtTheClaimedTick(t *testing.T) {
	r := newRig(t, 4, lagcomp.Config{})
	for tk := tick.Tick(0); tk < 10; tk++ {
		r.step(tk)
	}
	gone := r.ents[1]
	r.w.Despawn(gone)
	late := r.w.Spawn()
	_ = r.pos.Set(late, Pos{X: 100})
	r.ents = append(r.ents, late)
	for tk := tick.Tick(10); tk < 20; tk++ {
		r.step(tk)
	}
	v := r.h.At(lagcomp.NewClaim(5, 0))
	if _, ok := r.ty.At(v, late); ok {
		t.Fatal("an entity spawned after the claimed tick is in the view")
	}
	if p, ok := r.ty.At(v, gone); !ok || p != posAt(1, 5) {
		t.Fatalf("a despawned entity at the claimed tick: %+v %v, want %+v", p, ok, posAt(1, 5))
	}
	if _, ok := r.ty.Present(gone); ok {
		t.Fatal("Present finds a despawned entity")
	}
	// Interpolating from its last tick: the value of that tick.
	v = r.h.At(lagcomp.NewClaim(9, 0.5))
	if p, ok := r.ty.At(v, gone); !ok || p != posAt(1, 9) {
		t.Fatalf("entity gone at the next tick: %+v %v, want its value at the claimed tick", p, ok)
	}
}

// A claim older than the history is clamped to its oldest tick, one
// newer than the newest capture to that, and both are counted.
func TestClaimsAreClamped(t *testing.T) {
	r := newRig(t, 3, lagcomp.Config{Ticks: 30})
	for tk := tick.Tick(0); tk < 100; tk++ {
		r.step(tk)
	}
	v := r.h.At(lagcomp.NewClaim(10, 0.5))
	if vt, vf := v.Tick(); vt != 70 || vf != 0 {
		t.Fatalf("a claim of tick 10 with 30 ticks held (70..99) shows tick %d + %v, want 70", vt, vf)
	}
	if p, _ := r.ty.At(v, r.ents[2]); p != posAt(2, 70) {
		t.Fatalf("clamped view: %+v, want %+v", p, posAt(2, 70))
	}
	v = r.h.At(lagcomp.NewClaim(150, 0))
	if vt, _ := v.Tick(); vt != 99 {
		t.Fatalf("a claim from the future shows tick %d, want 99", vt)
	}
	if st := r.h.Stats(); st.Clamped != 1 || st.Future != 1 || st.Views != 2 || st.Captures != 100 {
		t.Fatalf("stats %+v, want 1 clamped, 1 future, 2 views, 100 captures", st)
	}
	// A gap in the captures ends the history there.
	r.h.Capture(102)
	if vt, _ := r.h.At(lagcomp.NewClaim(99, 0)).Tick(); vt != 102 {
		t.Fatalf("after a gap (100, 101 not captured) a claim of 99 shows tick %d, want 102", vt)
	}
}

func TestTrackRefuses(t *testing.T) {
	h := lagcomp.New(ecs.New(), lagcomp.Config{})
	type withPtr struct{ P *int }
	if _, err := lagcomp.Track[withPtr](h, nil); !errors.Is(err, lagcomp.ErrNotPlainData) {
		t.Fatalf("a type with a pointer: %v, want ErrNotPlainData", err)
	}
	if _, err := lagcomp.Track[Pos](h, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := lagcomp.Track[Pos](h, nil); !errors.Is(err, lagcomp.ErrTracked) {
		t.Fatalf("tracked twice: %v, want ErrTracked", err)
	}
}

func TestNewClaimQuantizes(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want uint16
	}{{0, 0}, {-1, 0}, {0.5, 32768}, {1, 65535}, {2, 65535}, {0.25 + 1e-9, 16384}} {
		if got := lagcomp.NewClaim(3, c.f); got.Frac != c.want || got.Fraction() != float64(c.want)/65536 {
			t.Fatalf("NewClaim(3, %v) = %+v, want Frac %d", c.f, got, c.want)
		}
	}
}

func TestRecentClaims(t *testing.T) {
	r, ok := lagcomp.NewRecent(100, 88, 0.7)
	if !ok || r.Ago != 12 {
		t.Fatalf("NewRecent(100, 88, 0.7) = %+v %v", r, ok)
	}
	c := r.Claim(100)
	if c.Tick != 88 || c.Fraction() != float64(r.Frac)/256 || c.Fraction() > 0.7 || c.Fraction() < 0.7-1.0/256 {
		t.Fatalf("claim %+v (fraction %v), want tick 88 and 0.7 quantized down to 1/256", c, c.Fraction())
	}
	if _, ok := lagcomp.NewRecent(100, 101, 0); ok {
		t.Fatal("a claim from the future accepted")
	}
	if _, ok := lagcomp.NewRecent(1000, 744, 0); ok {
		t.Fatal("a claim 256 ticks back accepted")
	}
}
