package predict_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

type (
	attachedPos  struct{ X int64 }
	forgottenVel struct{ V int64 }
)

// TestWarnUnattached: a predicted type that replication never reaches
// (AttachComponent forgotten) is never corrected, silently; the Timeline
// says so once through its logger when replication completes its first
// tick, naming that type and not the attached one.
func TestWarnUnattached(t *testing.T) {
	var logged bytes.Buffer
	w := ecs.New()
	p := replicate.NewProtocol()
	_, _ = replicate.Component[attachedPos](p, replicate.WithOwnRule())
	_, _ = replicate.Component[forgottenVel](p, replicate.WithOwnRule())
	client, err := replicate.NewClient(replicate.ClientConfig{World: w, Protocol: p})
	if err != nil {
		t.Fatal(err)
	}
	tl := predict.New(w, 0, predict.Config{Window: 8, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	pos, _ := predict.Register[attachedPos](tl)
	_, _ = predict.Register[forgottenVel](tl) // AttachComponent forgotten
	if err := predict.AttachComponent(client, pos); err != nil {
		t.Fatal(err)
	}
	for tk := range 3 {
		_ = tl.Complete(tick.Tick(tk + 1))
	}
	s := logged.String()
	if strings.Count(s, "level=WARN") != 1 || !strings.Contains(s, "forgottenVel") || strings.Contains(s, "attachedPos") {
		t.Errorf("logged %q, want one warning naming forgottenVel only", s)
	}
}
