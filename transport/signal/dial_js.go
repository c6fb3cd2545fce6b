//go:build js

package signal

import "github.com/coder/websocket"

func dialOptions(ClientConfig) *websocket.DialOptions { return nil }
