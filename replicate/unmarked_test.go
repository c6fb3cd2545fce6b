package replicate_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// TestWarnUnmarked: entities given replicated components but not the
// Replicated marker never reach a client, silently; the server says so
// once through its logger when the first client is connected, and says
// nothing when every such entity is marked.
func TestWarnUnmarked(t *testing.T) {
	for _, forget := range []bool{false, true} {
		var logged bytes.Buffer
		tp := newProto(t)
		h := newHarness(t, tp, replicate.ServerConfig{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		spawnRep(h.sw, Position{X: 1}, 10)
		if forget {
			for range 3 {
				e := h.sw.Spawn()
				_ = ecs.Register[Position](h.sw).Set(e, Position{X: 2}) // no Replicated marker
			}
		}
		c := h.connect(nil)
		for range 6 {
			h.exchange()
		}
		if c.State() != replicate.Connected || c.Entities() != 1 {
			t.Fatalf("client %v with %d entities, want the one marked entity", c.State(), c.Entities())
		}
		n := strings.Count(logged.String(), "no Replicated marker")
		switch {
		case forget && (n != 1 || !strings.Contains(logged.String(), "entities=3") || !strings.Contains(logged.String(), "Position")):
			t.Errorf("3 unmarked entities: logged %q, want one warning naming 3 entities and Position", logged.String())
		case !forget && n != 0:
			t.Errorf("every entity marked: logged %q", logged.String())
		}
	}
}
