// Package typename gives a Go type the stable name under which rewind knows
// it everywhere: ecs type infos, snapshot checksum parts, replication
// protocol components and messages (and so the protocol hash).
package typename
