package rollback

// Time sync (GGRS's time_sync): the frame advantage sampled each frame,
// its average over a window, and EventWaitRecommendation when this session
// runs ahead of its peers.

// timeSync samples frame advantages and recommends waiting when far ahead.
func (s *P2PSession) timeSync() {
	for _, e := range s.peers {
		if e.state == stateRunning {
			s.net.updateAdvantage(e, s.current)
		}
	}
	ahead := s.FramesAhead()
	if ahead >= minRecommendation && s.current-s.lastWaitRec >= recommendationInterval {
		s.lastWaitRec = s.current
		s.net.event(Event{Kind: EventWaitRecommendation, SkipFrames: ahead})
	}
}

// FramesAhead is the averaged number of frames this session runs ahead of
// the furthest-behind peer. A game loop runs slightly slower while it is
// positive (the Driver runs 10% slower) so peers stay in step.
func (s *P2PSession) FramesAhead() int {
	ahead := 0
	for _, e := range s.peers {
		if e.state == stateRunning {
			ahead = max(ahead, e.framesAhead())
		}
	}
	return ahead
}

// ChecksDeterminism reports false: a P2P session plays a match.
func (s *P2PSession) ChecksDeterminism() bool { return false }

// updateAdvantage records the time-sync sample of this frame: how far the
// peer is ahead of us (estimated from the last frame received and half the
// round trip) and how far it says we are ahead of it. Until the peer's first
// input arrives there is nothing to estimate from, and the local advantage
// stays 0 (as in GGRS): "frame -1" would make every peer look far ahead of a
// peer that is merely still in flight at the start of a match.
func (n *netcore) updateAdvantage(e *endpoint, local Frame) {
	if e.lastRecv != NullFrame {
		remote := int(e.lastRecv) + int(e.rtt.Milliseconds()*int64(n.cfg.FPS)/2000)
		e.localAdv = remote - int(local)
	}
	i := int(local) % timeSyncWindow
	if i < 0 {
		i += timeSyncWindow
	}
	e.localWindow[i] = e.localAdv
	e.remoteWindow[i] = e.remoteAdv
}
