package replicate

import "github.com/rewindgo/rewind/ecs"

// warnUnmarked logs once, at the first send phase with an authenticated
// client, how many entities hold replicated components without the
// Replicated marker: they are not replicated, which is easy to miss
// (nothing fails; the client just never sees them). The warning goes to
// ServerConfig.Logger, silent by default.
func (s *Server) warnUnmarked() {
	if s.unmarkedChecked {
		return
	}
	authed := false
	for _, c := range s.order {
		authed = authed || (c.authed && !c.gone)
	}
	if !authed {
		return
	}
	s.unmarkedChecked = true
	unmarked := map[ecs.Entity]bool{}
	var first ecs.Entity
	var firstType string
	for _, bc := range s.comps {
		ents, _ := bc.column()
		for _, e := range ents {
			if s.rep.Has(e) || unmarked[e] {
				continue
			}
			if len(unmarked) == 0 {
				first, firstType = e, bc.info().name
			}
			unmarked[e] = true
		}
	}
	if len(unmarked) > 0 {
		s.log.Warn("replicate: entities with replicated components but no Replicated marker are not replicated (set replicate.Replicated on them)",
			"entities", len(unmarked), "example", first, "component", firstType)
	}
}
