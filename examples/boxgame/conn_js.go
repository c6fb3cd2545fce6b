//go:build js

package main

import (
	"context"
	"errors"

	"github.com/rewindgo/rewind/transport"
)

// listenUDP: a browser cannot open UDP sockets; it plays over WebRTC.
func listenUDP(context.Context, int) (transport.PacketConn, error) {
	return nil, errors.New("a browser has no UDP: play over WebRTC (?signal=ws://HOST:PORT/room/NAME, or the page's own room)")
}

// refused: the browser does not say why a WebSocket failed.
func refused(error) bool { return false }
