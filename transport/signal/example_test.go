package signal_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rewindgo/rewind/transport/signal"
)

// Two peers meet in room "duel" of a signalling server mounted on a mux,
// and the first sends the second an offer.
func Example() {
	mux := http.NewServeMux()
	srv := signal.NewServer(signal.ServerConfig{})
	mux.Handle("/room/", srv)
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/room/duel?n=2"

	ctx := context.Background()
	a, err := signal.Join(ctx, url, signal.ClientConfig{})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := signal.Join(ctx, url, signal.ClientConfig{})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	fmt.Println("a is peer", a.Index(), "of", a.N(), "; b is peer", b.Index())

	ready, _ := a.Receive(ctx)
	fmt.Println("a:", ready.Type)
	_ = a.Send(ctx, signal.Message{Type: signal.TypeOffer, To: b.Index(), Data: "v=0 ..."})
	ready, _ = b.Receive(ctx)
	offer, _ := b.Receive(ctx)
	fmt.Println("b:", ready.Type, "then", offer.Type, "from", offer.From)
	// Output:
	// a is peer 0 of 2 ; b is peer 1
	// a: ready
	// b: ready then offer from 0
}
