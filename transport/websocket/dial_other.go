//go:build !js

package websocket

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"

	"github.com/coder/websocket"
)

// dialOptions returns the options of websocket.Dial and a function that
// tells the TCP addresses once dialed (zero with Config.HTTPClient, whose
// dialer is the caller's).
func dialOptions(cfg Config) (*websocket.DialOptions, func() (local, remote netip.AddrPort)) {
	opts := &websocket.DialOptions{
		Subprotocols:    []string{Subprotocol},
		HTTPHeader:      cfg.Header,
		HTTPClient:      cfg.HTTPClient,
		CompressionMode: websocket.CompressionDisabled,
	}
	if cfg.HTTPClient != nil {
		return opts, func() (netip.AddrPort, netip.AddrPort) { return netip.AddrPort{}, netip.AddrPort{} }
	}
	var (
		mu            sync.Mutex
		local, remote netip.AddrPort
	)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			local, remote = tcpAddrPort(c.LocalAddr()), tcpAddrPort(c.RemoteAddr())
			mu.Unlock()
		}
		return c, err
	}
	opts.HTTPClient = &http.Client{Transport: tr}
	return opts, func() (netip.AddrPort, netip.AddrPort) {
		mu.Lock()
		defer mu.Unlock()
		return local, remote
	}
}

func tcpAddrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}
