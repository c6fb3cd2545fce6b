package rollback

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// goldenRejoinState: 3 players of 2-byte inputs at most; state of frame 700,
// rejoin at 751; player 2 disconnected at 610; records of frames 700 and
// 701 (player 2's with the disconnected bit); a 3-byte game state.
var goldenRejoinState = rejoinState{
	frame: 700, rejoin: 751, sum: 0x0102030405060708,
	status: []playerStatus{{lastFrame: 703}, {lastFrame: 702}, {disconnected: true, lastFrame: 610}},
	records: [][]byte{
		{2, 1, 0, 2, 3, 0, 0x80},
		{1, 9, 0, 0x80},
	},
	state: []byte{0xaa, 0xbb, 0xcc},
}

// version 1; frame 700 (bc05); 51; checksum; 3 players: (704<<1) 800b,
// (703<<1) fe0a, (611<<1)|1 c709; 2 records: 7 bytes, 4 bytes; state of 3.
const goldenRejoinHex = "01 bc05 33 0807060504030201 03 800b fe0a c709 02 07 02010002030080 04 01090080 03 aabbcc"

func TestRejoinStateGolden(t *testing.T) {
	want, err := hex.DecodeString(strings.ReplaceAll(goldenRejoinHex, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := goldenRejoinState.append(nil); !bytes.Equal(got, want) {
		t.Fatalf("append = %x, want %x", got, want)
	}
	st, err := decodeRejoinState(want, 3, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	if again := st.append(nil); !bytes.Equal(again, want) {
		t.Fatalf("decode then append = %x", again)
	}
	for _, c := range []struct {
		name              string
		b                 []byte
		players, maxState int
	}{
		{"4 players expected", want, 4, 100},
		{"state over the bound", want, 3, 2},
		{"trailing byte", append(bytes.Clone(want), 0), 3, 100},
		{"truncated", want[:len(want)-1], 3, 100},
		{"version 2", append([]byte{2}, want[1:]...), 3, 100},
		{"empty", nil, 3, 100},
	} {
		if _, err := decodeRejoinState(c.b, c.players, 2, c.maxState); !errors.Is(err, ErrRejoin) {
			t.Errorf("%s: err = %v, want ErrRejoin", c.name, err)
		}
	}
	// A record that is not 3 well-formed inputs, and a rejoin frame too far.
	bad := goldenRejoinState
	bad.records = [][]byte{{3, 1, 2, 3, 0, 0}}
	if _, err := decodeRejoinState(bad.append(nil), 3, 2, 100); !errors.Is(err, ErrRejoin) {
		t.Errorf("bad record: err = %v", err)
	}
	bad = goldenRejoinState
	bad.rejoin = bad.frame + queueLen
	if _, err := decodeRejoinState(bad.append(nil), 3, 2, 100); !errors.Is(err, ErrRejoin) {
		t.Errorf("rejoin %d frames after the state: err = %v", queueLen, err)
	}
}

func FuzzDecodeRejoinState(f *testing.F) {
	g, _ := hex.DecodeString(strings.ReplaceAll(goldenRejoinHex, " ", ""))
	f.Add(g)
	f.Add(append(bytes.Clone(g), 1))
	f.Add([]byte{1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeRejoinState(b, 3, 2, 1<<10)
		if err != nil {
			if !errors.Is(err, ErrRejoin) {
				t.Fatalf("error %v does not wrap ErrRejoin", err)
			}
			return
		}
		// Accepted: within the bounds, and it encodes back to the same bytes.
		if st.rejoin <= st.frame || st.rejoin-st.frame >= queueLen || len(st.records) > int(st.rejoin-st.frame) || len(st.state) > 1<<10 {
			t.Fatalf("accepted out of bounds: frame %d rejoin %d, %d records, %d state bytes", st.frame, st.rejoin, len(st.records), len(st.state))
		}
		if out := st.append(nil); !bytes.Equal(out, b) {
			t.Fatalf("re-encoded %x from %x", out, b)
		}
	})
}
