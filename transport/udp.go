package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// UDPConn is a PacketConn over a UDP socket from the standard library.
//
// A background goroutine reads datagrams from the socket into a bounded ring
// of reusable buffers, so Receive never blocks and steady-state traffic
// allocates nothing. Send writes straight to the socket: it does not wait for
// the peer, only (in rare cases of a full kernel send buffer) for the kernel
// to accept the datagram.
//
// Addresses are normalised: a peer reached over IPv4 is reported as an IPv4
// netip.AddrPort even on a dual-stack socket, so one peer always has one map
// key.
type UDPConn struct {
	conn     *net.UDPConn
	local    netip.AddrPort
	log      *slog.Logger
	closed   atomic.Bool
	closedCh chan struct{}
	done     chan struct{} // closed when the reader goroutine exits
	once     sync.Once

	sent, sentBytes, sendErrs, oversize atomic.Uint64

	mu         sync.Mutex
	q          rxQueue
	rxOversize uint64
	stopCtx    func() bool // unregisters the context.AfterFunc
}

var _ PacketConn = (*UDPConn)(nil)

// ListenUDP opens a UDP socket on addr ("host:port"; "127.0.0.1:0" picks a
// free loopback port, ":0" a free port on every interface) and starts its
// reader goroutine. The conn is closed, and the goroutine stopped, when ctx
// is cancelled or Close is called.
func ListenUDP(ctx context.Context, addr string, cfg UDPConfig) (*UDPConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	pc, err := lc.ListenPacket(ctx, "udp", addr)
	if err != nil {
		// A *net.OpError already reads "listen udp ADDR: ...".
		return nil, fmt.Errorf("transport: %w", err)
	}
	uc, ok := pc.(*net.UDPConn)
	if !ok { // cannot happen for "udp"
		pc.Close()
		return nil, fmt.Errorf("transport: listen udp %s: unexpected %T", addr, pc)
	}
	ua, _ := uc.LocalAddr().(*net.UDPAddr)
	c := &UDPConn{
		conn:     uc,
		local:    unmap(ua.AddrPort()),
		log:      cfg.Logger,
		closedCh: make(chan struct{}),
		done:     make(chan struct{}),
		q:        newRxQueue(cfg.ReceiveQueue),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	go c.readLoop()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	c.mu.Lock()
	c.stopCtx = stop
	c.mu.Unlock()
	return c, nil
}

func (c *UDPConn) readLoop() {
	defer close(c.done)
	buf := make([]byte, MaxPacketSize+1) // one spare byte detects oversize datagrams
	for {
		n, from, err := c.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if c.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			// For example ICMP port-unreachable reported as a read error on
			// some platforms: the socket is still usable.
			c.log.Debug("transport: udp read", "local", c.local, "err", err)
			continue
		}
		c.mu.Lock()
		if n > MaxPacketSize {
			c.rxOversize++
		} else {
			c.q.push(unmap(from), buf[:n])
		}
		c.mu.Unlock()
	}
}

// Send implements PacketConn.
func (c *UDPConn) Send(to netip.AddrPort, payload []byte) error {
	switch {
	case len(payload) > MaxPacketSize:
		c.oversize.Add(1)
		return ErrTooLarge
	case c.closed.Load():
		c.sendErrs.Add(1)
		return ErrClosed
	case !to.IsValid():
		c.sendErrs.Add(1)
		return ErrInvalidAddr
	}
	if _, err := c.conn.WriteToUDPAddrPort(payload, to); err != nil {
		c.sendErrs.Add(1)
		if errors.Is(err, net.ErrClosed) {
			return ErrClosed
		}
		return err
	}
	c.sent.Add(1)
	c.sentBytes.Add(uint64(len(payload)))
	return nil
}

// Receive implements PacketConn.
func (c *UDPConn) Receive() (from netip.AddrPort, payload []byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return netip.AddrPort{}, nil, false
	}
	return c.q.pop()
}

// WaitReceive blocks until a datagram is waiting in the receive queue (it
// returns nil; the datagram is then read with Receive), the context is done
// (it returns ctx.Err()) or the conn is closed (it returns ErrClosed).
func (c *UDPConn) WaitReceive(ctx context.Context) error {
	return msgq.Wait(ctx, c.q.notify, c.closedCh, func() (bool, error) {
		if c.closed.Load() {
			return false, ErrClosed
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.q.len() > 0, nil
	})
}

// LocalAddr implements PacketConn. For a socket bound to an unspecified
// address (":0") it is the unspecified address with the bound port.
func (c *UDPConn) LocalAddr() netip.AddrPort { return c.local }

// Stats implements PacketConn.
func (c *UDPConn) Stats() Stats {
	st := Stats{
		PacketsSent:     c.sent.Load(),
		BytesSent:       c.sentBytes.Load(),
		SendErrors:      c.sendErrs.Load(),
		DroppedOversize: c.oversize.Load(),
	}
	c.mu.Lock()
	c.q.addStats(&st)
	st.DroppedOversize += c.rxOversize
	c.mu.Unlock()
	return st
}

// Close implements PacketConn. It closes the socket and waits for the reader
// goroutine to exit.
func (c *UDPConn) Close() error {
	var err error
	c.once.Do(func() {
		c.closed.Store(true)
		close(c.closedCh)
		c.mu.Lock()
		stop := c.stopCtx
		c.mu.Unlock()
		if stop != nil {
			stop()
		}
		err = c.conn.Close()
		<-c.done
		c.mu.Lock()
		c.q.clear()
		c.mu.Unlock()
	})
	return err
}
