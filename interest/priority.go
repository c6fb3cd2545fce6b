package interest

import (
	"math"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// Priority is client id's send priority of e by distance, for
// replicate.ServerConfig.Priority: 1 within a quarter of the client's view
// radius R of its focus, then falling as R/(4d) with the distance d, so
// an entity at the edge of the view gets every fourth change (at least
// 1/16 beyond, for entities shown by other means). An entity or client
// the grid does not know gets 1. Near things update every tick, far ones
// less often, and none starves (replicate accumulates priority until a
// send).
func (g *Grid) Priority(id replicate.ClientID, e ecs.Entity) float32 {
	i, ok := g.byID[id]
	slot := e.Index()
	if !ok || int(slot) >= len(g.ents) || g.ents[slot].e != e {
		return 1
	}
	c, en := g.clients[i], &g.ents[slot]
	d := math.Hypot(en.x-c.x, en.y-c.y)
	near := c.r / 4
	if !(d > near) || !(near > 0) {
		return 1
	}
	return float32(max(near/d, 1.0/16))
}
