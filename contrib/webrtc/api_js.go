//go:build js

package webrtc

import "github.com/pion/webrtc/v4"

// defaultAPI returns the API of Dial when Config.API is nil. The browser
// gathers candidates its own way: Loopback does not apply.
func defaultAPI(bool) *webrtc.API { return webrtc.NewAPI() }

// prepareChannel asks the browser for ArrayBuffers, which pion converts
// without the asynchronous read a Blob needs.
func prepareChannel(dc *webrtc.DataChannel) { dc.JSValue().Set("binaryType", "arraybuffer") }
