package predict

// The per-entity choice between prediction and interpolation for one
// replicated type.

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/replicate"
)

// AttachSplit routes the replicated values of T entity by entity: for an
// entity for which interpolated(e) reports true, each value goes to buf
// (interp.Buffer.Push with its tick) and a removal to buf.Remove, and
// nothing reaches the World or the Timeline; every other entity's values
// go to comp exactly as AttachComponent routes them (prediction: a value
// of a spawn or insertion requests a rollback to its tick unless the
// history already holds it, as for a predicted spawn the server confirms).
// This is lightyear's per-entity choice: a client predicts its own ship
// and shows the others interpolated. interpolated is asked at each value
// and removal, so it must answer the same for an entity all along (decide
// from replicated data that never changes, registered before T so a spawn
// writes it first, or from the entity's owner). The game reports complete
// ticks to buf (interp.Buffer.Complete, for example from the TickComplete
// hook of ClientFrameConfig.Hooks) and removes despawned entities from it.
//
// The checksum reports of c (AttachChecksum) then count buf's entities in
// T's part: the value buf holds for the report's tick, read when the tick
// completes (see the package documentation, section "Desync detection").
func AttachSplit[T any](c *replicate.Client, comp *Component[T], buf *interp.Buffer[T], interpolated func(e ecs.Entity) bool) error {
	if err := replicate.SetHooks(c, componentHooks(comp, buf, interpolated)); err != nil {
		return err
	}
	comp.split = buf
	return nil
}
