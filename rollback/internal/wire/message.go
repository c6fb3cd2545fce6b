package wire

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/transport"
)

// Version is the wire format version written in byte 0 of every packet.
const Version = 2

// Limits of the format. Encoding a message that exceeds one fails; decoding
// one fails with [ErrMalformed] (or [ErrTooLarge] for the packet size).
const (
	// HeaderSize is the size of the header that starts every packet.
	HeaderSize = 4
	// MaxPacketSize is the largest encoded message, header included: the
	// largest datagram a transport.PacketConn carries (1200 bytes).
	MaxPacketSize = transport.MaxPacketSize
	// MaxStatus is the largest number of PeerStatus entries of an Input message.
	MaxStatus = 16
	// MaxFrames is the largest number of frames of inputs in an Input message.
	MaxFrames = 128
	// MaxParts is the largest number of parts of a Parts message.
	MaxParts = 64
	// MaxNameLen is the longest part name of a Parts message, in bytes.
	MaxNameLen = 64
	// MaxReports is the largest number of checksum reports of an Input message.
	MaxReports = 8
	// MaxDumpSize is the largest desync dump a Dump message's Total may
	// announce, in bytes.
	MaxDumpSize = 1 << 20
)

// Kind is the type of a message, byte 1 of the header.
type Kind uint8

// The message kinds. The comment of each lists the Message fields it carries.
const (
	KindSyncRequest   Kind = 1 + iota // Nonce
	KindSyncReply                     // Nonce (echo of the request's nonce)
	KindInput                         // StartFrame, AckFrame, DisconnectRequested, Done, Status, SumAck, Reports, NumFrames, Inputs
	KindInputAck                      // AckFrame, SumAck
	KindQualityReport                 // Advantage, Ping
	KindQualityReply                  // Ping (echo of the report's Ping)
	KindPartsRequest                  // Frame
	KindParts                         // Frame, Parts
	KindKeepAlive                     // no body
	KindDump                          // Frame, Total, Offset, Data: bytes Offset.. of a desync dump of Total bytes (Total 0: none)
	KindDumpAck                       // Frame, Total, Offset: the first Offset bytes of the dump arrived
)

// String returns the name of the kind, or "Kind(n)" for an unknown one.
func (k Kind) String() string {
	switch k {
	case KindSyncRequest:
		return "SyncRequest"
	case KindSyncReply:
		return "SyncReply"
	case KindInput:
		return "Input"
	case KindInputAck:
		return "InputAck"
	case KindQualityReport:
		return "QualityReport"
	case KindQualityReply:
		return "QualityReply"
	case KindPartsRequest:
		return "PartsRequest"
	case KindParts:
		return "Parts"
	case KindKeepAlive:
		return "KeepAlive"
	case KindDump:
		return "Dump"
	case KindDumpAck:
		return "DumpAck"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// PeerStatus is what the sender of an Input message knows about one peer of
// the session.
type PeerStatus struct {
	// Disconnected reports that the sender considers the peer disconnected.
	Disconnected bool
	// LastFrame is the last frame of the peer's inputs the sender holds,
	// -1 for none. It is at least -1.
	LastFrame int32
}

// Report is the checksum of the whole state at one frame, as carried by an
// Input message until the receiver acknowledges it (SumAck).
type Report struct {
	// Frame is the frame of the state, >= 0.
	Frame int32
	// Checksum is the checksum of the state at Frame.
	Checksum uint64
}

// Part is one named checksum of a Parts message.
type Part struct {
	// Name is at most MaxNameLen bytes. After Decode it aliases the packet.
	Name []byte
	// Sum is the checksum of the part.
	Sum uint64
}

// Message is a decoded packet of any kind. Only the fields of its Kind are
// encoded (see the Kind constants); Append ignores the others and Decode
// zeroes them. Reusing one Message for Decode reuses the capacity of Status
// and Parts, so steady-state decoding does not allocate.
type Message struct {
	// Version is the format version of a decoded packet. Append ignores it
	// and always writes the constant Version.
	Version uint8
	// Kind selects the body.
	Kind Kind
	// Magic identifies the sender's session endpoint.
	Magic uint16

	// Nonce of a SyncRequest, echoed by the SyncReply.
	Nonce uint32

	// StartFrame is the frame of the first record in Inputs, >= 0.
	StartFrame int32
	// AckFrame is the last frame of the receiver's inputs the sender holds,
	// -1 if none yet.
	AckFrame int32
	// DisconnectRequested asks the receiver to end the session.
	DisconnectRequested bool
	// Done reports that the sender has confirmed its whole match (it reached
	// its end frame and everything before it is final and delivered).
	Done bool
	// PeerDone reports that the sender has received the receiver's Done.
	PeerDone bool
	// Status holds at most MaxStatus entries.
	Status []PeerStatus
	// SumAck (Input, InputAck) is the newest frame of the receiver's
	// checksum reports the sender holds, -1 if none yet. (The zero value 0
	// is a frame: set -1 when there is none.)
	SumAck int32
	// Reports (Input) holds at most MaxReports checksum reports, the sender's
	// oldest ones the receiver has not acknowledged, in frame order. After
	// Decode its capacity is reused.
	Reports []Report
	// NumFrames is the number of records in Inputs, 0..MaxFrames. Inputs is
	// empty exactly when NumFrames is 0.
	NumFrames int
	// Inputs holds NumFrames records compressed by an InputEncoder. After
	// Decode it aliases the packet.
	Inputs []byte

	// Advantage is the sender's frame advantage estimate.
	Advantage int16
	// Ping is an opaque timestamp, echoed by the QualityReply.
	Ping uint64

	// Frame of a parts message, >= 0.
	Frame int32
	// Parts holds at most MaxParts entries.
	Parts []Part

	// Total is the size of a desync dump (Dump, DumpAck), 0..MaxDumpSize.
	Total uint32
	// Offset is where Data starts in the dump (Dump: < Total unless Total
	// is 0), or how many bytes of it arrived (DumpAck: <= Total).
	Offset uint32
	// Data (Dump) is a piece of the dump: at least one byte unless Total is
	// 0, ending at most at Total. After Decode it aliases the packet.
	Data []byte
}

// Append appends the encoding of m to dst and returns the extended slice.
// It fails, returning dst unchanged, with [ErrUnknownKind] for an unknown
// Kind, [ErrMalformed] for a field out of range and [ErrTooLarge] if the
// encoding is longer than MaxPacketSize.
func (m *Message) Append(dst []byte) ([]byte, error) {
	if err := m.validate(); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, Version, byte(m.Kind), byte(m.Magic), byte(m.Magic>>8))
	switch m.Kind {
	case KindSyncRequest, KindSyncReply:
		dst = binary.LittleEndian.AppendUint32(dst, m.Nonce)
	case KindInput:
		dst = binary.AppendUvarint(dst, uint64(m.StartFrame))
		dst = binary.AppendVarint(dst, int64(m.AckFrame)-int64(m.StartFrame))
		var flags byte
		if m.DisconnectRequested {
			flags |= 1
		}
		if m.Done {
			flags |= 2
		}
		if m.PeerDone {
			flags |= 4
		}
		checks := m.SumAck != -1 || len(m.Reports) > 0
		if checks {
			flags |= 8
		}
		dst = append(dst, flags)
		dst = binary.AppendUvarint(dst, uint64(len(m.Status)))
		for _, s := range m.Status {
			d := int64(s.LastFrame) - int64(m.StartFrame)
			v := (uint64(d<<1) ^ uint64(d>>63)) << 1
			if s.Disconnected {
				v |= 1
			}
			dst = binary.AppendUvarint(dst, v)
		}
		if checks {
			dst = binary.AppendVarint(dst, int64(m.SumAck))
			dst = binary.AppendUvarint(dst, uint64(len(m.Reports)))
			for _, r := range m.Reports {
				dst = binary.AppendUvarint(dst, uint64(r.Frame))
				dst = binary.LittleEndian.AppendUint64(dst, r.Checksum)
			}
		}
		dst = binary.AppendUvarint(dst, uint64(m.NumFrames))
		dst = append(dst, m.Inputs...)
	case KindInputAck:
		dst = binary.AppendVarint(dst, int64(m.AckFrame))
		dst = binary.AppendVarint(dst, int64(m.SumAck))
	case KindQualityReport:
		dst = binary.AppendVarint(dst, int64(m.Advantage))
		dst = binary.AppendUvarint(dst, m.Ping)
	case KindQualityReply:
		dst = binary.AppendUvarint(dst, m.Ping)
	case KindPartsRequest:
		dst = binary.AppendUvarint(dst, uint64(m.Frame))
	case KindParts:
		dst = binary.AppendUvarint(dst, uint64(m.Frame))
		dst = binary.AppendUvarint(dst, uint64(len(m.Parts)))
		for _, p := range m.Parts {
			dst = binary.AppendUvarint(dst, uint64(len(p.Name)))
			dst = append(dst, p.Name...)
			dst = binary.LittleEndian.AppendUint64(dst, p.Sum)
		}
	case KindDump, KindDumpAck:
		dst = binary.AppendUvarint(dst, uint64(m.Frame))
		dst = binary.AppendUvarint(dst, uint64(m.Total))
		dst = binary.AppendUvarint(dst, uint64(m.Offset))
		if m.Kind == KindDump {
			dst = append(dst, m.Data...)
		}
	case KindKeepAlive:
	}
	if n := len(dst) - start; n > MaxPacketSize {
		return dst[:start], fmt.Errorf("%w: %v message is %d bytes, limit %d", ErrTooLarge, m.Kind, n, MaxPacketSize)
	}
	return dst, nil
}

// validate checks the fields Append encodes for m.Kind.
func (m *Message) validate() error {
	switch m.Kind {
	case KindSyncRequest, KindSyncReply, KindQualityReport, KindQualityReply, KindKeepAlive:
		return nil
	case KindInput:
		if m.StartFrame < 0 {
			return fmt.Errorf("%w: StartFrame %d < 0", ErrMalformed, m.StartFrame)
		}
		if m.AckFrame < -1 {
			return fmt.Errorf("%w: AckFrame %d < -1", ErrMalformed, m.AckFrame)
		}
		if len(m.Status) > MaxStatus {
			return fmt.Errorf("%w: %d statuses, limit %d", ErrMalformed, len(m.Status), MaxStatus)
		}
		for i, s := range m.Status {
			if s.LastFrame < -1 {
				return fmt.Errorf("%w: Status[%d].LastFrame %d < -1", ErrMalformed, i, s.LastFrame)
			}
		}
		if m.SumAck < -1 {
			return fmt.Errorf("%w: SumAck %d < -1", ErrMalformed, m.SumAck)
		}
		if len(m.Reports) > MaxReports {
			return fmt.Errorf("%w: %d reports, limit %d", ErrMalformed, len(m.Reports), MaxReports)
		}
		for i, r := range m.Reports {
			if r.Frame < 0 {
				return fmt.Errorf("%w: Reports[%d].Frame %d < 0", ErrMalformed, i, r.Frame)
			}
		}
		if m.NumFrames < 0 || m.NumFrames > MaxFrames {
			return fmt.Errorf("%w: NumFrames %d outside 0..%d", ErrMalformed, m.NumFrames, MaxFrames)
		}
		if (m.NumFrames == 0) != (len(m.Inputs) == 0) {
			return fmt.Errorf("%w: NumFrames %d with %d bytes of inputs", ErrMalformed, m.NumFrames, len(m.Inputs))
		}
		if len(m.Inputs) > MaxPacketSize {
			return fmt.Errorf("%w: %d bytes of inputs, limit %d", ErrTooLarge, len(m.Inputs), MaxPacketSize)
		}
		return nil
	case KindInputAck:
		if m.AckFrame < -1 || m.SumAck < -1 {
			return fmt.Errorf("%w: AckFrame %d or SumAck %d < -1", ErrMalformed, m.AckFrame, m.SumAck)
		}
		return nil
	case KindPartsRequest:
		if m.Frame < 0 {
			return fmt.Errorf("%w: Frame %d < 0", ErrMalformed, m.Frame)
		}
		return nil
	case KindParts:
		if m.Frame < 0 {
			return fmt.Errorf("%w: Frame %d < 0", ErrMalformed, m.Frame)
		}
		if len(m.Parts) > MaxParts {
			return fmt.Errorf("%w: %d parts, limit %d", ErrMalformed, len(m.Parts), MaxParts)
		}
		for i, p := range m.Parts {
			if len(p.Name) > MaxNameLen {
				return fmt.Errorf("%w: Parts[%d].Name is %d bytes, limit %d", ErrMalformed, i, len(p.Name), MaxNameLen)
			}
		}
		return nil
	case KindDump, KindDumpAck:
		if m.Frame < 0 || m.Total > MaxDumpSize {
			return fmt.Errorf("%w: Frame %d, Total %d", ErrMalformed, m.Frame, m.Total)
		}
		if !dumpRange(m.Kind, m.Total, m.Offset, len(m.Data)) {
			return fmt.Errorf("%w: %v Offset %d, %d bytes of data, Total %d", ErrMalformed, m.Kind, m.Offset, len(m.Data), m.Total)
		}
		return nil
	default:
		return fmt.Errorf("%w: %v", ErrUnknownKind, m.Kind)
	}
}

// dumpRange reports whether a Dump's piece (or a DumpAck's offset) fits
// its dump: a piece is non-empty and inside the dump, an empty dump has
// neither offset nor data, an ack is at most the dump's size.
func dumpRange(k Kind, total, offset uint32, n int) bool {
	if k == KindDumpAck {
		return n == 0 && offset <= total
	}
	if total == 0 {
		return offset == 0 && n == 0
	}
	return n > 0 && offset < total && uint64(offset)+uint64(n) <= uint64(total)
}

// Decode resets m and decodes the packet b into it. Inputs and part names
// alias b. Decode accepts exactly the encodings Append produces: it rejects
// unknown versions ([ErrVersion]; m.Version, m.Kind and m.Magic are still set
// from the bytes present), unknown kinds ([ErrUnknownKind]; the header fields
// are set), packets longer than MaxPacketSize ([ErrTooLarge]) and anything
// else that is not a valid encoding ([ErrMalformed]): truncated fields,
// trailing bytes, overlong or non-minimal varints, values out of range. On
// error all other fields of m are zero. Decode never panics, and allocates
// only to grow m.Status, m.Reports or m.Parts up to their limits.
func (m *Message) Decode(b []byte) error {
	m.reset()
	if len(b) == 0 {
		return errTruncated
	}
	m.Version = b[0]
	if len(b) >= 2 {
		m.Kind = Kind(b[1])
	}
	if len(b) >= HeaderSize {
		m.Magic = binary.LittleEndian.Uint16(b[2:])
	}
	if m.Version != Version {
		return ErrVersion
	}
	if len(b) < HeaderSize {
		return errTruncated
	}
	if len(b) > MaxPacketSize {
		return errPacketSize
	}
	r := reader{bin.NewReader(b[HeaderSize:])}
	switch m.Kind {
	case KindSyncRequest, KindSyncReply:
		m.Nonce = r.Uint32()
	case KindInput:
		m.decodeInput(&r)
	case KindInputAck:
		m.AckFrame = r.frame(-1, 0)
		m.SumAck = r.frame(-1, 0)
	case KindQualityReport:
		a := r.Varint()
		if a < math.MinInt16 || a > math.MaxInt16 {
			r.Fail(errAdvantage)
		}
		m.Advantage = int16(a)
		m.Ping = r.Uvarint()
	case KindQualityReply:
		m.Ping = r.Uvarint()
	case KindPartsRequest:
		m.Frame = r.uframe()
	case KindParts:
		m.decodeParts(&r)
	case KindDump, KindDumpAck:
		m.Frame = r.uframe()
		total, off := r.Uvarint(), r.Uvarint()
		if total > MaxDumpSize || off > MaxDumpSize {
			r.Fail(errDump)
			break
		}
		m.Total, m.Offset = uint32(total), uint32(off)
		if m.Kind == KindDump {
			m.Data = r.Rest()
		}
		if r.Err() == nil && !dumpRange(m.Kind, m.Total, m.Offset, len(m.Data)) {
			r.Fail(errDump)
		}
	case KindKeepAlive:
	default:
		return ErrUnknownKind
	}
	if err := r.End(); err != nil {
		v, k, g := m.Version, m.Kind, m.Magic
		m.reset()
		m.Version, m.Kind, m.Magic = v, k, g
		return malformed(err)
	}
	return nil
}

func (m *Message) decodeInput(r *reader) {
	m.StartFrame = r.uframe()
	start := int64(m.StartFrame)
	m.AckFrame = r.frame(-1, start)
	flags := r.Byte()
	if flags&^15 != 0 {
		r.Fail(errFlags)
	}
	m.DisconnectRequested = flags&1 != 0
	m.Done = flags&2 != 0
	m.PeerDone = flags&4 != 0
	n := r.Uvarint()
	if n > MaxStatus {
		r.Fail(errStatusCount)
	}
	for i := uint64(0); i < n && r.Err() == nil; i++ {
		v := r.Uvarint()
		z := v >> 1
		last := start + (int64(z>>1) ^ -int64(z&1))
		if last < -1 || last > math.MaxInt32 {
			r.Fail(errFrameRange)
		}
		m.Status = append(m.Status, PeerStatus{Disconnected: v&1 != 0, LastFrame: int32(last)})
	}
	m.SumAck = -1
	if flags&8 != 0 {
		m.SumAck = r.frame(-1, 0)
		nr := r.Uvarint()
		if nr > MaxReports {
			r.Fail(errReportCount)
		}
		for i := uint64(0); i < nr && r.Err() == nil; i++ {
			f := r.uframe()
			sum := r.Uint64()
			m.Reports = append(m.Reports, Report{Frame: f, Checksum: sum})
		}
		if m.SumAck == -1 && nr == 0 {
			r.Fail(errChecksNone)
		}
	}
	frames := r.Uvarint()
	if frames > MaxFrames {
		r.Fail(errFrameCount)
	}
	if r.Err() != nil {
		return
	}
	m.NumFrames = int(frames)
	m.Inputs = r.Rest()
	if (m.NumFrames == 0) != (len(m.Inputs) == 0) {
		r.Fail(errInputsPresent)
	}
}

func (m *Message) decodeParts(r *reader) {
	m.Frame = r.uframe()
	n := r.Uvarint()
	if n > MaxParts {
		r.Fail(errPartCount)
	}
	for i := uint64(0); i < n && r.Err() == nil; i++ {
		l := r.Uvarint()
		if l > MaxNameLen {
			r.Fail(errNameLen)
		}
		name := r.Bytes(int(l))
		sum := r.Uint64()
		m.Parts = append(m.Parts, Part{Name: name, Sum: sum})
	}
}

// reset zeroes m, keeping the capacity of Status, Reports and Parts. Old
// part names are cleared so that m does not keep earlier packets alive.
func (m *Message) reset() {
	status, reports, parts := m.Status[:0], m.Reports[:0], m.Parts
	clear(parts)
	*m = Message{Status: status, Reports: reports, Parts: parts[:0]}
}

// reader reads a message body: a [bin.Reader] (minimal varints, sticky
// first error) with the frame fields of this format.
type reader struct{ bin.Reader }

// malformed maps an error of package bin to this package's error.
func malformed(err error) error {
	switch err {
	case bin.ErrTruncated:
		return errTruncated
	case bin.ErrOverflow, bin.ErrNonMinimal:
		return errVarint
	case bin.ErrTrailing:
		return errTrailing
	}
	return err
}

// uframe reads a frame number 0..MaxInt32 encoded as a uvarint.
func (r *reader) uframe() int32 {
	v := r.Uvarint()
	if v > math.MaxInt32 {
		r.Fail(errFrameRange)
		return 0
	}
	return int32(v)
}

// frame reads a varint d and returns base+d, which must be in min..MaxInt32.
// base is in 0..MaxInt32, so the sum cannot overflow once d is checked.
func (r *reader) frame(min, base int64) int32 {
	d := r.Varint()
	if d < min-base || d > math.MaxInt32-base {
		r.Fail(errFrameRange)
		return 0
	}
	return int32(base + d)
}
