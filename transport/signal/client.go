package signal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/coder/websocket"
)

// ClientConfig configures Join. The zero value is usable.
type ClientConfig struct {
	// HTTPHeader is sent with the WebSocket handshake (native builds
	// only; a browser sends its own). Default: none.
	HTTPHeader http.Header
	// Logger receives debug messages. Default: silent.
	Logger *slog.Logger
}

// Client is one peer's connection to a room. Send may be called from
// several goroutines; Receive from one at a time.
type Client struct {
	conn     *websocket.Conn
	index, n int
	log      *slog.Logger
}

// Join connects to the room at url (ws://HOST:PORT/room/NAME?n=N, or
// wss://...) and waits for the server's welcome. The connection lives
// until Close, or until ctx is done while Join is still waiting.
func Join(ctx context.Context, url string, cfg ClientConfig) (*Client, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c, resp, err := websocket.Dial(ctx, url, dialOptions(cfg))
	if err != nil {
		if resp != nil {
			// The server's refusal says why in the body (at most 1 KiB
			// kept by websocket.Dial).
			var why []byte
			if resp.Body != nil {
				why, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
			}
			switch {
			case resp.StatusCode == http.StatusConflict && bytes.Contains(why, []byte(msgRoomFull)):
				return nil, fmt.Errorf("signal: join %s: %w", url, ErrRoomFull)
			case resp.StatusCode == http.StatusConflict:
				return nil, fmt.Errorf("signal: join %s: %w", url, ErrRoomSize)
			case resp.StatusCode == http.StatusBadRequest:
				return nil, fmt.Errorf("signal: join %s: %w", url, ErrBadRoom)
			}
		}
		return nil, fmt.Errorf("signal: join %s: %w", url, err)
	}
	c.SetReadLimit(MaxMessageSize)
	cl := &Client{conn: c, log: log}
	m, err := cl.Receive(ctx)
	if err != nil {
		c.CloseNow()
		return nil, err
	}
	if m.Type != TypeWelcome || m.N < 2 || m.Index >= m.N {
		c.CloseNow()
		return nil, fmt.Errorf("%w: expected a welcome, got %q (index %d of %d)", ErrMalformed, m.Type, m.Index, m.N)
	}
	cl.index, cl.n = m.Index, m.N
	log.Debug("signal: joined", "url", url, "index", m.Index, "n", m.N)
	return cl, nil
}

// Index is this peer's index in the room: 0 for the first to join.
func (c *Client) Index() int { return c.index }

// N is the room's size.
func (c *Client) N() int { return c.n }

// Send sends m to the server (to relay it to peer m.To).
func (c *Client) Send(ctx context.Context, m Message) error {
	b, err := Encode(m)
	if err != nil {
		return err
	}
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		return c.wrap(err)
	}
	return nil
}

// Receive waits for the next message from the server. A message that does
// not decode is skipped (and logged). It returns an error matching
// ErrClosed once the connection is closed.
func (c *Client) Receive(ctx context.Context) (Message, error) {
	for {
		_, b, err := c.conn.Read(ctx)
		if err != nil {
			return Message{}, c.wrap(err)
		}
		m, err := Decode(b)
		if err != nil {
			c.log.Debug("signal: dropped a message from the server", "err", err)
			continue
		}
		return m, nil
	}
}

// wrap marks a read or write error: the connection is unusable after it.
func (c *Client) wrap(err error) error { return fmt.Errorf("%w: %w", ErrClosed, err) }

// Close leaves the room.
func (c *Client) Close() error {
	// An error here only says the server closed first or the close
	// handshake did not finish: the peer has left either way.
	_ = c.conn.Close(websocket.StatusNormalClosure, "")
	return nil
}
