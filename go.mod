module github.com/rewindgo/rewind

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/quic-go/quic-go v0.65.0
	golang.org/x/tools v0.52.0
)

require (
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
