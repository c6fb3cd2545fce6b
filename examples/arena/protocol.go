package main

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"

	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// verdict is the server's judgement of one hit-scan, decided with lag
// compensation (shooter.Server): sent to every client, so a client can
// compare it with what it predicted and show the hit as confirmed.
type verdict struct {
	Player uint64 // who scanned
	Tick   uint32 // the scan's tick
	Target uint64 // the ship aimed at (0: none)
	Hit    uint8  // 1: within range
}

// truth is the server's state digest at a tick (stateDigest), sent every
// truthEvery ticks: a client compares it with its own confirmed state at
// that tick, which is how a run shows that the processes converged.
type truth struct {
	Tick     uint32
	Digest   uint64
	Entities uint32
}

// truthEvery is the interval, in ticks, of the truth messages.
const truthEvery = 10

// protocol is the shooter's replication protocol plus the arena's two
// server messages. Server and clients build it the same way.
type protocol struct {
	*shooter.Protocol
	verdicts replicate.MessageType[verdict]
	truths   replicate.MessageType[truth]
}

func newProtocol() (*protocol, error) {
	sp, err := shooter.NewProtocol(input.Config{})
	if err != nil {
		return nil, err
	}
	p := &protocol{Protocol: sp}
	if p.verdicts, err = replicate.RegisterMessage[verdict](sp.Protocol, replicate.ServerToClient, transport.ReliableOrdered); err != nil {
		return nil, err
	}
	if p.truths, err = replicate.RegisterMessage[truth](sp.Protocol, replicate.ServerToClient, transport.ReliableOrdered); err != nil {
		return nil, err
	}
	return p, nil
}

// stateDigest hashes a state (every entity with a Body at one tick, keyed
// by server entity) in entity order: the server's from shooter.Server.State,
// a client's from its confirmed history. It sorts st.
func stateDigest(st []shooter.Keyed) uint64 {
	slices.SortFunc(st, func(a, b shooter.Keyed) int { return cmp.Compare(a.E, b.E) })
	h := fnv.New64a()
	var buf [41]byte
	for _, k := range st {
		binary.LittleEndian.PutUint64(buf[0:], uint64(k.E))
		binary.LittleEndian.PutUint32(buf[8:], uint32(k.Body.X))
		binary.LittleEndian.PutUint32(buf[12:], uint32(k.Body.Y))
		binary.LittleEndian.PutUint32(buf[16:], uint32(k.Body.VX))
		binary.LittleEndian.PutUint32(buf[20:], uint32(k.Body.VY))
		binary.LittleEndian.PutUint64(buf[24:], k.Player)
		binary.LittleEndian.PutUint32(buf[32:], k.Born)
		buf[36] = 0
		if k.Bullet {
			buf[36] = 1
		}
		h.Write(buf[:37])
	}
	return h.Sum64()
}
