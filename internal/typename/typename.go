package typename

import "reflect"

// Of returns the stable name of t: its package path and name
// ("github.com/you/game.Position"), or t.String() for a type without a
// package path or a name (built-in, unnamed or composite types such as
// int32, []byte, [2]game.Position).
func Of(t reflect.Type) string {
	if t.PkgPath() == "" || t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}
