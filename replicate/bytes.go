package replicate

// Where the bytes go: a connection's message bytes by what they carry.

// ByteCounts are the message bytes of one direction of a connection, by
// what the messages carry (the first byte of each, its kind; wire.go).
type ByteCounts struct {
	// Updates: the reliable structure updates, whole or in parts (server
	// to client).
	Updates uint64
	// Mutations: the unreliable value messages (server to client).
	Mutations uint64
	// Acks: the acknowledgements of mutation messages (client to server).
	Acks uint64
	// Messages: the game's typed messages, both ways (predict's inputs,
	// forwarded inputs and input reports among them).
	Messages uint64
	// Checksums: checksum reports (client to server) and verdicts (server
	// to client).
	Checksums uint64
	// Resyncs: resyncs (server to client) and resync requests (client to
	// server).
	Resyncs uint64
	// Control: hello and welcome, and anything else.
	Control uint64
}

func (b *ByteCounts) add(kind byte, n int) {
	v := uint64(n)
	switch kind {
	case kindUpdate, kindUpdatePart:
		b.Updates += v
	case kindMutations:
		b.Mutations += v
	case kindAcks:
		b.Acks += v
	case kindClientMsg, kindServerMsg:
		b.Messages += v
	case kindChecksum, kindVerdict:
		b.Checksums += v
	case kindResync, kindResyncRequest:
		b.Resyncs += v
	default:
		b.Control += v
	}
}

// MessageCount counts the messages of one type sent on a connection.
type MessageCount struct {
	// Name is the message type's name (its Go type).
	Name string
	// Messages and Bytes count the messages and their bytes, headers
	// included.
	Messages, Bytes uint64
}
