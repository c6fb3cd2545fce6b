package replicate

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
)

// This file is the replication wire format: every byte a Server and a
// Client exchange is laid out by the append functions here and read back
// by the read functions here, or, for entity blocks, by the code named
// below. wire_test.go pins each message kind with golden bytes. Change the
// layout only together with wireVersion (a client of another version is
// rejected with code 4) and the golden bytes.
//
// # Conventions
//
// Messages travel on a transport.MessageConn, which keeps message
// boundaries, so no message carries its own length. Integers are uvarints
// (encoding/binary's unsigned LEB128), read by package internal/bin: an
// encoding longer than the minimal one is malformed, and a value read as a
// tick, sequence number or entity half must fit 32 bits. The protocol hash
// is 8 bytes little-endian. An entity is two uvarints, its index and its
// generation. A string is a uvarint length and its bytes. "n ×" repeats
// what follows n times; counts are bounded (at most the bytes left, and
// the limit given) so a hostile count cannot make a reader allocate.
//
// # Messages
//
// The first byte of every message is its kind. Client to server:
//
//	1 Hello      uvarint wire version (7); protocol hash: 8 bytes;
//	             string token (at most 1024 bytes). ReliableOrdered, first.
//	2 Acks       uvarint newest: the sequence number of the newest
//	             Mutations message acknowledged; byte n (at most 32): the
//	             messages before it covered; uvarint missing (below 1<<n):
//	             bit i set when message newest-1-i is not acknowledged.
//	             Unreliable: each acknowledgement is repeated in the Acks
//	             of the client's next three Updates that send one.
//	3 ClientMsg  uvarint message type id; the payload (the type's codec)
//	             to the end. On the type's channel.
//	4 ChecksumReport uvarint server tick; 8 bytes the checksum's sum;
//	             uvarint n (at most 129); n × (uvarint part id, 8 bytes
//	             the part's sum), ids strictly ascending: 0 the
//	             entities, 1+i component i, 65+j resource j (desync.go).
//	             ReliableOrdered.
//	5 ResyncRequest string reason (at most 256 bytes): the client asks
//	             for a full resync (resync_client.go). ReliableOrdered.
//
// Server to client:
//
//	10 Welcome   uvarint client id; uvarint server tick. ReliableOrdered.
//	12 Update    uvarint tick, then four entity sections, each a uvarint
//	             count (at most 1<<20) and that many entries:
//	               mappings   server entity, client entity (a predicted
//	                          client entity the client adopts)
//	               despawns   entity
//	               removals   entity; uvarint n (at most 64);
//	                          n × uvarint component id
//	               insertions entity; byte flags (bit 0: spawn, else the
//	                          entity exists; bit 1: a uvarint follows,
//	                          the mask of the entity's components its
//	                          rules replicate Once, below the number of
//	                          components and none Once by type: without
//	                          it, none; other bits 0); component block
//	             then the resource section: a uvarint count (at most 64)
//	             and that many entries, resource ids strictly ascending:
//	               uvarint resource id (the i-th ReplicateResource; below
//	               the number of resources); byte present (1: inserted or
//	               changed, the value follows, as a component value: the
//	               codec's size for plain data, otherwise a string of at
//	               most 1 MiB; 0: removed, nothing follows).
//	             ReliableOrdered (or in parts, kind 15).
//	15 UpdatePart uvarint total length of the Update message (its kind
//	             byte included; at least 2, at most
//	             ClientConfig.MaxUpdateBytes); uvarint offset of this part
//	             in it; the part's bytes (at least one) to the end. Parts
//	             follow each other in order, the first starting with kind
//	             12, and nothing else on the channel comes between them.
//	13 Mutations uvarint tick; uvarint tick minus the update tick it needs
//	             (the last update with an entity section entry; equal to
//	             tick: it needs none); uvarint sequence number
//	             (one per message, from 0, wrapping at 32 bits); the index
//	             and count of the message among the tick's (index <
//	             count): one byte index<<4 | count-1 when count is at most
//	             15 (so its low four bits are not 1111), else 0xff, byte
//	             index, byte count (over 15); then,
//	             unless it has no entity block, the
//	             bit-packed entity blocks (below) to the end. Unreliable,
//	             or ReliableUnordered when one entity's block is larger
//	             than a datagram.
//	14 ServerMsg uvarint message type id; uvarint update tick the client
//	             applies first (0: deliver at once, Independent types);
//	             the payload to the end. On the type's channel.
//	16 ChecksumVerdict uvarint tick of the report; uvarint n (at most
//	             129); n × uvarint id of a part that differs, strictly
//	             ascending (none: in sync). ReliableOrdered.
//	17 Resync    uvarint tick of the update that replaces the client's
//	             replicated state (resync.go); string reason (at most
//	             256 bytes); nothing more for a full resync. A partial
//	             or RNG-only one goes on: byte kind (2 partial, 3
//	             RNG-only); uvarint scope, the mask of the component ids
//	             it replaces (no bit at or above the number of
//	             components); uvarint n (at most 65536); n × (entity;
//	             byte present: 1, then uvarint the mask of the scope's
//	             components the server has on it (within the scope); 0:
//	             the server has no such entity for the client).
//	             ReliableOrdered, before that update.
//
// A component block is a uvarint mask of the component ids present (bit i:
// the i-th registered component; no bit at or above the number of
// components), then each present component's value in ascending id order:
// exactly the codec's size for plain-data components (fixed size, no
// prefix), otherwise a string of at most 1 MiB. Its writer is
// Server.appendComponents; its reader Client.parseBlocks.
//
// The entity blocks of a mutation message are bit-packed (package
// internal/bin's bit order: least significant bit first, the last byte
// padded with zero bits; one accepted form only). Each block starts with
// a 1 bit, and a 0 bit ends them. Then:
//
//   - the entity's slot (its server index), as the zig-zag form of its
//     distance from the slot after the previous block's (after -1 for the
//     first) in exponential-Golomb code of order 2: ascending slots cost
//     3 to 7 bits. No generation: the block is for the client's entity of
//     that slot unless that one was spawned by an update after the
//     message's tick (the block is then for an older one: skipped).
//   - the mask of the components present, one bit per registered
//     component.
//   - when the mask holds a delta-encoded component (a fixed-size
//     encoding and mode OnChange: component.delta), one bit, 1 if the
//     block's delta-encoded values are deltas; if so, the baseline's age
//     a-1 in exponential-Golomb code of order 0 (the baseline B is the
//     tick a before the message's), one bit, 1 if the deltas are from an
//     extrapolation, then the distance g-1 from B back to the older
//     baseline B2 in the same code (t-B2 < 96, the client's journal
//     window), and each delta-encoded present component's delta, in
//     ascending id order (delta.go): for a generator's state
//     (component.draws), one bit, 1 and then the number of draws from
//     B's state in exponential-Golomb code of order 0 (at most 64), or 0
//     and the field delta; otherwise the field delta: per field, one bit
//     for unchanged, else the zig-zagged difference from B's field, or
//     from B's field moved on by its change since B2 times a/g,
//     exponential-Golomb coded up to 24 bits, length-prefixed above.
//   - the values not sent as deltas, in ascending id order, as 8-bit
//     fields: a fixed-size value's bytes; a varying one's length in
//     exponential-Golomb code of order 4 (at most 1 MiB), then its bytes.
//
// A delta rebuilds the encoding of the value from the baseline, the value
// of that component the client received for the newest tick at or before
// the baseline's (journal.go); a client without it drops the message
// unacknowledged (ClientCounters.DeltaMisses), so the server resends its
// entities, absolute. The writers are Server.appendBody (a block's body,
// shared by clients) and writeHead; the reader Client.parseMutations.
//
// A rejection is no message: the server closes the connection with the
// reason "reject/<code> <text>" (rejectReason), codes 1 protocol mismatch,
// 2 authentication failed, 3 server full or busy, 4 wire version or
// malformed hello, 5 hello timeout. The text of code 1 is "protocol
// mismatch: client H, server H; server registers " and the server's
// outline ("component NAME, ..., resource NAME, ..., message NAME, ..."
// in registration order; left out when over 600 bytes), from which the
// client names the first difference (mismatch.go).

// Message kinds (the first byte of every message on the connection).
const (
	kindHello         = 1
	kindAcks          = 2
	kindClientMsg     = 3
	kindChecksum      = 4
	kindResyncRequest = 5
	kindWelcome       = 10
	kindUpdate        = 12
	kindMutations     = 13
	kindServerMsg     = 14
	kindUpdatePart    = 15
	kindVerdict       = 16
	kindResync        = 17
)

// Limits of the wire format.
const (
	// wireVersion 2: updates larger than updatePart travel in parts.
	// 3: updates end with the resource section.
	// 4: partial and RNG-only resyncs, resync requests.
	// 5: insertions carry the components Once by rule (checksums).
	// 6: mutation blocks carry deltas against acknowledged baselines.
	// 7: acks are unreliable, a window of the newest messages, repeated.
	wireVersion = 7
	maxTokenLen = 1024
	// maxEntitiesPerMessage bounds each section of an update.
	maxEntitiesPerMessage = 1 << 20
	// maxMessageValue bounds a length-prefixed component value.
	maxMessageValue = 1 << 20
	// partHeader bounds an update part's header: kind, total length, offset.
	partHeader = 1 + 2*binary.MaxVarintLen64
	// mutateHeaderMax bounds a mutation message's header: kind, three
	// uvarints of at most 5 bytes each, index and count (three bytes at
	// most).
	mutateHeaderMax = 1 + 3*binary.MaxVarintLen32 + 3
	// mutationCountGrowth is what patchMutationHeader adds to a message
	// (index and count escaped) when the tick has over maxShortCount.
	mutationCountGrowth = 2
	// maxShortCount is the most messages of a tick whose index and count
	// share one byte.
	maxShortCount = 15
)

// insertOnce is the insertion flag of a following mask of the entity's
// components replicated Once by rule.
const insertOnce = 2

// Reject codes, in the close reason of a refused connection.
const (
	rejectProtocol = 1
	rejectAuth     = 2
	rejectFull     = 3
	rejectVersion  = 4
	rejectTimeout  = 5
)

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

func appendEntity(dst []byte, e ecs.Entity) []byte {
	dst = binary.AppendUvarint(dst, uint64(e.Index()))
	return binary.AppendUvarint(dst, uint64(e.Generation()))
}

func readEntity(r *bin.Reader) ecs.Entity {
	idx := r.Uvarint32()
	gen := r.Uvarint32()
	return ecs.NewEntity(idx, gen)
}

// uvarintLen is the length of v's uvarint encoding.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// appendHello appends a Hello message.
func appendHello(dst []byte, hash uint64, token []byte) []byte {
	dst = append(dst, kindHello)
	dst = binary.AppendUvarint(dst, wireVersion)
	dst = binary.LittleEndian.AppendUint64(dst, hash)
	return bin.AppendBytes(dst, token)
}

// readHello reads the body of a Hello message (after its kind byte).
func readHello(body []byte) (version, hash uint64, token []byte, err error) {
	r := bin.NewReader(body)
	version = r.Uvarint()
	hash = r.Uint64()
	token = r.LenBytes(maxTokenLen)
	return version, hash, token, r.End()
}

// ackSpan is how many messages before the newest an Acks message covers.
const ackSpan = 32

// appendAcks appends an Acks message: the newest mutation message seq the
// client acknowledges, the number n (at most ackSpan) of the messages just
// before it that the message covers, and which of those the client does
// not acknowledge: a uvarint of the complement of mask's n low bits (bit i:
// message newest-1-i is acknowledged), so that a client that received
// everything sends a zero byte.
func appendAcks(dst []byte, newest uint32, n int, mask uint64) []byte {
	low := uint64(1)<<n - 1
	dst = append(dst, kindAcks)
	dst = binary.AppendUvarint(dst, uint64(newest))
	dst = append(dst, byte(n))
	return binary.AppendUvarint(dst, ^mask&low)
}

// readAcks reads the body of an Acks message, calling ack with each
// sequence number it acknowledges, newest first. It refuses a span over
// ackSpan and bits beyond it, calling ack for nothing then.
func readAcks(body []byte, ack func(seq uint32)) error {
	r := bin.NewReader(body)
	newest := r.Uvarint32()
	n := int(r.Byte())
	missing := r.Uvarint()
	if r.Err() == nil && (n > ackSpan || missing>>n != 0) {
		r.Fail(errRange)
	}
	if err := r.End(); err != nil {
		return err
	}
	ack(newest)
	for i := range n {
		if missing&(1<<i) == 0 {
			ack(newest - 1 - uint32(i))
		}
	}
	return nil
}

// readClientMsg reads the body of a ClientMsg message: the type id and
// the payload (aliasing body).
func readClientMsg(body []byte) (id int, payload []byte, err error) {
	r := bin.NewReader(body)
	id = int(r.Uvarint())
	payload = r.Rest()
	return id, payload, r.Err()
}

// readServerMsg reads the body of a ServerMsg message: the type id, the
// update tick it waits for (0: none) and the payload (aliasing body).
func readServerMsg(body []byte) (id int, required tick.Tick, payload []byte, err error) {
	r := bin.NewReader(body)
	id = int(r.Uvarint())
	required = tick.Tick(r.Uvarint32())
	payload = r.Rest()
	return id, required, payload, r.Err()
}

// appendWelcome appends a Welcome message.
func appendWelcome(dst []byte, id ClientID, t tick.Tick) []byte {
	dst = append(dst, kindWelcome)
	dst = binary.AppendUvarint(dst, uint64(id))
	return binary.AppendUvarint(dst, uint64(t))
}

// readWelcome reads the body of a Welcome message.
func readWelcome(body []byte) (ClientID, tick.Tick, error) {
	r := bin.NewReader(body)
	id := r.Uvarint()
	t := r.Uvarint32()
	return ClientID(id), tick.Tick(t), r.End()
}

// appendClientMsgHeader appends the header of a ClientMsg message; the
// payload follows.
func appendClientMsgHeader(dst []byte, id int) []byte {
	dst = append(dst, kindClientMsg)
	return binary.AppendUvarint(dst, uint64(id))
}

// appendServerMsgHeader appends the header of a ServerMsg message; the
// payload follows. required is the update tick the client applies first
// (0: none).
func appendServerMsgHeader(dst []byte, id int, required tick.Tick) []byte {
	dst = append(dst, kindServerMsg)
	dst = binary.AppendUvarint(dst, uint64(id))
	return binary.AppendUvarint(dst, uint64(required))
}

// serverMsgHeaderMax bounds the header of a ServerMsg of type id.
func serverMsgHeaderMax(id int) int { return 1 + uvarintLen(uint64(id)) + binary.MaxVarintLen32 }

// appendUpdate appends an Update message of tick t from its four sections
// (each already encoded, with its entry count).
func appendUpdate(dst []byte, t tick.Tick, nMap int, maps []byte, nDesp int, desp []byte, nRem int, rem []byte, nIns int, ins []byte) []byte {
	dst = append(dst, kindUpdate)
	dst = binary.AppendUvarint(dst, uint64(t))
	dst = binary.AppendUvarint(dst, uint64(nMap))
	dst = append(dst, maps...)
	dst = binary.AppendUvarint(dst, uint64(nDesp))
	dst = append(dst, desp...)
	dst = binary.AppendUvarint(dst, uint64(nRem))
	dst = append(dst, rem...)
	dst = binary.AppendUvarint(dst, uint64(nIns))
	return append(dst, ins...)
}

// appendResourceSection appends the resource section of an Update message
// (after the four entity sections): its entry count, then the entries.
func appendResourceSection(dst []byte, n int, sec []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(n))
	return append(dst, sec...)
}

// appendPartHeader appends the header of an UpdatePart message: the
// update's total length and the part's offset; the part's bytes follow.
func appendPartHeader(dst []byte, total, off int) []byte {
	dst = append(dst, kindUpdatePart)
	dst = binary.AppendUvarint(dst, uint64(total))
	return binary.AppendUvarint(dst, uint64(off))
}

// appendMutationHeader appends the header of a Mutations message, with
// index 0 and count 1 (patchMutationHeader sets them once the tick's
// messages are known).
func appendMutationHeader(dst []byte, t tick.Tick, delta uint32, seq uint32) []byte {
	dst = append(dst, kindMutations)
	dst = binary.AppendUvarint(dst, uint64(t))
	dst = binary.AppendUvarint(dst, uint64(delta))
	dst = binary.AppendUvarint(dst, uint64(seq))
	return append(dst, 0)
}

// patchMutationHeader sets the index and count of Mutations message b
// (appendMutationHeader's) and returns it: longer by mutationCountGrowth
// when count is over maxShortCount.
func patchMutationHeader(b []byte, index, count int) []byte {
	r := bin.NewReader(b[1:])
	r.Uvarint()
	r.Uvarint()
	r.Uvarint()
	off := len(b) - r.Len() // the header's varints are ours: minimal
	if count <= maxShortCount {
		b[off] = byte(index<<4 | (count - 1))
		return b
	}
	b = append(b, 0, 0)
	copy(b[off+3:], b[off+1:len(b)-2])
	b[off], b[off+1], b[off+2] = 0xff, byte(index), byte(count)
	return b
}

// mutationHeader is the header of a Mutations message.
type mutationHeader struct {
	tick         tick.Tick
	delta, seq   uint32
	index, count int
}

// readMutationHeader reads a Mutations message's header from r (positioned
// after the kind byte), leaving r at the first entity block.
func readMutationHeader(r *bin.Reader) (h mutationHeader, err error) {
	h.tick = tick.Tick(r.Uvarint32())
	h.delta = r.Uvarint32()
	h.seq = r.Uvarint32()
	if x := r.Byte(); x != 0xff {
		h.index, h.count = int(x>>4), int(x&15)+1
		if h.count > maxShortCount {
			r.Fail(errRange) // a count of 16 takes the long form
		}
	} else {
		h.index = int(r.Byte())
		h.count = int(r.Byte())
		if h.count <= maxShortCount {
			r.Fail(errRange) // not the short form it has
		}
	}
	if r.Err() == nil && h.index >= h.count {
		r.Fail(errRange)
	}
	return h, r.Err()
}

// required is the update tick the message needs, and whether it needs one.
func (h mutationHeader) required() (tick.Tick, bool) {
	return h.tick - tick.Tick(h.delta), h.delta != uint32(h.tick)
}

// rejectReason is the close reason of a rejection with code.
func rejectReason(code byte, text string) string {
	return fmt.Sprintf("reject/%d %s", code, text)
}

// parseReject reads a server's rejection close reason "reject/<code> text".
func parseReject(reason string) (code int, text string, ok bool) {
	var n int
	if _, err := fmt.Sscanf(reason, "reject/%d", &n); err != nil {
		return 0, "", false
	}
	if i := strings.IndexByte(reason, ' '); i >= 0 {
		text = reason[i+1:]
	}
	return n, text, true
}
