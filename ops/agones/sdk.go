package agones

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"
)

// Errors of SDK calls, usable with errors.Is.
var (
	// ErrUnavailable: the SDK server did not answer within
	// Config.RetryFor (not running, or not yet).
	ErrUnavailable = errors.New("agones: SDK server unavailable")
	// ErrStatus: the SDK server answered with a status other than 200.
	ErrStatus = errors.New("agones: SDK server refused the call")
)

// Game server states (GameServer.Status.State).
const (
	StateScheduled    = "Scheduled"
	StateRequestReady = "RequestReady"
	StateReady        = "Ready"
	StateReserved     = "Reserved"
	StateAllocated    = "Allocated"
	StateShutdown     = "Shutdown"
	StateUnhealthy    = "Unhealthy"
)

// DefaultPort is the SDK server's REST port when AGONES_SDK_HTTP_PORT is
// unset.
const DefaultPort = "9358"

// Config configures an SDK client. The zero value talks to
// http://localhost:$AGONES_SDK_HTTP_PORT.
type Config struct {
	// BaseURL is the SDK server's address (default
	// "http://localhost:" + $AGONES_SDK_HTTP_PORT, or DefaultPort).
	BaseURL string
	// Client makes the requests (default: a new http.Client without a
	// timeout; each call is bounded by its context and by CallTimeout).
	Client *http.Client
	// RetryFor is how long a call retries while the SDK server does not
	// answer (default 30 s); RetryEvery the wait between two attempts
	// (default 500 ms).
	RetryFor, RetryEvery time.Duration
	// CallTimeout bounds one attempt of a call other than Watch (default
	// 5 s).
	CallTimeout time.Duration
	// Logger receives retries and failures (default: silent).
	Logger *slog.Logger
}

// SDK is a client of the Agones SDK server's REST API. Its methods are
// safe for concurrent use.
type SDK struct {
	cfg Config
}

// New returns an SDK client.
func New(cfg Config) *SDK {
	if cfg.BaseURL == "" {
		port := os.Getenv("AGONES_SDK_HTTP_PORT")
		if port == "" {
			port = DefaultPort
		}
		cfg.BaseURL = "http://localhost:" + port
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = 30 * time.Second
	}
	if cfg.RetryEvery <= 0 {
		cfg.RetryEvery = 500 * time.Millisecond
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &SDK{cfg: cfg}
}

// GameServer is the part of Agones's GameServer object a game server
// reads.
type GameServer struct {
	ObjectMeta ObjectMeta `json:"object_meta"`
	Status     Status     `json:"status"`
}

// ObjectMeta is the game server's name and metadata.
type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Status is the game server's state and address.
type Status struct {
	State   string `json:"state"`
	Address string `json:"address"`
	Ports   []Port `json:"ports,omitempty"`
}

// Port is one of the game server's ports.
type Port struct {
	Name string `json:"name"`
	Port int    `json:"port"`
}

// Ready marks the game server ready to be allocated.
func (s *SDK) Ready(ctx context.Context) error { return s.call(ctx, "POST", "/ready", nil, nil) }

// Health sends one health ping; Agones marks a server that stops pinging
// Unhealthy.
func (s *SDK) Health(ctx context.Context) error { return s.call(ctx, "POST", "/health", nil, nil) }

// Allocate marks the game server Allocated itself.
func (s *SDK) Allocate(ctx context.Context) error {
	return s.call(ctx, "POST", "/allocate", nil, nil)
}

// Reserve marks the game server Reserved for d (whole seconds; zero:
// until changed), so that it is neither allocated nor scaled down.
func (s *SDK) Reserve(ctx context.Context, d time.Duration) error {
	return s.call(ctx, "POST", "/reserve", map[string]any{"seconds": int64(d / time.Second)}, nil)
}

// Shutdown asks Agones to shut the game server down.
func (s *SDK) Shutdown(ctx context.Context) error {
	return s.call(ctx, "POST", "/shutdown", nil, nil)
}

// SetLabel sets a label of the GameServer object (Agones prefixes its
// key with "agones.dev/sdk-").
func (s *SDK) SetLabel(ctx context.Context, key, value string) error {
	return s.call(ctx, "PUT", "/metadata/label", map[string]string{"key": key, "value": value}, nil)
}

// SetAnnotation sets an annotation of the GameServer object (Agones
// prefixes its key with "agones.dev/sdk-").
func (s *SDK) SetAnnotation(ctx context.Context, key, value string) error {
	return s.call(ctx, "PUT", "/metadata/annotation", map[string]string{"key": key, "value": value}, nil)
}

// GameServer returns the current GameServer object.
func (s *SDK) GameServer(ctx context.Context) (GameServer, error) {
	var gs GameServer
	err := s.call(ctx, "GET", "/gameserver", nil, &gs)
	return gs, err
}

// HealthLoop pings Health every period until ctx is done; failures are
// logged, not fatal (Agones decides when a server is unhealthy).
func (s *SDK) HealthLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.Health(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("agones health ping failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Watch calls f with the GameServer object at every change, from the
// stream of GET /watch/gameserver, until ctx is done (nil) or the stream
// fails; it connects with the same retries as the other calls.
func (s *SDK) Watch(ctx context.Context, f func(GameServer)) error {
	var body io.ReadCloser
	err := s.retry(ctx, "GET /watch/gameserver", func() (bool, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", s.cfg.BaseURL+"/watch/gameserver", nil)
		if err != nil {
			return false, err
		}
		resp, err := s.cfg.Client.Do(req)
		if err != nil {
			return true, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return false, fmt.Errorf("%w: GET /watch/gameserver: %s", ErrStatus, resp.Status)
		}
		body = resp.Body
		return false, nil
	})
	if err != nil {
		return err
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		// The gateway wraps each object as {"result": {...}}; accept a
		// bare object too.
		var msg struct {
			Result *GameServer      `json:"result"`
			Error  *json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return fmt.Errorf("agones: watch: %w", err)
		}
		if msg.Error != nil {
			return fmt.Errorf("%w: watch: %s", ErrStatus, *msg.Error)
		}
		if msg.Result == nil {
			var gs GameServer
			if err := json.Unmarshal(line, &gs); err != nil {
				return fmt.Errorf("agones: watch: %w", err)
			}
			msg.Result = &gs
		}
		f(*msg.Result)
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("agones: watch: %w", err)
	}
	return fmt.Errorf("%w: watch stream ended", ErrUnavailable)
}

// call makes one request, retrying while the SDK server does not answer,
// and decodes a JSON answer into out when out is not nil.
func (s *SDK) call(ctx context.Context, method, path string, in, out any) error {
	var payload []byte
	if in != nil {
		var err error
		if payload, err = json.Marshal(in); err != nil {
			return err
		}
	} else if method != "GET" {
		payload = []byte("{}")
	}
	return s.retry(ctx, method+" "+path, func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
		defer cancel()
		var body io.Reader
		if payload != nil {
			body = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(cctx, method, s.cfg.BaseURL+path, body)
		if err != nil {
			return false, err
		}
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := s.cfg.Client.Do(req)
		if err != nil {
			return true, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		if err != nil {
			return true, err
		}
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("%w: %s %s: %s: %s", ErrStatus, method, path, resp.Status, bytes.TrimSpace(data))
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return false, fmt.Errorf("agones: %s %s: %w", method, path, err)
			}
		}
		return false, nil
	})
}

// retry runs attempt until it succeeds, fails for good (retry false), ctx
// is done, or RetryFor has passed since the first attempt.
func (s *SDK) retry(ctx context.Context, what string, attempt func() (retry bool, err error)) error {
	deadline := time.Now().Add(s.cfg.RetryFor)
	for n := 1; ; n++ {
		again, err := attempt()
		if err == nil || !again {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%w: %s: %d attempts in %v: %w", ErrUnavailable, what, n, s.cfg.RetryFor, err)
		}
		s.cfg.Logger.Debug("agones SDK server not answering, retrying", "call", what, "attempt", n, "err", err)
		t := time.NewTimer(s.cfg.RetryEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
