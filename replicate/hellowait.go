package replicate

import "time"

// Forgetting to serve (Server.Serve or AddConn, then the server frame)
// fails silently on the client: its connection may be accepted by the
// transport, but nothing answers its hello, and it stays Connecting. It
// says so once through ClientConfig.Logger (silent by default).

// helloWarnAfter is how long a client waits for the answer to its hello
// before it warns.
const helloWarnAfter = 10 * time.Second

// helloWait is the state of a client's hello.
type helloWait struct {
	sent   time.Time // when Connect sent it
	warned bool
}

// waitHello warns once when the hello has gone unanswered for
// helloWarnAfter.
func (c *Client) waitHello() {
	if c.state != Connecting || c.hello.warned || c.hello.sent.IsZero() {
		return
	}
	if waited := c.cfg.Now().Sub(c.hello.sent); waited >= helloWarnAfter {
		c.hello.warned = true
		c.log.Warn("replicate: no answer to the hello: is the server accepting this connection (Server.Serve or AddConn) and running its frame (Receive, Send)?",
			"waited", waited.Round(time.Millisecond))
	}
}
