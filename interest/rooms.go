package interest

import (
	"slices"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// RoomID names a room; the game picks the numbers (a match, a zone, a
// team channel).
type RoomID uint64

// Rooms shows each client the union of the entities of the rooms it is
// in. Entities and clients join and leave rooms at any time, and each
// change costs in proportion to what it changes: a client joining a room
// of n entities costs n count updates, an entity joining a room of k
// clients costs k; nothing is recomputed per tick. Apply, once per tick
// before Server.Send, calls SetVisible only for the (client, entity)
// pairs whose answer changed since the previous Apply.
//
// Rooms calls SetVisible only for entities that are or were in one of
// its rooms, so the game's own SetVisible calls for entities in no room
// are left alone. For an entity that is in a room, the last call wins in
// replicate (a later Apply overrides the game's call only when the
// entity's room answer changes): to show such an entity for other
// reasons as well, apply Rooms into a Union and give the Union the other
// reasons. Rooms is meant for ServerConfig.HiddenByDefault: an entity a
// client is not shown through a room stays hidden.
//
// Output order depends only on the sequence of calls: lookups use maps,
// but what Apply calls comes from slices in call order. The zero Rooms is
// not usable; call NewRooms.
type Rooms struct {
	u        *Union
	rooms    map[RoomID]*room
	entRooms map[ecs.Entity][]RoomID         // the rooms of each entity, in join order
	cliRooms map[replicate.ClientID][]RoomID // the rooms of each client, in join order
}

type room struct {
	ents    []ecs.Entity // in insertion order (swap-removed)
	entPos  map[ecs.Entity]int
	clients []replicate.ClientID
	cliPos  map[replicate.ClientID]int
}

// NewRooms returns Rooms with no room: it shows nothing.
func NewRooms() *Rooms {
	return &Rooms{
		u:        NewUnion(),
		rooms:    make(map[RoomID]*room),
		entRooms: make(map[ecs.Entity][]RoomID),
		cliRooms: make(map[replicate.ClientID][]RoomID),
	}
}

func (r *Rooms) room(id RoomID) *room {
	rm := r.rooms[id]
	if rm == nil {
		rm = &room{entPos: make(map[ecs.Entity]int), cliPos: make(map[replicate.ClientID]int)}
		r.rooms[id] = rm
	}
	return rm
}

// dropIfEmpty forgets a room with neither entities nor clients.
func (r *Rooms) dropIfEmpty(id RoomID, rm *room) {
	if len(rm.ents) == 0 && len(rm.clients) == 0 {
		delete(r.rooms, id)
	}
}

// Join puts client id in room (made on first use): it is shown the
// room's entities from the next Apply. Joining a room twice is a no-op.
func (r *Rooms) Join(room RoomID, id replicate.ClientID) {
	rm := r.room(room)
	if _, ok := rm.cliPos[id]; ok {
		return
	}
	rm.cliPos[id] = len(rm.clients)
	rm.clients = append(rm.clients, id)
	r.cliRooms[id] = append(r.cliRooms[id], room)
	for _, e := range rm.ents {
		r.u.ref(id, e)
	}
}

// Leave takes client id out of room: the room's entities it sees through
// no other room are hidden from it at the next Apply.
func (r *Rooms) Leave(room RoomID, id replicate.ClientID) {
	rm := r.rooms[room]
	if rm == nil || !rm.removeClient(id) {
		return
	}
	r.cliRooms[id] = without(r.cliRooms[id], room)
	if len(r.cliRooms[id]) == 0 {
		delete(r.cliRooms, id)
	}
	for _, e := range rm.ents {
		r.u.unref(id, e)
	}
	r.dropIfEmpty(room, rm)
}

// Add puts entity e in room (made on first use): the room's clients are
// shown it from the next Apply. Adding it twice is a no-op.
func (r *Rooms) Add(room RoomID, e ecs.Entity) {
	rm := r.room(room)
	if _, ok := rm.entPos[e]; ok {
		return
	}
	rm.entPos[e] = len(rm.ents)
	rm.ents = append(rm.ents, e)
	r.entRooms[e] = append(r.entRooms[e], room)
	for _, id := range rm.clients {
		r.u.ref(id, e)
	}
}

// Remove takes entity e out of room: clients that see it through no other
// room stop seeing it at the next Apply.
func (r *Rooms) Remove(room RoomID, e ecs.Entity) {
	rm := r.rooms[room]
	if rm == nil || !rm.removeEntity(e) {
		return
	}
	r.entRooms[e] = without(r.entRooms[e], room)
	if len(r.entRooms[e]) == 0 {
		delete(r.entRooms, e)
	}
	for _, id := range rm.clients {
		r.u.unref(id, e)
	}
	r.dropIfEmpty(room, rm)
}

// RemoveEntity takes e out of every room, for example before the game
// despawns it (replicate despawns it on every client anyway; this frees
// the rooms' memory of it).
func (r *Rooms) RemoveEntity(e ecs.Entity) {
	for rs := r.entRooms[e]; len(rs) > 0; rs = r.entRooms[e] {
		r.Remove(rs[len(rs)-1], e)
	}
}

// ForgetClient takes client id out of every room without any SetVisible
// call, for a client that disconnected (replicate.ClientDisconnected).
// For a client that stays, Leave its rooms instead.
func (r *Rooms) ForgetClient(id replicate.ClientID) {
	for _, room := range r.cliRooms[id] {
		rm := r.rooms[room]
		rm.removeClient(id)
		r.dropIfEmpty(room, rm)
	}
	delete(r.cliRooms, id)
	r.u.ForgetClient(id)
}

// Visible reports whether some room of client id holds e, that is what
// the next Apply makes the Visibility show.
func (r *Rooms) Visible(id replicate.ClientID, e ecs.Entity) bool { return r.u.Visible(id, e) }

// Entities returns a copy of room's entities.
func (r *Rooms) Entities(room RoomID) []ecs.Entity {
	if rm := r.rooms[room]; rm != nil {
		return slices.Clone(rm.ents)
	}
	return nil
}

// Clients returns a copy of room's clients.
func (r *Rooms) Clients(room RoomID) []replicate.ClientID {
	if rm := r.rooms[room]; rm != nil {
		return slices.Clone(rm.clients)
	}
	return nil
}

// Apply calls v.SetVisible (a *replicate.Server, or a Union) for every
// (client, entity) pair whose answer changed since the previous Apply, in
// the order the changes were made, and for no other pair. Call it once
// per tick before Server.Send. Errors are as Union.Apply's.
func (r *Rooms) Apply(v Visibility) error { return r.u.Apply(v) }

func (rm *room) removeEntity(e ecs.Entity) bool {
	i, ok := rm.entPos[e]
	if !ok {
		return false
	}
	last := len(rm.ents) - 1
	rm.ents[i] = rm.ents[last]
	rm.entPos[rm.ents[i]] = i
	rm.ents = rm.ents[:last]
	delete(rm.entPos, e)
	return true
}

func (rm *room) removeClient(id replicate.ClientID) bool {
	i, ok := rm.cliPos[id]
	if !ok {
		return false
	}
	last := len(rm.clients) - 1
	rm.clients[i] = rm.clients[last]
	rm.cliPos[rm.clients[i]] = i
	rm.clients = rm.clients[:last]
	delete(rm.cliPos, id)
	return true
}

// without returns rs without room (order kept).
func without(rs []RoomID, room RoomID) []RoomID {
	if i := slices.Index(rs, room); i >= 0 {
		return slices.Delete(rs, i, i+1)
	}
	return rs
}
