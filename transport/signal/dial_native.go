//go:build !js

package signal

import "github.com/coder/websocket"

func dialOptions(cfg ClientConfig) *websocket.DialOptions {
	return &websocket.DialOptions{HTTPHeader: cfg.HTTPHeader}
}
