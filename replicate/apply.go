package replicate

// The client's side of updates and mutations: parsing, validating and
// applying them to its world, and its server-to-client entity records.

import (
	"math"
	"math/bits"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// cliRecords maps server entities to client entities: one record (cliEnt)
// per replicated entity, found by either entity, kept in creation order for
// a deterministic cleanup, with the values that hold entity references.
type cliRecords struct {
	bySrv map[ecs.Entity]int32
	byIdx map[uint32]int32 // by server entity slot (mutation blocks name slots)
	byCli map[ecs.Entity]int32
	ents  []cliEnt
	free  []int32
	order []orderEntry // entity records in creation order (deterministic cleanup)
	born  uint32
	dead  int // stale entries in order
	refs  refIndex
}

// cliScratch holds one message's parsed entities and values, reused.
type cliScratch struct {
	moved   []ecs.Entity // server entities that appeared or left in this update
	items   []updItem
	vals    []updComp
	maps    []mapping
	adopt   []mapping
	mapper  srvMapper
	rmapper cliMapper
	dbuf    []byte // values rebuilt from deltas
}

type updItem struct {
	e        ecs.Entity
	spawn    bool
	once     uint64 // insertions: the components Once by rule
	first, n int
}

type updComp struct {
	id  int
	val []byte
}

// parseBlocks reads n entity blocks (entity, [spawn flag], component values)
// into c.items / c.vals, validating every value.
func (c *Client) parseBlocks(r *bin.Reader, n int, withFlag bool) {
	for i := 0; i < n && r.Err() == nil; i++ {
		it := updItem{e: readEntity(r), first: len(c.vals)}
		if withFlag {
			flags := r.Byte()
			it.spawn = flags&1 != 0
			switch {
			case flags&^(1|insertOnce) != 0:
				r.Fail(errRange)
			case flags&insertOnce != 0:
				it.once = r.Uvarint()
				if it.once == 0 || len(c.comps) < 64 && it.once>>uint(len(c.comps)) != 0 || it.once&c.onceTypes != 0 {
					r.Fail(errRange)
				}
			}
		}
		mask := r.Uvarint()
		if len(c.comps) < 64 && mask>>uint(len(c.comps)) != 0 {
			r.Fail(errRange)
		}
		for m := mask; m != 0 && r.Err() == nil; m &= m - 1 {
			id := bits.TrailingZeros64(m)
			var val []byte
			if f := c.p.comps[id].fixed; f > 0 {
				val = r.Bytes(f)
			} else {
				val = r.LenBytes(maxMessageValue)
			}
			if r.Err() != nil {
				break
			}
			if err := c.comps[id].decodeCheck(val); err != nil {
				r.Fail(err)
				break
			}
			c.vals = append(c.vals, updComp{id: id, val: val})
			it.n++
		}
		c.items = append(c.items, it)
	}
}

// parseMutations reads the bit-packed entity blocks of a mutation message
// of tick t (body: the bytes after its header) into c.items / c.vals
// (wire.go: per block, the values of delta-encoded components first,
// rebuilt from their baselines, then the absolute ones), validating every
// value. A block names its entity by slot: the client's entity of that
// server slot, unless it was spawned after t (the block is then for an
// older generation, sent before it left). It reports a miss when a delta
// names a baseline the journal does not hold for an entity the client
// has, and an error for malformed bits.
func (c *Client) parseMutations(body []byte, t tick.Tick) (miss bool, err error) {
	if len(body) == 0 {
		return false, nil // no blocks: the header alone
	}
	br := bin.NewBitReader(body)
	nc := len(c.p.comps)
	prev := int64(-1)
	if !br.ReadBool() {
		return false, errRange // no blocks, written otherwise than as nothing
	}
	for {
		idx := prev + 1 + unzigzag64(br.ReadExpGolomb(2))
		if idx < 0 || idx > math.MaxUint32 {
			br.Fail(errRange)
			break
		}
		prev = idx
		ri, have := c.byIdx[uint32(idx)]
		if have && c.ents[ri].at.After(t) {
			have = false
		}
		it := updItem{first: len(c.vals)}
		if have {
			it.e = c.ents[ri].server
		}
		mask := br.ReadBits(nc)
		abs := mask
		if dm := mask & c.deltaMask; dm != 0 && br.ReadBool() {
			abs &^= dm
			age := br.ReadExpGolomb(0) + 1
			base, base2 := t-tick.Tick(age), t-tick.Tick(age)
			pred := br.ReadBool()
			if pred {
				base2 -= tick.Tick(br.ReadExpGolomb(0) + 1)
			}
			if t.Sub(base2) >= clientWindow || t.Sub(base2) <= 0 {
				br.Fail(errRange)
			}
			for m := dm; m != 0 && br.Err() == nil; m &= m - 1 {
				id := bits.TrailingZeros64(m)
				pc := c.p.comps[id]
				var b []byte
				var e extrapolation
				if have {
					k := int(ri)*nc + id
					var ok, ok2 bool
					b, ok = c.jn.at(k, base, pc.fixed)
					if pred {
						e.older, ok2 = c.jn.at(k, base2, pc.fixed)
						e.num, e.den = int64(age), int64(base.Sub(base2))
					}
					if !ok || pred && !ok2 {
						miss, b = true, nil
					}
				}
				start := len(c.dbuf)
				var drawn bool
				if pc.draws {
					c.dbuf, drawn = readDraws(&br, b, c.dbuf)
				}
				if !drawn {
					c.dbuf = readFieldDelta(&br, pc.delta, b, e, c.dbuf)
				}
				if b != nil && br.Err() == nil {
					c.value(&br, &it, id, c.dbuf[start:])
				}
			}
		}
		for m := abs; m != 0 && br.Err() == nil; m &= m - 1 {
			id := bits.TrailingZeros64(m)
			n := c.p.comps[id].fixed
			if n == 0 {
				l := br.ReadExpGolomb(valueLenOrder)
				if l > maxMessageValue {
					br.Fail(errRange)
					break
				}
				n = int(l)
			}
			start := len(c.dbuf)
			c.dbuf = br.AppendBytes(c.dbuf, n)
			if have && br.Err() == nil {
				c.value(&br, &it, id, c.dbuf[start:])
			}
		}
		if have {
			c.items = append(c.items, it)
		}
		if !br.ReadBool() {
			break
		}
	}
	return miss, br.End()
}

// value checks one value of a mutation block and adds it to item it.
func (c *Client) value(br *bin.BitReader, it *updItem, id int, val []byte) {
	if err := c.comps[id].decodeCheck(val); err != nil {
		br.Fail(err)
		return
	}
	c.vals = append(c.vals, updComp{id: id, val: val})
	it.n++
}

func unzigzag64(z uint64) int64 { return int64(z>>1) ^ -int64(z&1) }

// key is the journal key of server entity se's component id (-1 when the
// client has no record of se: nothing is recorded).
func (c *Client) key(se ecs.Entity, id int) int {
	i, ok := c.bySrv[se]
	if !ok {
		return -1
	}
	return int(i)*len(c.p.comps) + id
}

// journal records the delta-encoded values of item it, received for tick
// t, as later deltas' baselines.
func (c *Client) journal(it updItem, t tick.Tick) {
	if c.deltaMask == 0 {
		return
	}
	i, ok := c.bySrv[it.e]
	if !ok {
		return
	}
	for _, v := range c.vals[it.first : it.first+it.n] {
		if c.deltaMask&(1<<uint(v.id)) != 0 {
			c.jn.record(int(i)*len(c.p.comps)+v.id, t, v.val)
		}
	}
}

type cliEnt struct {
	client   ecs.Entity
	server   ecs.Entity
	at       tick.Tick // the update that spawned it (mutations of older ticks are not its)
	mutTick  tick.Tick // newest mutation applied
	hasMut   bool
	histTick tick.Tick
	hist     uint64
	// vals is the first of the entity's values with references (slot+1 in
	// refIndex.vals, 0: none).
	vals  int32
	born  uint32 // creation number (matches its entry in Client.order)
	alive bool
	// once: the components the server's rules replicate Once on the
	// entity, left out of checksums (from its last insertion).
	once uint64
}

func (r *cliEnt) confirm(t tick.Tick) {
	switch {
	case r.hist == 0:
		r.histTick, r.hist = t, 1
	case t.After(r.histTick):
		d := t.Sub(r.histTick)
		if d >= 64 {
			r.hist = 1
		} else {
			r.hist = r.hist<<uint(d) | 1
		}
		r.histTick = t
	default:
		if d := r.histTick.Sub(t); d < 64 {
			r.hist |= 1 << uint(d)
		}
	}
}

// orderEntry is a record in creation order; stale when the record was
// dropped (and maybe reused) since.
type orderEntry struct {
	idx  int32
	born uint32
}

func (c *Client) record(se ecs.Entity) (*cliEnt, bool) {
	i, ok := c.bySrv[se]
	if !ok {
		return nil, false
	}
	return &c.ents[i], true
}

func (c *Client) newRecord(se, ce ecs.Entity) *cliEnt {
	var i int32
	if n := len(c.free); n > 0 {
		i = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		i = int32(len(c.ents))
		c.ents = append(c.ents, cliEnt{})
	}
	c.born++
	c.jn.clearRange(int(i)*len(c.p.comps), len(c.p.comps))
	c.ents[i] = cliEnt{client: ce, server: se, born: c.born, alive: true}
	c.bySrv[se] = i
	c.byIdx[se.Index()] = i
	c.byCli[ce] = i
	c.order = append(c.order, orderEntry{idx: i, born: c.born})
	return &c.ents[i]
}

func (c *Client) dropRecord(se ecs.Entity) {
	i, ok := c.bySrv[se]
	if !ok {
		return
	}
	r := &c.ents[i]
	c.jn.clearRange(int(i)*len(c.p.comps), len(c.p.comps))
	delete(c.byCli, r.client)
	delete(c.bySrv, se)
	if j, ok := c.byIdx[se.Index()]; ok && j == i {
		delete(c.byIdx, se.Index())
	}
	r.alive = false
	c.free = append(c.free, i)
	c.forget(r, -1)
	// Its entry in order goes stale; compact when half of them are.
	c.dead++
	if c.dead > 64 && 2*c.dead > len(c.order) {
		k := 0
		for _, o := range c.order {
			if r := &c.ents[o.idx]; r.alive && r.born == o.born {
				c.order[k] = o
				k++
			}
		}
		c.order, c.dead = c.order[:k], 0
	}
}

// applyUpdate validates a whole update, then applies it: mappings, despawns,
// removals, then spawns and inserts (all spawns first, so references between
// entities of one update resolve).
func (c *Client) applyUpdate(body []byte) error {
	r := bin.NewReader(body)
	t := tick.Tick(r.Uvarint32())
	c.maps, c.items, c.vals = c.maps[:0], c.items[:0], c.vals[:0]
	nMap := r.Count(maxEntitiesPerMessage)
	for i := 0; i < nMap && r.Err() == nil; i++ {
		c.maps = append(c.maps, mapping{server: readEntity(&r), client: readEntity(&r)})
	}
	nDesp := r.Count(maxEntitiesPerMessage)
	desp := len(c.maps)
	for i := 0; i < nDesp && r.Err() == nil; i++ {
		c.maps = append(c.maps, mapping{server: readEntity(&r)})
	}
	nRem := r.Count(maxEntitiesPerMessage)
	remItems := len(c.items)
	for i := 0; i < nRem && r.Err() == nil; i++ {
		it := updItem{e: readEntity(&r), first: len(c.vals)}
		it.n = r.Count(MaxComponents)
		for k := 0; k < it.n && r.Err() == nil; k++ {
			id := int(r.Uvarint())
			if id >= len(c.comps) {
				r.Fail(errRange)
			}
			c.vals = append(c.vals, updComp{id: id})
		}
		c.items = append(c.items, it)
	}
	insItems := len(c.items)
	nIns := r.Count(maxEntitiesPerMessage)
	c.parseBlocks(&r, nIns, true)
	c.parseResources(&r)
	if err := r.End(); err != nil {
		return malformed(err)
	}
	if c.hasUpd && !t.After(c.applied) {
		return errRange // updates are ordered; an older one is a server bug
	}

	c.adopt = c.adopt[:0]
	for _, m := range c.maps[:desp] {
		if _, taken := c.byCli[m.client]; c.w.Alive(m.client) && !taken {
			c.adopt = append(c.adopt, m)
		} else {
			c.stats.Unmatched++
		}
	}
	c.moved = c.moved[:0]
	for _, m := range c.maps[desp:] {
		if rec, ok := c.record(m.server); ok {
			if h := c.hooks.Despawn; h == nil || !h(rec.client, t) {
				_ = c.w.Despawn(rec.client)
			}
			c.dropRecord(m.server)
			c.moved = append(c.moved, m.server)
		}
	}
	for _, it := range c.items[remItems:insItems] {
		rec, ok := c.record(it.e)
		if !ok {
			continue
		}
		for _, v := range c.vals[it.first : it.first+it.n] {
			c.comps[v.id].remove(rec.client, t)
			c.forget(rec, v.id)
			c.jn.clear(c.key(it.e, v.id))
		}
		// Mutations older than this update are stale for the entity (the
		// update carries every value the server had not seen acknowledged).
		rec.mutTick, rec.hasMut = t, true
	}
	for _, it := range c.items[insItems:] {
		if !it.spawn {
			continue
		}
		if _, ok := c.record(it.e); ok {
			continue
		}
		ce := ecs.Entity(0)
		for _, m := range c.adopt {
			if m.server == it.e {
				ce = m.client
			}
		}
		if ce == 0 {
			ce = c.adoptHook(it, t)
		}
		if ce == 0 {
			ce = c.w.Spawn()
		} else {
			c.stats.Adopted++
		}
		rec := c.newRecord(it.e, ce)
		rec.mutTick, rec.hasMut, rec.at = t, true, t
		c.moved = append(c.moved, it.e)
		if h := c.hooks.Spawn; h != nil {
			h(ce, t)
		}
	}
	for _, it := range c.items[insItems:] {
		rec, ok := c.record(it.e)
		if !ok {
			continue
		}
		for _, v := range c.vals[it.first : it.first+it.n] {
			c.write(rec, v.id, t, ValueInserted, v.val)
		}
		c.journal(it, t)
		rec.once = it.once
		rec.mutTick, rec.hasMut = t, true
		rec.confirm(t)
	}
	// Values referring to entities that appeared or left: written again.
	c.rewrite(c.moved, t)
	c.applyResources(t, c.moved)
	c.applied, c.hasUpd = t, true
	c.stats.Updates++
	return nil
}

// adoptHook asks the adopt hooks of the spawn's values (ComponentHooks.Adopt)
// for a client entity to adopt: the first live one that replicates no
// server entity, or none.
func (c *Client) adoptHook(it updItem, t tick.Tick) ecs.Entity {
	for _, v := range c.vals[it.first : it.first+it.n] {
		c.mapper.refs = c.mapper.refs[:0]
		ce, ok := c.comps[v.id].adopt(t, v.val, &c.mapper)
		if !ok {
			continue
		}
		if _, taken := c.byCli[ce]; ce != 0 && c.w.Alive(ce) && !taken {
			return ce
		}
		c.stats.Unmatched++
	}
	return 0
}

// mutations handles a mutation message: held until its update has arrived,
// then applied (values newer than the entity's last), then acknowledged.
func (c *Client) mutations(ch transport.Channel, msg []byte) {
	if c.state != Connected {
		return
	}
	r := bin.NewReader(msg[1:])
	h, err := readMutationHeader(&r)
	if err != nil {
		c.stats.Malformed++
		return
	}
	t, seq, index, count := h.tick, h.seq, h.index, h.count
	if required, needs := h.required(); needs && (!c.hasUpd || required.After(c.applied)) {
		c.hold(required, ch, msg)
		return
	}
	c.items, c.vals, c.dbuf = c.items[:0], c.vals[:0], c.dbuf[:0]
	miss, err := c.parseMutations(r.Rest(), t)
	if err != nil {
		c.stats.Malformed++
		return
	}
	if miss {
		// Not acknowledged: the server resends its entities, absolute.
		c.stats.DeltaMisses++
		return
	}
	for _, it := range c.items {
		rec, ok := c.record(it.e)
		if !ok {
			continue // despawned (or hidden) since
		}
		c.journal(it, t)
		if rec.hasMut && !t.After(rec.mutTick) {
			// Older than what the entity has: not written, but still the
			// server's values at t, which a value hook (prediction) takes.
			c.stats.Stale++
			for _, v := range c.vals[it.first : it.first+it.n] {
				c.mapper.refs = c.mapper.refs[:0]
				c.comps[v.id].late(rec.client, t, v.val, &c.mapper)
			}
			continue
		}
		for _, v := range c.vals[it.first : it.first+it.n] {
			c.write(rec, v.id, t, ValueAuthoritative, v.val)
		}
		rec.mutTick, rec.hasMut = t, true
		rec.confirm(t)
	}
	c.stats.Mutations++
	c.acks.add(seq)
	tr := &c.ticks[int(t)%len(c.ticks)]
	if !tr.seen || tr.tick != t {
		*tr = tickTrack{tick: t, n: count, seen: true}
	}
	if tr.n != count || tr.have[index/64]&(1<<uint(index%64)) != 0 {
		return
	}
	tr.have[index/64] |= 1 << uint(index%64)
	tr.got++
	if tr.got == tr.n && !tr.done {
		tr.done = true
		if c.cfg.TickComplete != nil {
			c.cfg.TickComplete(t)
		}
		if c.hooks.TickComplete != nil {
			c.hooks.TickComplete(t)
		}
	}
}

// srvMapper maps server entities to client entities (an entity the client
// does not have maps to none) and records the server entities it saw.
type srvMapper struct {
	c    *Client
	refs []ecs.Entity
}

func (m *srvMapper) MapEntity(e ecs.Entity) ecs.Entity {
	m.refs = append(m.refs, e)
	if i, ok := m.c.bySrv[e]; ok {
		return m.c.ents[i].client
	}
	return 0
}

// write writes one component value, remembering values with references.
func (c *Client) write(rec *cliEnt, id int, t tick.Tick, kind ValueKind, val []byte) {
	c.mapper.refs = c.mapper.refs[:0]
	if err := c.comps[id].write(rec.client, t, kind, val, &c.mapper); err != nil {
		c.stats.Malformed++
		return
	}
	if c.comps[id].info().isMap {
		c.remember(rec, id, t, val, c.mapper.refs)
	}
}

// cliMapper maps client entities to server entities (unknown: none).
type cliMapper struct{ c *Client }

func (m *cliMapper) MapEntity(e ecs.Entity) ecs.Entity {
	if i, ok := m.c.byCli[e]; ok {
		return m.c.ents[i].server
	}
	return 0
}

func (c *Client) fromServer() ecs.EntityMapper { return &c.mapper }

func (c *Client) toServer() ecs.EntityMapper { return &c.rmapper }
