package websocket

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/rewindgo/rewind/transport"
)

// Dial connects to the listener at url ("ws://host:port/path", or
// "wss://" over TLS; "http://" and "https://" work too), says hello and
// waits for the welcome (Config.HandshakeTimeout). ctx bounds the dial
// only; the conn lives until it is closed by either side or times out.
// A listener that refuses the conn (accept backlog full, too many
// connections in progress) makes Dial fail with an error matching
// transport.ErrRefused. It works under GOOS=js GOARCH=wasm, where the
// browser's WebSocket dials.
func Dial(ctx context.Context, url string, cfg Config) (*Conn, error) {
	cfg = cfg.withDefaults()
	opts, addrs := dialOptions(cfg)
	ws, resp, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
			return nil, fmt.Errorf("websocket: dial %s: %w: %v", url, transport.ErrRefused, err)
		}
		return nil, fmt.Errorf("websocket: dial %s: %w", url, err)
	}
	if ws.Subprotocol() != Subprotocol {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("websocket: dial %s: %w: the server did not choose subprotocol %s", url, transport.ErrProtocol, Subprotocol)
	}
	hctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
	defer cancel()
	ws.SetReadLimit(maxControl)
	if err := ws.Write(hctx, websocket.MessageBinary, appendControl(nil, control{kind: kindHello})); err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("websocket: dial %s: hello: %w", url, err)
	}
	typ, b, err := ws.Read(hctx)
	if err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("websocket: dial %s: waiting for the welcome: %w", url, err)
	}
	ctl, err := parseControl(b)
	switch {
	case typ != websocket.MessageBinary:
		err = protocolf("text message")
	case err != nil:
	case ctl.kind == kindClose:
		_ = ws.CloseNow()
		return nil, fmt.Errorf("websocket: dial %s: %w", url, &transport.CloseError{Remote: true, Reason: ctl.text, Err: errOfCause(ctl.cause)})
	case ctl.kind != kindWelcome:
		err = protocolf("frame kind %d before the welcome", ctl.kind)
	}
	if err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("websocket: dial %s: %w", url, err)
	}
	local, remote := addrs()
	c := newConn(ws, cfg, nil, nil, local, remote, true)
	c.start(nil)
	cfg.Logger.Debug("websocket: dialed", "url", url, "local", local, "remote", remote)
	return c, nil
}

// WebSocketURL turns a page's address into the address of a WebSocket
// endpoint on the same host: "http://h:p/x?y" and path "/ws" give
// "ws://h:p/ws", "https://..." gives "wss://...".
func WebSocketURL(page, path string) string {
	u := page
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + u[len("https://"):]
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + u[len("http://"):]
	}
	scheme := u[:strings.Index(u, "://")+3]
	rest := u[len(scheme):]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return scheme + rest + "/" + strings.TrimPrefix(path, "/")
}
