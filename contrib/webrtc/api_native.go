//go:build !js

package webrtc

import (
	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
)

// defaultAPI returns the API of Dial when Config.API is nil.
func defaultAPI(loopback bool) *webrtc.API {
	var se webrtc.SettingEngine
	if loopback {
		se.SetIncludeLoopbackCandidate(true)
		se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se))
}

func prepareChannel(*webrtc.DataChannel) {}
