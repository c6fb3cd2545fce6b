package webrtc_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/rewindgo/rewind/contrib/webrtc"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport/signal"
)

// Two peers meet in a room of a signalling server and open a P2P rollback
// session over WebRTC data channels. Each lists the other by its synthetic
// address, webrtc.PeerAddr(index).
func Example() {
	srv := signal.NewServer(signal.ServerConfig{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/room/example?n=2"

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conns := make([]*webrtc.Conn, 2)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			c, err := webrtc.Dial(ctx, url, webrtc.Config{Loopback: true})
			if err != nil {
				panic(err)
			}
			conns[c.Index()] = c
		})
	}
	wg.Wait()
	for _, c := range conns {
		defer c.Close()
		cfg := rollback.Config{NumPlayers: c.N()}
		for h := range c.N() {
			p := rollback.Player{Handle: rollback.PlayerHandle(h), Kind: rollback.Local}
			if h != c.Index() {
				p.Kind, p.Addr = rollback.Remote, webrtc.PeerAddr(h)
			}
			cfg.Players = append(cfg.Players, p)
		}
		s, err := rollback.NewP2P(c, cfg)
		if err != nil {
			panic(err)
		}
		defer s.Close()
		fmt.Printf("peer %d at %v: local %v, remote %v\n", c.Index(), c.LocalAddr(), s.LocalHandles(), s.RemoteHandles())
	}
	// Output:
	// peer 0 at 240.0.0.1:7000: local [0], remote [1]
	// peer 1 at 240.0.0.2:7001: local [1], remote [0]
}
