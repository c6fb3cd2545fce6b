package replicate

// Figures for monitoring without allocating: the append-into forms of
// Clients and Stats, for a metrics recorder that samples every tick.

// AppendClients appends the connected (authenticated) clients to dst in
// connection order and returns the extended slice: Clients without the
// allocation when dst has the capacity.
func (s *Server) AppendClients(dst []ClientID) []ClientID {
	for _, c := range s.order {
		if c.authed {
			dst = append(dst, c.id)
		}
	}
	return dst
}

// StatsTo fills *st with a connected client's statistics, as Stats
// returns them, reusing the storage of st.MessagesOut. It returns
// ErrNotConnected (and leaves *st alone) for an unknown client.
func (s *Server) StatsTo(id ClientID, st *ConnectionStats) error {
	c := s.client(id)
	if c == nil {
		return ErrNotConnected
	}
	msgs := st.MessagesOut[:0]
	*st = c.stats
	cs := c.conn.Stats()
	st.RTT, st.PacketsLost = cs.RTT, cs.PacketsLost
	st.WirePacketsOut, st.WireBytesOut = cs.WirePacketsSent, cs.WireBytesSent
	st.WirePacketsIn, st.WireBytesIn = cs.WirePacketsReceived, cs.WireBytesReceived
	for _, mc := range c.msgOut {
		if mc.Messages > 0 {
			msgs = append(msgs, mc)
		}
	}
	st.MessagesOut = msgs
	st.Entities = c.spawned
	st.UpdateTick = c.lastUpdate
	st.RetainedBytes = c.retained(len(s.ents))
	return nil
}
