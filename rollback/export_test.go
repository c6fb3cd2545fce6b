package rollback

import "bytes"

// ReencodeRecording reads recording b block by block, as a ReplaySession
// does (without playing it), and writes what it read again with the
// recorder's encoders: the header, then every block in the order read. It
// returns the bytes read (a recording ends at its end marker) and their
// re-encoding; ok is false when the reader refused b, or when b is a
// version 1 recording, which the recorder no longer writes.
//
// The recording format has one encoding per block (minimal varints, the
// input codec's one token form), but not per match: where the recorder
// cuts input blocks and places checksum blocks depends on when frames
// were confirmed, and a reader accepts any such order. So the round trip
// keeps the blocks read, and re-encodes each.
func ReencodeRecording(b []byte) (read, again []byte, ok bool) {
	s, err := NewReplay(bytes.NewReader(b))
	if err != nil || s.version != recordVersion {
		return nil, nil, false
	}
	var out bytes.Buffer
	cfg := &resolved{Config: Config{NumPlayers: s.info.NumPlayers, MaxInputSize: s.info.MaxInputSize,
		FPS: s.info.FPS, RecordChecksumInterval: s.info.ChecksumInterval,
		RecordMeta: s.info.Meta, DefaultInput: s.info.DefaultInput}}
	rec, err := newRecorder(&out, cfg)
	if err != nil {
		return nil, nil, false
	}
	for !s.ended {
		start := s.r.off
		nLens, nSums := len(s.lens), len(s.sums)
		if err := s.readBlock(); err != nil {
			return nil, nil, false
		}
		switch b[start] {
		case blockInputs:
			off := 0
			for _, l := range s.lens[:nLens] {
				off += l
			}
			rec.first = s.next + Frame(nLens)
			for _, l := range s.lens[nLens:] {
				rec.pending = append(rec.pending, s.records[off:off+l]...)
				rec.lens = append(rec.lens, l)
				off += l
			}
			rec.flushInputs()
		case blockChecksum:
			fs := s.sums[nSums]
			rec.checksum(fs.frame, fs.sum, fs.parts)
		case blockEnd:
			rec.next = s.total
			if err := rec.close(s.total); err != nil {
				return nil, nil, false
			}
		}
	}
	return b[:s.r.off], out.Bytes(), true
}

// SampleRecording returns a version 2 recording of frames frames of
// players players (one input byte each, player 1 disconnected from frame
// 40), with a checksum (and a part) every 30 frames, as the recorder
// writes it: a seed for fuzzing.
func SampleRecording(players, frames int) []byte {
	var out bytes.Buffer
	cfg := &resolved{Config: Config{NumPlayers: players, MaxInputSize: 2, FPS: 60,
		RecordChecksumInterval: 30, RecordMeta: []byte("meta"), DefaultInput: []byte{0}}}
	rec, err := newRecorder(&out, cfg)
	if err != nil {
		panic(err)
	}
	for f := range Frame(frames) {
		if f%30 == 0 {
			rec.checksum(f, uint64(f)*0x9e3779b97f4a7c15, []Part{{Name: "pos", Sum: uint64(f)}})
		}
		if len(rec.lens) == 0 {
			rec.first = f
		}
		for h := range players {
			rec.pending = appendRecordInput(rec.pending, []byte{byte(int(f) / 7 * (h + 1))}, h == 1 && f >= 40)
		}
		rec.lens = append(rec.lens, players*2)
		rec.next = f + 1
		if len(rec.lens) == recordBlock {
			rec.flushInputs()
		}
	}
	if err := rec.close(Frame(frames)); err != nil {
		panic(err)
	}
	return out.Bytes()
}
