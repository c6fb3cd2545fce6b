package rollback

import (
	"fmt"
)

// PlayerHandle identifies a player: 0..NumPlayers-1 for players, NumPlayers
// and above for spectators (as registered in Config.Players).
type PlayerHandle int

// InputStatus says where an input given to an Advance request came from.
type InputStatus uint8

const (
	// Confirmed inputs were added locally or received from their player.
	Confirmed InputStatus = iota
	// Predicted inputs are the predictor's guess; a rollback replaces them
	// when the real input differs.
	Predicted
	// Disconnected marks a player who has left: the input is Config.DefaultInput.
	Disconnected
)

func (s InputStatus) String() string {
	switch s {
	case Confirmed:
		return "confirmed"
	case Predicted:
		return "predicted"
	case Disconnected:
		return "disconnected"
	}
	return fmt.Sprintf("InputStatus(%d)", uint8(s))
}

// Input is one player's input for one frame of an Advance request.
type Input struct {
	// Bytes is the input as the player added it (session-owned: valid until
	// the next call to AdvanceFrame; copy it to keep it).
	Bytes []byte
	// Status says whether it is confirmed, predicted or a disconnected
	// player's default.
	Status InputStatus
}
