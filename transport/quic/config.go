package quic

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"slices"
	"time"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
)

// ALPN is the TLS application protocol of rewind's QUIC connections. Config
// sets it in a tls.Config whose NextProtos is empty.
const ALPN = "rewind/2"

// Defaults of Config.
const (
	// DefaultHandshakeTimeout is the default Config.HandshakeTimeout.
	DefaultHandshakeTimeout = 5 * time.Second
	// DefaultMaxIncomingUniStreams is the default
	// Config.MaxIncomingUniStreams.
	DefaultMaxIncomingUniStreams = 100
	// DefaultMaxBufferedBytes is the default Config.MaxBufferedBytes:
	// 64 MiB.
	DefaultMaxBufferedBytes = 64 << 20
	// DefaultReceiveWindow is the default Config.ReceiveWindow: 1 MiB.
	DefaultReceiveWindow = 1 << 20
)

// Config configures Listen and Dial. The zero value is usable for Dial
// against a server with a certificate the system trusts; Listen needs TLS.
type Config struct {
	// TLS is the TLS configuration. Listen requires a certificate
	// (Certificates, GetCertificate or GetConfigForClient). For Dial, nil
	// means the system's root certificates and the dialed host name.
	// The config is cloned; an empty NextProtos becomes [ALPN], and
	// MinVersion is raised to TLS 1.3. SelfSigned returns a matching pair
	// for development.
	TLS *tls.Config
	// Limits bounds each conn's queues and messages. The conn's
	// MaxUnreliableSize is also bounded by what the path can carry.
	Limits transport.MessageLimits
	// HandshakeTimeout bounds the QUIC handshake, and on the server the
	// wait for the client's ordered stream. Zero means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a conn (with transport.ErrTimeout) when nothing
	// has been heard from the peer for that long. The effective value is
	// the smaller of both sides'. Zero means transport.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// KeepAlivePeriod is how often a PING is sent when there is no other
	// traffic, so that an idle but healthy conn does not time out. Zero
	// means IdleTimeout/3; negative disables keep-alives.
	KeepAlivePeriod time.Duration
	// MaxIncomingUniStreams bounds the ReliableUnordered messages the peer
	// may have in flight at once (one stream each). Zero means
	// DefaultMaxIncomingUniStreams.
	MaxIncomingUniStreams int
	// MaxBufferedBytes bounds, for a Listener, the received bytes its conns
	// hold together beyond the first 64 KiB of each: reliable messages
	// waiting for Receive or still arriving (their buffers grow with the
	// bytes that arrived, never with the length a peer announces) and
	// datagrams waiting for Receive. A conn that needs more than its
	// 64 KiB while the listener's conns hold MaxBufferedBytes is closed
	// with transport.ErrReceiveOverflow (a datagram is dropped instead).
	// Each conn is also bounded on its own by Limits (ReceiveQueueBytes;
	// UnreliableQueue datagrams). Zero means DefaultMaxBufferedBytes.
	// Dialed conns have no shared cap.
	MaxBufferedBytes int
	// ReceiveWindow is the QUIC flow-control window of a conn, stream and
	// connection alike: how many bytes the peer may send beyond what the
	// conn has read, which is what quic-go may buffer for it. It also
	// caps the throughput of one conn at ReceiveWindow per round trip.
	// Zero means DefaultReceiveWindow.
	ReceiveWindow int
	// AcceptBacklog bounds the conns a Listener holds for Accept; more are
	// closed with transport.ErrRefused. Zero means
	// transport.DefaultAcceptBacklog.
	AcceptBacklog int
	// Logger receives diagnostic messages. Nil means silent.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	c.Limits = c.Limits.WithDefaults()
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = transport.DefaultIdleTimeout
	}
	if c.KeepAlivePeriod == 0 {
		c.KeepAlivePeriod = c.IdleTimeout / 3
	}
	if c.MaxIncomingUniStreams <= 0 {
		c.MaxIncomingUniStreams = DefaultMaxIncomingUniStreams
	}
	if c.MaxBufferedBytes <= 0 {
		c.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if c.ReceiveWindow <= 0 {
		c.ReceiveWindow = DefaultReceiveWindow
	}
	if c.AcceptBacklog <= 0 {
		c.AcceptBacklog = transport.DefaultAcceptBacklog
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// quicConfig returns the quic-go configuration of one side.
func (c Config) quicConfig(server bool) *quicgo.Config {
	qc := &quicgo.Config{
		HandshakeIdleTimeout:  c.HandshakeTimeout,
		MaxIdleTimeout:        c.IdleTimeout,
		KeepAlivePeriod:       max(c.KeepAlivePeriod, 0),
		MaxIncomingStreams:    -1, // the server opens no bidirectional stream
		MaxIncomingUniStreams: int64(c.MaxIncomingUniStreams),
		EnableDatagrams:       true,
		// quic-go's defaults start at 512 KiB per stream and 768 KiB per
		// connection and grow up to 6 and 15 MiB.
		InitialStreamReceiveWindow:     uint64(min(c.ReceiveWindow, 512<<10)),
		MaxStreamReceiveWindow:         uint64(c.ReceiveWindow),
		InitialConnectionReceiveWindow: uint64(min(c.ReceiveWindow, 768<<10)),
		MaxConnectionReceiveWindow:     uint64(c.ReceiveWindow),
	}
	if server {
		qc.MaxIncomingStreams = 1 // the ordered stream
	}
	return qc
}

func serverTLS(c *tls.Config) (*tls.Config, error) {
	if c == nil {
		return nil, errors.New("quic: Config.TLS with a certificate is required to listen (see SelfSigned)")
	}
	return finishTLS(c.Clone()), nil
}

func clientTLS(c *tls.Config) *tls.Config {
	if c == nil {
		return finishTLS(&tls.Config{})
	}
	return finishTLS(c.Clone())
}

func finishTLS(c *tls.Config) *tls.Config {
	if len(c.NextProtos) == 0 {
		c.NextProtos = []string{ALPN}
	}
	c.MinVersion = max(c.MinVersion, tls.VersionTLS13)
	return c
}

// SelfSigned generates, in memory, a self-signed ECDSA P-256 certificate
// valid for hosts (DNS names or IP addresses; none means "localhost",
// "127.0.0.1" and "::1"; "localhost" brings the two loopback addresses
// with it, so dialling 127.0.0.1 works too) for 30 days, and returns a
// server config that
// presents it and a client config that trusts it and nothing else. Both
// use TLS 1.3 and ALPN. It is meant for development, tests and LAN games:
// the client config still verifies the certificate and host name.
func SelfSigned(hosts ...string) (server, client *tls.Config, err error) {
	if len(hosts) == 0 {
		hosts = []string{"localhost"}
	}
	if slices.Contains(hosts, "localhost") {
		hosts = slices.Clone(hosts)
		for _, ip := range []string{"127.0.0.1", "::1"} {
			if !slices.Contains(hosts, ip) {
				hosts = append(hosts, ip)
			}
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hosts[0], Organization: []string{"rewind development"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	server = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}},
		NextProtos:   []string{ALPN},
		MinVersion:   tls.VersionTLS13,
	}
	client = &tls.Config{
		RootCAs:    pool,
		NextProtos: []string{ALPN},
		MinVersion: tls.VersionTLS13,
	}
	return server, client, nil
}
