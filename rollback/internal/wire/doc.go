// Package wire is the binary wire format of rollback sessions: the messages
// peers exchange and the compression of the inputs they carry.
//
// Everything that reads network bytes treats them as hostile: [Message.Decode]
// and [InputDecoder] return errors instead of panicking, validate every field,
// and bound the memory and work a packet can cause. Decoding accepts exactly
// the bytes encoding produces (varints must be minimal), so a decoded message
// encodes back to the same bytes.
//
// # Integers
//
// Unless stated otherwise integers are varints as in encoding/binary: uvarint
// for values that cannot be negative, and zigzag varint (binary.AppendVarint)
// for signed values. A varint must be minimally encoded (no trailing 0x00
// continuation group) and at most 10 bytes long: the rule of internal/bin,
// which every rewind wire format shares. Fixed-size integers are
// little-endian.
//
// # Header
//
// Every packet starts with 4 bytes:
//
//	byte 0     Version (2)
//	byte 1     Kind
//	bytes 2-3  magic of the sender, uint16 little-endian
//
// A packet is at most [MaxPacketSize] (1200) bytes, header included.
//
// # Bodies
//
// The body follows the header and must end exactly at the end of the packet
// (except for Input, whose inputs are the rest of the packet).
//
//	SyncRequest     Nonce: 4 bytes
//	SyncReply       Nonce: 4 bytes, echoing the request
//	Input           uvarint StartFrame
//	                varint  AckFrame - StartFrame
//	                byte    flags: bit 0 DisconnectRequested, bit 1 Done, bit 2 PeerDone,
//	                        bit 3 Checks, others 0
//	                uvarint number of statuses, at most MaxStatus (16)
//	                per status: uvarint zigzag(LastFrame - StartFrame)<<1 | disconnected
//	                only with Checks (set exactly when SumAck != -1 or there are reports;
//	                without it SumAck is -1 and there are no reports):
//	                  varint  SumAck
//	                  uvarint number of checksum reports, at most MaxReports (8)
//	                  per report: uvarint Frame; Checksum: 8 bytes
//	                uvarint NumFrames, at most MaxFrames (128)
//	                the compressed inputs: all remaining bytes
//	InputAck        varint  AckFrame; varint SumAck
//	QualityReport   varint  Advantage (an int16); uvarint Ping
//	QualityReply    uvarint Ping, echoing the report
//	PartsRequest    uvarint Frame
//	Parts           uvarint Frame; uvarint number of parts, at most MaxParts (64);
//	                per part: uvarint name length (at most MaxNameLen, 64),
//	                the name, Sum: 8 bytes
//	KeepAlive       empty
//	Dump, State     uvarint Frame; uvarint Total (at most MaxDumpSize); uvarint Offset;
//	                the piece: all remaining bytes (none exactly when Total is 0)
//	DumpAck,        uvarint Frame; uvarint Total; uvarint Offset (bytes held, at most Total)
//	StateAck
//	RejoinRequest   empty
//	RejoinNotice    byte Player (below MaxStatus); uvarint Frame; uvarint Frame - StartFrame
//	RejoinNoticeAck byte Player; uvarint Frame
//
// The rejoin kinds (12-16) were added within version 2: builds without
// them count them as malformed, so every peer of a match that allows
// rejoining needs them.
//
// Differences are computed in int64, and zigzag(x) = uint64(x<<1) ^ uint64(x>>63).
// Frames are in 0..MaxInt32 (StartFrame, Frame, a report's Frame), or
// -1..MaxInt32 where -1 means "none yet" (AckFrame, LastFrame, SumAck).
//
// Version 2 replaced version 1's ChecksumReport message (kind 7, sent once
// and lost with its datagram) by the reports and SumAck of Input and
// InputAck: a peer repeats each checksum report in its Input messages until
// the receiver's SumAck covers it, and the Done and PeerDone flags let peers
// finish a match together. The kinds after it moved down by one. The compressed inputs are empty
// exactly when NumFrames is 0. With 1200 bytes per packet not every
// combination of limits fits: 64 parts leave room for names of about 9
// bytes, 64-byte names for about 16 parts.
//
// # Input compression
//
// A record is the byte string of one frame of inputs, at most a limit the
// session chooses; its length may change between frames. The records of
// consecutive frames are first delta-encoded against a base record, the
// record of the frame before the first (empty if the receiver has none).
// For each record r with predecessor p (the base for the first record) the
// delta stream holds
//
//	uvarint len(r) ^ len(p)
//	len(r) bytes r[i] ^ p'[i], p' being p zero-padded or truncated to len(r)
//
// An unchanged record thus becomes len(r)+1 zero bytes. The whole delta
// stream is then run-length encoded as a sequence of tokens, each starting
// with a uvarint h:
//
//	h&1 == 0  a run of h>>1 zero bytes (h>>1 >= 1)
//	h&1 == 1  h>>1 literal bytes follow (h>>1 >= 1)
//
// The encoder writes every run of two or more zero bytes as a run token and
// everything between them as one literal token, and a decoder accepts that
// form only (a run of one zero, two runs or two literals in a row, or two
// zeros in a literal or at its edge next to a run are refused), so the
// accepted bytes of given records are exactly the encoder's, as every
// varint is minimal. Eight frames of an unchanged
// 2-byte input, against a base equal to that input, compress to a single
// byte (a run of 24 zeros: 0x30).
//
// A decoder told to expect n records of at most maxRecord bytes rejects
// records longer than maxRecord, runs and literals longer than the
// n*(maxRecord+10) bytes of delta stream those records can use, and bytes
// left over after the n-th record, so a packet cannot make it do more work
// or allocate more than those limits allow.
package wire
