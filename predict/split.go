package predict

// The per-entity choice between prediction and interpolation for one
// replicated type.

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// AttachSplit routes the replicated values of T entity by entity: for an
// entity for which interpolated(e) reports true, each value goes to buf
// (Interpolated.Push with its tick) and a removal to buf.Remove, and
// nothing reaches the World or the Timeline; every other entity's values
// go to comp exactly as AttachComponent routes them (prediction). This is
// lightyear's per-entity choice: a client predicts its own ship and shows
// the others interpolated. interpolated is asked at each value, so it
// must answer the same for an entity all along (decide from replicated
// data that never changes, registered before T so a spawn writes it
// first, or from the entity's owner). The game reports complete ticks to
// buf (Interpolated.Complete, for example from the TickComplete hook of
// ClientFrameConfig.Hooks) and removes despawned entities from it.
func AttachSplit[T any](c *replicate.Client, comp *Component[T], buf *Interpolated[T], interpolated func(e ecs.Entity) bool) error {
	tl := comp.tl
	return replicate.SetHooks(c, replicate.ComponentHooks[T]{
		Value: func(e ecs.Entity, t tick.Tick, v T, kind replicate.ValueKind) bool {
			if interpolated(e) {
				buf.Push(e, t, v)
				return true
			}
			var err error
			switch kind {
			case replicate.ValueRemapped:
				err = comp.Insert(e, t, v)
			case replicate.ValueInserted:
				if err = comp.Authoritative(e, t, v); err == nil {
					tl.Request(t)
				}
			default:
				err = comp.Authoritative(e, t, v)
			}
			if err != nil {
				tl.stats.Refused++
			}
			return true
		},
		Remove: func(e ecs.Entity, t tick.Tick) bool {
			if interpolated(e) {
				buf.Remove(e)
				return true
			}
			if err := comp.AuthoritativeRemove(e, t); err != nil {
				tl.stats.Refused++
			} else {
				tl.Request(t)
			}
			return true
		},
	})
}
