package agonestest

import (
	"errors"
	"io"
	"net/http"
	"sync"
)

// ErrRefused is what the in-memory client returns while the fake is
// down (SetDown), as a connection to a port nobody listens on.
var ErrRefused = errors.New("agonestest: connection refused")

// Client returns an http.Client that reaches the fake in memory, with no
// network: for agones.Config.Client (any BaseURL), also inside
// testing/synctest bubbles.
func (f *Fake) Client() *http.Client { return &http.Client{Transport: memTransport{f}} }

type memTransport struct{ f *Fake }

func (t memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.f.mu.Lock()
	down := t.f.down
	t.f.mu.Unlock()
	if down {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, ErrRefused
	}
	r := req.Clone(req.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	rw := &pipeResponse{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		t.f.ServeHTTP(rw, r)
		rw.WriteHeader(http.StatusOK) // no-op when written
		pw.Close()
	}()
	<-rw.ready
	return &http.Response{
		Status: http.StatusText(rw.status), StatusCode: rw.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rw.header, Body: pr, Request: req, ContentLength: -1,
	}, nil
}

// pipeResponse is a ResponseWriter whose body goes through a pipe to the
// client as it is written.
type pipeResponse struct {
	header http.Header
	pw     *io.PipeWriter
	once   sync.Once
	status int
	ready  chan struct{}
}

func (p *pipeResponse) Header() http.Header { return p.header }

func (p *pipeResponse) WriteHeader(code int) {
	p.once.Do(func() {
		p.status = code
		close(p.ready)
	})
}

func (p *pipeResponse) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.pw.Write(b)
}

// Flush is a no-op: writes reach the client as they are made.
func (p *pipeResponse) Flush() {}
