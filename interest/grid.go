package interest

import (
	"math"
	"slices"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// Grid keeps visibility from positions, in 2D (a 3D game gives x and z):
// the game moves entities (Move) and each client's focus point (SetFocus)
// every tick, and Apply shows each client the entities near its focus.
//
// The rule, for a client with focus f and radius R (GridConfig.Radius or
// SetRadius) and the grid's Margin M, and an entity at distance d from f
// at Apply:
//
//   - d <= R: visible;
//   - d > R + M: hidden;
//   - R < d <= R + M: as it was (hidden if the client never saw it).
//
// So an entity wandering around the radius edge, or along a cell border,
// flips only when it moves by more than M. Cells are an index and never
// decide anything. NaN coordinates count as infinitely far.
//
// Cost: Move is O(1) (an entity changing cells moves between two cell
// lists); Apply, per client, scans the cells overlapping the square of
// side 2(R + M) around its focus, the entities in them and the entities
// it sees. It is proportional to the entities near clients, not to
// entities × clients, and allocates nothing once the lists have grown.
// Memory: cells stay allocated once an entity entered them; per client a
// bit per entity slot (ecs.Entity.Index).
//
// Apply calls SetVisible only for changes, in an order that depends only
// on the sequence of calls: hides owed by Remove first, then clients in
// the order they were added, for each the cells of its square row by row
// (entities in each cell's list order), then its shown list. The zero
// Grid is not usable; call NewGrid.
type Grid struct {
	cfg     GridConfig
	inv     float64   // 1 / CellSize
	ents    []gridEnt // by ecs.Entity.Index
	cells   []gridCell
	cellAt  map[uint64]int32 // cell key -> index in cells (looked up, never iterated)
	clients []*gridClient    // in the order they were added
	byID    map[replicate.ClientID]int
	hides   []gridHide // hides owed by Remove, told at the next Apply
	v       Visibility // during Apply
	err     error      // Apply's first error
}

type gridEnt struct {
	e       ecs.Entity // 0: slot not tracked
	x, y    float64
	cx, cy  int32 // cell coordinates
	cell    int32 // index in Grid.cells
	cellPos int32 // index in the cell's list
}

type gridCell struct {
	cx, cy int32
	items  []cellItem // the entities in the cell, with their positions
}

// cellItem is an entity in a cell's list, its position copied there so a
// scan reads the list alone.
type cellItem struct {
	x, y float64
	e    ecs.Entity
}

type gridClient struct {
	id    replicate.ClientID
	x, y  float64
	r     float64
	bits  []uint64     // shown, by entity slot
	shown []ecs.Entity // shown entities (with stale ones until the next sweep)
	gone  bool
}

type gridHide struct {
	c *gridClient
	e ecs.Entity
}

// NewGrid returns an empty Grid configured by cfg.
func NewGrid(cfg GridConfig) (*Grid, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Grid{cfg: cfg, inv: 1 / cfg.CellSize, cellAt: make(map[uint64]int32), byID: make(map[replicate.ClientID]int)}, nil
}

// Config returns the grid's configuration with its defaults filled in.
func (g *Grid) Config() GridConfig { return g.cfg }

// Move sets entity e's position (tracking it from its first Move). An
// entity whose slot held another entity (despawned without Remove) is
// taken for a new one: the old one is removed first.
func (g *Grid) Move(e ecs.Entity, x, y float64) {
	x, y = finite(x), finite(y)
	slot := e.Index()
	if int(slot) >= len(g.ents) {
		g.ents = append(g.ents, make([]gridEnt, int(slot)+1-len(g.ents))...)
	}
	en := &g.ents[slot]
	if en.e != e && en.e != 0 {
		g.Remove(en.e)
	}
	en.x, en.y = x, y
	cx, cy := g.cellOf(x), g.cellOf(y)
	if en.e == e {
		if cx == en.cx && cy == en.cy {
			it := &g.cells[en.cell].items[en.cellPos]
			it.x, it.y = x, y
			return
		}
		g.unlink(en)
	}
	en.e, en.cx, en.cy = e, cx, cy
	ci := g.cell(cx, cy)
	c := &g.cells[ci]
	en.cell, en.cellPos = ci, int32(len(c.items))
	c.items = append(c.items, cellItem{x, y, e})
}

// Remove stops tracking e: clients that see it are told to hide it at the
// next Apply. Call it before despawning an entity, or for one that should
// no longer be shown by position. An entity removed and moved back in
// between two Applies is hidden and shown again (a despawn and a spawn
// on the client).
func (g *Grid) Remove(e ecs.Entity) {
	slot := e.Index()
	if int(slot) >= len(g.ents) || g.ents[slot].e != e {
		return
	}
	en := &g.ents[slot]
	g.unlink(en)
	*en = gridEnt{}
	w, bit := slot/64, uint64(1)<<(slot%64)
	for _, c := range g.clients {
		if int(w) < len(c.bits) && c.bits[w]&bit != 0 {
			c.bits[w] &^= bit
			g.hides = append(g.hides, gridHide{c, e})
		}
	}
}

// Position returns e's position and whether the grid tracks e.
func (g *Grid) Position(e ecs.Entity) (x, y float64, ok bool) {
	slot := e.Index()
	if int(slot) >= len(g.ents) || g.ents[slot].e != e {
		return 0, 0, false
	}
	return g.ents[slot].x, g.ents[slot].y, true
}

// SetFocus sets client id's focus point (adding the client, with radius
// GridConfig.Radius, on first use).
func (g *Grid) SetFocus(id replicate.ClientID, x, y float64) {
	c := g.client(id)
	c.x, c.y = finite(x), finite(y)
}

// SetRadius sets client id's view radius R (adding the client, with focus
// (0, 0), on first use). A negative or NaN radius sees nothing.
func (g *Grid) SetRadius(id replicate.ClientID, r float64) {
	if !(r >= 0) {
		r = math.Inf(-1)
	}
	g.client(id).r = r
}

// ForgetClient drops client id without any SetVisible call, for a client
// that disconnected. A client that stays but should stop seeing by
// position: give it a negative radius and Apply.
func (g *Grid) ForgetClient(id replicate.ClientID) {
	i, ok := g.byID[id]
	if !ok {
		return
	}
	g.clients[i].gone = true
	g.clients = slices.Delete(g.clients, i, i+1)
	delete(g.byID, id)
	for j := i; j < len(g.clients); j++ {
		g.byID[g.clients[j].id] = j
	}
}

// Visible reports whether the last Apply left e shown to client id.
func (g *Grid) Visible(id replicate.ClientID, e ecs.Entity) bool {
	i, ok := g.byID[id]
	if !ok {
		return false
	}
	slot := e.Index()
	return int(slot) < len(g.ents) && g.ents[slot].e == e && g.clients[i].bit(slot)
}

// Apply decides every client's visibility from the current positions and
// focus points by the rule above, and calls v.SetVisible (a
// *replicate.Server, or a Union) for the entities whose answer changed
// since the previous Apply, and for no other. Call it once per tick,
// after the game's Moves and SetFocus calls and before Server.Send. An
// error of v does not stop it; Apply returns the first (replicate's
// ErrNotConnected means the client left: call ForgetClient).
func (g *Grid) Apply(v Visibility) error {
	g.v, g.err = v, nil
	for _, h := range g.hides {
		if !h.c.gone {
			g.tell(h.c.id, h.e, false)
		}
	}
	clear(g.hides)
	g.hides = g.hides[:0]
	for _, c := range g.clients {
		g.applyClient(c)
	}
	err := g.err
	g.v, g.err = nil, nil
	return err
}

func (g *Grid) tell(id replicate.ClientID, e ecs.Entity, vis bool) {
	if err := g.v.SetVisible(id, e, vis); err != nil && g.err == nil {
		g.err = applyError(id, e, vis, err)
	}
}

// applyClient scans the cells around c's focus, showing what came within
// R and hiding what went beyond R + M, then sweeps c's shown list for
// entities that left the square (beyond R + M too) or the grid.
func (g *Grid) applyClient(c *gridClient) {
	if n := len(g.ents); len(c.bits) < (n+63)/64 {
		c.bits = append(c.bits, make([]uint64, (n+63)/64-len(c.bits))...)
	}
	in, out, reach := c.thresholds(g.cfg.Margin)
	if reach >= 0 {
		x0, x1 := g.cellOf(c.x-reach), g.cellOf(c.x+reach)
		y0, y1 := g.cellOf(c.y-reach), g.cellOf(c.y+reach)
		if float64(x1-x0+1)*float64(y1-y0+1) <= float64(len(g.cells)) {
			for cy := y0; ; cy++ {
				for cx := x0; ; cx++ {
					if ci, ok := g.cellAt[cellKey(cx, cy)]; ok {
						g.scan(c, ci, in, out)
					}
					if cx == x1 {
						break
					}
				}
				if cy == y1 {
					break
				}
			}
		} else {
			// The square spans more cells than exist: walk the cells.
			for ci := range g.cells {
				if cl := &g.cells[ci]; cl.cx >= x0 && cl.cx <= x1 && cl.cy >= y0 && cl.cy <= y1 {
					g.scan(c, int32(ci), in, out)
				}
			}
		}
	}
	// Sweep. A kept entry's bit is cleared until the end of the sweep, so
	// a second entry of the same entity (removed and moved back in before
	// this Apply) is dropped as well.
	k := 0
	for _, e := range c.shown {
		slot := e.Index()
		en := &g.ents[slot]
		if en.e != e || !c.bit(slot) {
			continue // removed (hidden by Remove), hidden by the scan, or a duplicate
		}
		c.bits[slot/64] &^= 1 << (slot % 64)
		if !(dist2(en.x-c.x, en.y-c.y) <= out) {
			g.tell(c.id, e, false)
			continue
		}
		c.shown[k] = e
		k++
	}
	for _, e := range c.shown[:k] {
		c.bits[e.Index()/64] |= 1 << (e.Index() % 64)
	}
	clear(c.shown[k:])
	c.shown = c.shown[:k]
}

// scan applies the rule to the entities of cell ci for client c.
func (g *Grid) scan(c *gridClient, ci int32, in, out float64) {
	for _, it := range g.cells[ci].items {
		d := dist2(it.x-c.x, it.y-c.y)
		slot := it.e.Index()
		w, bit := slot/64, uint64(1)<<(slot%64)
		switch shown := c.bits[w]&bit != 0; {
		case !shown && d <= in:
			c.bits[w] |= bit
			c.shown = append(c.shown, it.e)
			g.tell(c.id, it.e, true)
		case shown && !(d <= out):
			c.bits[w] &^= bit
			g.tell(c.id, it.e, false)
		}
	}
}

// thresholds returns c's squared radius, squared radius plus margin, and
// radius plus margin (all negative for a client that sees nothing).
func (c *gridClient) thresholds(margin float64) (in, out, reach float64) {
	if c.r < 0 {
		return -1, -1, -1
	}
	reach = c.r + margin
	return c.r * c.r, reach * reach, reach
}

// dist2 is dx² + dy², rounded after each operation (no fused
// multiply-add, so the same inputs give the same answer on every
// platform).
func dist2(dx, dy float64) float64 { return float64(dx*dx) + float64(dy*dy) }

func (c *gridClient) bit(slot uint32) bool {
	w := int(slot / 64)
	return w < len(c.bits) && c.bits[w]&(1<<(slot%64)) != 0
}

func (g *Grid) client(id replicate.ClientID) *gridClient {
	if i, ok := g.byID[id]; ok {
		return g.clients[i]
	}
	c := &gridClient{id: id, r: g.cfg.Radius}
	g.byID[id] = len(g.clients)
	g.clients = append(g.clients, c)
	return c
}

// cellOf is the cell coordinate of v, clamped to int32. It multiplies by
// the inverse cell size, which may round differently from a division at a
// border; cells only index, and a multiplication by a positive constant
// is monotonic, so the square around a focus still holds the cells of
// every entity within it.
func (g *Grid) cellOf(v float64) int32 {
	f := math.Floor(v * g.inv)
	switch {
	case f <= math.MinInt32:
		return math.MinInt32
	case f >= math.MaxInt32:
		return math.MaxInt32
	}
	return int32(f)
}

func cellKey(cx, cy int32) uint64 { return uint64(uint32(cx))<<32 | uint64(uint32(cy)) }

// cell returns the index of cell (cx, cy), made on first use.
func (g *Grid) cell(cx, cy int32) int32 {
	k := cellKey(cx, cy)
	if ci, ok := g.cellAt[k]; ok {
		return ci
	}
	ci := int32(len(g.cells))
	g.cells = append(g.cells, gridCell{cx: cx, cy: cy})
	g.cellAt[k] = ci
	return ci
}

// unlink takes en out of its cell's list (swap-remove).
func (g *Grid) unlink(en *gridEnt) {
	c := &g.cells[en.cell]
	last := len(c.items) - 1
	moved := c.items[last]
	c.items[en.cellPos] = moved
	g.ents[moved.e.Index()].cellPos = en.cellPos
	c.items = c.items[:last]
}

// finite maps NaN to +Inf (infinitely far); other values are kept.
func finite(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}
