//go:build js

package websocket

import (
	"net/netip"

	"github.com/coder/websocket"
)

// dialOptions under GOOS=js: the browser dials, and does not tell the
// addresses.
func dialOptions(cfg Config) (*websocket.DialOptions, func() (local, remote netip.AddrPort)) {
	return &websocket.DialOptions{Subprotocols: []string{Subprotocol}},
		func() (netip.AddrPort, netip.AddrPort) { return netip.AddrPort{}, netip.AddrPort{} }
}
