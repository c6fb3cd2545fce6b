package webrtc_test

import (
	"errors"
	"net/netip"
	"testing"

	pion "github.com/pion/webrtc/v4"

	"github.com/rewindgo/rewind/contrib/webrtc"
)

// FuzzDecodeDescription: a session description relayed from a peer is
// hostile; decoding returns ErrSignal or a description of the wanted type.
func FuzzDecodeDescription(f *testing.F) {
	f.Add(`{"type":"offer","sdp":"v=0\r\n"}`, true)
	f.Add(`{"type":"answer","sdp":"v=0\r\n"}`, false)
	f.Add(`{"type":"pranswer","sdp":""}`, false)
	f.Add(`{"type":7}`, true)
	f.Fuzz(func(t *testing.T, data string, offer bool) {
		want := pion.SDPTypeAnswer
		if offer {
			want = pion.SDPTypeOffer
		}
		d, err := webrtc.DecodeDescription(data, want)
		if err != nil {
			if !errors.Is(err, webrtc.ErrSignal) {
				t.Fatalf("error %v does not match ErrSignal", err)
			}
			return
		}
		if d.Type != want || d.SDP == "" {
			t.Fatalf("decoded %+v, want type %v", d, want)
		}
	})
}

// FuzzDecodeCandidate: an ICE candidate relayed from a peer is hostile.
func FuzzDecodeCandidate(f *testing.F) {
	f.Add(`{"candidate":"candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host","sdpMid":"0","sdpMLineIndex":0}`)
	f.Add(`{"candidate":""}`)
	f.Add(`{"sdpMLineIndex":-1}`)
	f.Fuzz(func(t *testing.T, data string) {
		c, err := webrtc.DecodeCandidate(data)
		if err != nil {
			if !errors.Is(err, webrtc.ErrSignal) {
				t.Fatalf("error %v does not match ErrSignal", err)
			}
			return
		}
		if c.Candidate == "" || len(data) > 2048 {
			t.Fatalf("accepted %+v from %d bytes", c, len(data))
		}
	})
}

// TestPeerAddr: PeerAddr and its inverse agree, for every index and no
// other address.
func TestPeerAddr(t *testing.T) {
	seen := map[netip.AddrPort]bool{}
	for i := range 16 {
		a := webrtc.PeerAddr(i)
		if webrtc.PeerIndex(a) != i || seen[a] {
			t.Fatalf("index %d: %v", i, a)
		}
		seen[a] = true
	}
	for _, s := range []string{"240.0.0.1:7001", "240.0.0.0:6999", "240.0.1.1:7000", "127.0.0.1:7000", "[::1]:7000", "240.0.0.17:7016"} {
		if i := webrtc.PeerIndex(netip.MustParseAddrPort(s)); i != -1 {
			t.Errorf("%s: index %d", s, i)
		}
	}
}
