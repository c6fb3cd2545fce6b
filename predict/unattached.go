package predict

// Forgetting AttachComponent (or AttachSplit, AttachResource) fails
// silently: the type is predicted, but the server's values never reach
// its history, so it is never corrected and drifts from the server. The
// Timeline cannot tell that from a type that is predicted on the client
// alone, so it says it once, through Config.Logger (silent by default),
// when replication first completes a tick.

// attachment is implemented by the predicted types.
type attachment interface {
	// attachName returns the type's name and whether replication was
	// routed to it.
	attachName() (string, bool)
}

func (c *Component[T]) attachName() (string, bool) { return c.ts.Name, c.attached }
func (r *Resource[T]) attachName() (string, bool)  { return r.ts.Name, r.attached }

// warnUnattached logs, once, the predicted types no replication was routed
// to.
func (tl *Timeline) warnUnattached() {
	if tl.attachChecked {
		return
	}
	tl.attachChecked = true
	var names []string
	for _, h := range tl.types {
		if a, ok := h.(attachment); ok {
			if name, attached := a.attachName(); !attached {
				names = append(names, name)
			}
		}
	}
	if len(names) > 0 {
		tl.cfg.Logger.Warn("predict: predicted types that replication does not reach (no AttachComponent, AttachSplit or AttachResource): "+
			"the server's values never correct them (fine only for state predicted on the client alone)", "types", names)
	}
}
