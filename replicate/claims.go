package replicate

// Entity mapping claims (Server.MapClientEntity): a client's predicted
// entity named for a server entity, sent with that entity's spawn on the
// client.
//
// Decision: claims are indexed by server entity (a map, used for lookups
// only, never iterated), so a spawn costs one lookup however many claims
// wait, and they expire claimTTL after they were made, oldest first
// (a queue in arrival order), so claims for entities that never reach
// the client do not fill the cap (maxMappings) for good. A resync of a
// client with 4,096 waiting claims used to cost 9-31 times one without.

import (
	"time"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
)

const (
	// maxMappings caps a client's MapClientEntity claims not sent yet.
	maxMappings = 4096
	// claimTTL is how long a claim waits for its server entity to reach
	// the client.
	claimTTL = 10 * time.Second
)

// claimTable holds a client's claims not sent yet, by server entity, and
// their arrival order for expiry.
type claimTable struct {
	byServer map[ecs.Entity]claim
	queue    []claimRef // arrival order, from head; stale entries skipped
	head     int
	nextSeq  uint64
}

type claim struct {
	client ecs.Entity
	seq    uint64
}

// claimRef is a claim in arrival order: it is still waiting when the
// table's claim of server has the same seq.
type claimRef struct {
	server ecs.Entity
	seq    uint64
	at     time.Time
}

// add records that server entity se is the client's entity ce (a newer
// claim of se replaces an older one). It reports false when the table is
// full.
func (t *claimTable) add(se, ce ecs.Entity, now time.Time) bool {
	if _, ok := t.byServer[se]; !ok && len(t.byServer) >= maxMappings {
		return false
	}
	if t.byServer == nil {
		t.byServer = make(map[ecs.Entity]claim)
	}
	t.nextSeq++
	t.byServer[se] = claim{client: ce, seq: t.nextSeq}
	t.queue = append(t.queue, claimRef{server: se, seq: t.nextSeq, at: now})
	if n := len(t.queue) - t.head; n > 2*maxMappings && n > 2*len(t.byServer) {
		t.compact()
	}
	return true
}

// take removes and returns the claim of server entity se.
func (t *claimTable) take(se ecs.Entity) (ecs.Entity, bool) {
	if len(t.byServer) == 0 {
		return 0, false
	}
	cl, ok := t.byServer[se]
	if !ok {
		return 0, false
	}
	delete(t.byServer, se)
	t.release()
	return cl.client, true
}

// expire drops the claims made claimTTL or longer before now.
func (t *claimTable) expire(now time.Time) {
	for t.head < len(t.queue) && now.Sub(t.queue[t.head].at) >= claimTTL {
		r := t.queue[t.head]
		if cl, ok := t.byServer[r.server]; ok && cl.seq == r.seq {
			delete(t.byServer, r.server)
		}
		t.head++
	}
	if t.head > len(t.queue)/2 {
		t.compact()
	}
	t.release()
}

// compact keeps the queue entries of waiting claims only, from index 0.
func (t *claimTable) compact() {
	k := 0
	for _, r := range t.queue[t.head:] {
		if cl, ok := t.byServer[r.server]; ok && cl.seq == r.seq {
			t.queue[k] = r
			k++
		}
	}
	clear(t.queue[k:])
	t.queue, t.head = t.queue[:k], 0
}

// release frees the table's memory once no claim waits (a map does not
// shrink).
func (t *claimTable) release() {
	if len(t.byServer) == 0 && t.byServer != nil {
		t.byServer, t.queue, t.head = nil, nil, 0
	}
}

// bytes estimates the table's memory: map entries (key, value and the
// map's overhead per entry) and the queue.
func (t *claimTable) bytes() int {
	const perEntry = int(unsafe.Sizeof(ecs.Entity(0))+unsafe.Sizeof(claim{})) * 2
	return perEntry*len(t.byServer) + int(unsafe.Sizeof(claimRef{}))*cap(t.queue)
}
