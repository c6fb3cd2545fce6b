//go:build !js

package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/rewindgo/rewind/transport"
)

// listenUDP opens the UDP socket of a --players or --spectate match.
func listenUDP(ctx context.Context, port int) (transport.PacketConn, error) {
	return transport.ListenUDP(ctx, fmt.Sprintf(":%d", port), transport.UDPConfig{})
}

// refused reports whether err says that nothing listens at the signalling
// server's address (yet).
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
