package rollback

// The rejoin state: what the host of a rejoin sends the rejoining peer in
// State pieces (p2p_rejoin.go), and its decoder, which treats the bytes as
// hostile.
//
//	byte    version (1)
//	uvarint Frame F (the state's frame)
//	uvarint R - F (R: the frame from which the rejoining players' inputs count), 1..queueLen-1
//	uint64  checksum of the state at F, little endian
//	byte    number of players
//	per player: uvarint (last frame + 1)<<1 | disconnected (the host's view)
//	uvarint number of records, at most R - F: the full records (every
//	        player, disconnected bit set where the input is the default)
//	        of frames F, F+1, ...
//	per record: uvarint length, the record
//	uvarint length of the game state, the game state (StateSource's bytes)

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/rewindgo/rewind/internal/bin"
)

const rejoinStateVersion = 1

// rejoinState is the decoded rejoin state.
type rejoinState struct {
	frame, rejoin Frame
	sum           uint64
	status        []playerStatus // disconnected and lastFrame only
	records       [][]byte       // frames frame, frame+1, ...
	state         []byte
}

var errRejoinState = errors.New("field out of range")

func (r *rejoinState) append(dst []byte) []byte {
	dst = append(dst, rejoinStateVersion)
	dst = binary.AppendUvarint(dst, uint64(r.frame))
	dst = binary.AppendUvarint(dst, uint64(r.rejoin-r.frame))
	dst = binary.LittleEndian.AppendUint64(dst, r.sum)
	dst = append(dst, byte(len(r.status)))
	for _, st := range r.status {
		v := uint64(st.lastFrame+1) << 1
		if st.disconnected {
			v |= 1
		}
		dst = binary.AppendUvarint(dst, v)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.records)))
	for _, rec := range r.records {
		dst = bin.AppendBytes(dst, rec)
	}
	return bin.AppendBytes(dst, r.state)
}

// decodeRejoinState decodes b for a session of players players with inputs
// of at most maxInput bytes and states of at most maxState bytes. The
// records and the state alias b. Errors wrap ErrRejoin.
func decodeRejoinState(b []byte, players, maxInput, maxState int) (rejoinState, error) {
	var r rejoinState
	rd := bin.NewReader(b)
	if v := rd.Byte(); rd.Err() == nil && v != rejoinStateVersion {
		return r, fmt.Errorf("%w: rejoin state version %d, want %d", ErrRejoin, v, rejoinStateVersion)
	}
	f := rd.Uvarint()
	d := rd.Uvarint()
	if rd.Err() == nil && (f > math.MaxInt32-2*queueLen || d < 1 || d >= queueLen) {
		rd.Fail(errRejoinState)
	}
	r.frame, r.rejoin = Frame(f), Frame(f+d)
	r.sum = rd.Uint64()
	if n := rd.Byte(); rd.Err() == nil && int(n) != players {
		return r, fmt.Errorf("%w: rejoin state of %d players, want %d", ErrRejoin, n, players)
	}
	for i := 0; i < players && rd.Err() == nil; i++ {
		v := rd.Uvarint()
		if v>>1 > math.MaxInt32 {
			rd.Fail(errRejoinState)
		}
		r.status = append(r.status, playerStatus{disconnected: v&1 != 0, lastFrame: Frame(v>>1) - 1})
	}
	n := rd.Count(int(d))
	maxRec := players * (1 + maxInput)
	for i := 0; i < n && rd.Err() == nil; i++ {
		rec := rd.LenBytes(maxRec)
		if rd.Err() == nil && !splitRecord(rec, players, maxInput, nil) {
			rd.Fail(errRejoinState)
		}
		r.records = append(r.records, rec)
	}
	r.state = rd.LenBytes(maxState)
	if err := rd.End(); err != nil {
		return rejoinState{}, fmt.Errorf("%w: malformed rejoin state: %w", ErrRejoin, err)
	}
	return r, nil
}
