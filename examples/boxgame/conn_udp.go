//go:build !js

package main

import (
	"context"
	"fmt"

	"github.com/rewindgo/rewind/transport"
)

// listenUDP opens the UDP socket of a --players or --spectate match.
func listenUDP(ctx context.Context, port int) (transport.PacketConn, error) {
	return transport.ListenUDP(ctx, fmt.Sprintf(":%d", port), transport.UDPConfig{})
}
