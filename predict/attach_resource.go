package predict

// The glue between a replicated resource and a predicted one.

import (
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// AttachResource routes the replicated values and removals of resource T
// (replicate.SetResourceReceiveHook) to res, so none is written straight
// into the predicted resource: a value for tick t is
// res.Authoritative(t, v), a removal res.AuthoritativeRemove(t), compared
// with the prediction once t is complete (a resource travels in the update
// of its tick, so its tick completes like any other). This is how the
// world's RNG (rng.Rand, replicated with replicate.ReplicateResource and
// registered with RegisterResource) is predicted: a client draws what the
// server draws, and a rollback restores the generator with the rest of
// the state. Values the Timeline refuses (more than the window ahead,
// older than the last resync) are dropped and counted in Stats.Refused.
func AttachResource[T any](c *replicate.Client, res *Resource[T]) error {
	tl := res.tl
	res.attached = true
	return replicate.SetResourceReceiveHook(c, func(t tick.Tick, v T, present bool) bool {
		var err error
		if present {
			err = res.Authoritative(t, v)
		} else {
			err = res.AuthoritativeRemove(t)
		}
		if err != nil {
			tl.stats.Refused++
		}
		return true
	})
}
