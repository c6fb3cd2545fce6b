package rollback_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/rollback"
)

// replayErr plays data through a stub game to its end and returns the
// error that stopped it (nil when it played to the end).
func replayErr(t *testing.T, data []byte) error {
	r, err := rollback.NewReplay(bytes.NewReader(data))
	if err != nil {
		return err
	}
	g := newStubGame(t)
	for {
		reqs, err := r.AdvanceFrame()
		if errors.Is(err, rollback.ErrReplayEnded) {
			return nil
		}
		if err != nil {
			return err
		}
		g.run(reqs, r)
	}
}

// TestReplayRefusesDamage: a recording with one bit flipped anywhere (one
// bit of every byte, the bit moving with the byte) is refused with
// ErrRecording: by its integrity check (ErrRecordingDamaged, naming the
// block), or by the structure the flip broke before the check is reached.
// Not one is replayed, nor reported as a mismatch of the game. Before
// recordings had a CRC per block, most such flips replayed with every
// checksum matching.
func TestReplayRefusesDamage(t *testing.T) {
	data, _ := recordMatch(t)
	if err := replayErr(t, data); err != nil {
		t.Fatalf("the intact recording: %v", err)
	}
	damaged := 0
	for i := range data {
		b := bytes.Clone(data)
		b[i] ^= 1 << (i % 8)
		err := replayErr(t, b)
		switch {
		case errors.Is(err, rollback.ErrRecordingDamaged):
			damaged++
		case errors.Is(err, rollback.ErrRecording):
		default:
			t.Errorf("bit %d of byte %d flipped: %v, want ErrRecording", i%8, i, err)
		}
	}
	t.Logf("%d single-bit flips refused, %d of them by the CRC", len(data), damaged)
	if damaged < len(data)/2 {
		t.Errorf("only %d of %d flips caught by the CRC", damaged, len(data))
	}

	// A flip inside an inputs block's payload names that block.
	header, blocks := splitRecording(t, data)
	at := len(header)
	for _, bl := range blocks[:3] {
		at += len(bl.data)
	}
	b := bytes.Clone(data)
	b[at-6] ^= 0x10 // in the last bytes of the third block, before its CRC
	err := replayErr(t, b)
	if !errors.Is(err, rollback.ErrRecordingDamaged) || !strings.Contains(err.Error(), "block") || !strings.Contains(err.Error(), "fails its CRC-32C check") {
		t.Errorf("flip in a block: %v", err)
	}
}

// TestReplayReadsVersion1: a recording of the format before CRCs (version
// 1: the same without them) still plays and verifies its checksums.
func TestReplayReadsVersion1(t *testing.T) {
	data, p0 := recordMatch(t)
	header, blocks := splitRecording(t, data)
	v1 := bytes.Clone(header[:len(header)-4])
	v1[4] = 1
	for _, bl := range blocks {
		v1 = append(v1, bl.data[:len(bl.data)-4]...)
	}
	if got := replayAll(t, v1, p0); got != replayAll(t, data, p0) || got == 0 {
		t.Errorf("version 1 verified %d checksums, version 2 %d", got, replayAll(t, data, p0))
	}
}
