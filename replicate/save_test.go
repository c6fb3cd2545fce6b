package replicate_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

func TestSaveLoadState(t *testing.T) {
	tp := newProto(t)
	w := ecs.New()
	a := spawnRep(w, Position{1, 2}, 3)
	b := spawnRep(w, Position{4, 5}, 6)
	_ = ecs.StoreOf[Owner](w).Set(b, Owner{E: a})
	plain := w.Spawn() // not replicated: not saved
	_ = ecs.StoreOf[Position](w).Set(plain, Position{9, 9})
	var buf bytes.Buffer
	if err := replicate.SaveState(&buf, w, tp.p); err != nil {
		t.Fatal(err)
	}
	w2 := ecs.New()
	w2.Spawn() // ids differ from the saved ones
	m, err := replicate.LoadState(bytes.NewReader(buf.Bytes()), w2, tp.p)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || w2.Len() != 3 {
		t.Fatalf("loaded %d entities, world has %d", len(m), w2.Len())
	}
	if p, _ := ecs.StoreOf[Position](w2).Get(m[b]); p != (Position{4, 5}) {
		t.Fatalf("position %v", p)
	}
	if o, _ := ecs.StoreOf[Owner](w2).Get(m[b]); o.E != m[a] {
		t.Fatalf("reference %v, want %v", o.E, m[a])
	}
	other := newProto(t)
	_ = other.p.AddCustom("v2")
	if _, err := replicate.LoadState(bytes.NewReader(buf.Bytes()), ecs.New(), other.p); !errors.Is(err, replicate.ErrProtocolMismatch) {
		t.Fatalf("other protocol: %v", err)
	}
	bad := append([]byte(nil), buf.Bytes()...)
	bad = bad[:len(bad)-3]
	if _, err := replicate.LoadState(bytes.NewReader(bad), ecs.New(), tp.p); !errors.Is(err, replicate.ErrMalformed) {
		t.Fatalf("truncated: %v", err)
	}
}
