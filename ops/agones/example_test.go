package agones_test

import (
	"context"
	"fmt"

	"github.com/rewindgo/rewind/ops/agones"
	"github.com/rewindgo/rewind/ops/agones/agonestest"
)

// match is a game that ends as soon as it is allocated (a real one
// admits players then, and ends when the match is over).
type match struct{ done chan struct{} }

func (m *match) Allocated(_ context.Context, gs agones.GameServer) error {
	fmt.Println("allocated:", gs.ObjectMeta.Name, "- accepting players")
	close(m.done)
	return nil
}
func (m *match) Done() <-chan struct{} { return m.done }
func (m *match) Drain(context.Context) error {
	fmt.Println("draining: the match is over")
	return nil
}

// A dedicated server's lifecycle against the fake SDK server. In a pod,
// agones.New(agones.Config{}) talks to the sidecar on
// localhost:$AGONES_SDK_HTTP_PORT, and ctx comes from
// signal.NotifyContext(ctx, syscall.SIGTERM).
func ExampleRun() {
	fake := agonestest.New("arena-x7k2p")
	sdk := agones.New(agones.Config{Client: fake.Client()})
	go func() {
		// The Agones controller allocates the server once it is Ready.
		for fake.GameServer().Status.State != agones.StateReady {
			<-fake.Changed()
		}
		fake.SetState(agones.StateAllocated)
	}()
	err := agones.Run(context.Background(), agones.RunConfig{SDK: sdk, Labels: map[string]string{"mode": "arena"}}, &match{done: make(chan struct{})})
	fmt.Println("run:", err, "- state", fake.GameServer().Status.State)
	fmt.Println(fake.Paths())
	// Output:
	// allocated: arena-x7k2p - accepting players
	// draining: the match is over
	// run: <nil> - state Shutdown
	// [PUT /metadata/label POST /ready GET /watch/gameserver POST /shutdown]
}
