package agones

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Game is a match server as Run drives it. The game listens for players
// before Run starts, and admits none until Allocated.
type Game interface {
	// Allocated is called once, when Agones allocates the game server
	// (a player or matchmaker was given its address): the game starts
	// accepting players. An error ends the run (drain, then Shutdown).
	Allocated(ctx context.Context, gs GameServer) error
	// Done is closed when the match has ended.
	Done() <-chan struct{}
	// Drain stops accepting players and brings the match to an end it
	// can stop at: finish it, or save a checkpoint elsewhere. Run calls
	// it once, when the match ended or the server is being stopped
	// (SIGTERM: the context of Run), within RunConfig.DrainTimeout.
	Drain(ctx context.Context) error
}

// RunConfig configures Run.
type RunConfig struct {
	// SDK talks to Agones (required).
	SDK *SDK
	// Labels and Annotations are set on the GameServer object before
	// Ready (optional).
	Labels, Annotations map[string]string
	// HealthEvery is the period of health pings (default 2 s; Agones's
	// default health check expects one every 5 s).
	HealthEvery time.Duration
	// DrainTimeout bounds Drain (default 30 s, Kubernetes's default
	// termination grace period).
	DrainTimeout time.Duration
	// Logger receives the lifecycle's steps (default: silent).
	Logger *slog.Logger
}

// ErrNoSDK: RunConfig.SDK is nil.
var ErrNoSDK = errors.New("agones: RunConfig.SDK is nil")

// Run is the dedicated server's lifecycle on Agones: labels and
// annotations, Ready, health pings, a watch for the Allocated state
// (then game.Allocated), and when ctx is done (SIGTERM) or the match
// ended (game.Done): game.Drain, then Shutdown. It returns when the
// server has asked to shut down, with the first error of the game or the
// SDK (nil after a clean run, also when stopped by ctx).
func Run(ctx context.Context, cfg RunConfig, game Game) error {
	if cfg.SDK == nil {
		return ErrNoSDK
	}
	if cfg.HealthEvery <= 0 {
		cfg.HealthEvery = 2 * time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sdk := cfg.SDK

	// The SDK calls of the lifecycle outlive ctx (SIGTERM): Drain and
	// Shutdown still have to reach Agones.
	bg, stopBg := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBg()
	for k, v := range cfg.Labels {
		if err := sdk.SetLabel(ctx, k, v); err != nil {
			return err
		}
	}
	for k, v := range cfg.Annotations {
		if err := sdk.SetAnnotation(ctx, k, v); err != nil {
			return err
		}
	}
	if err := sdk.Ready(ctx); err != nil {
		return err
	}
	log.Info("agones: ready")

	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopBg()
	wg.Go(func() { sdk.HealthLoop(bg, cfg.HealthEvery) })

	allocated := make(chan GameServer, 1)
	watchErr := make(chan error, 1)
	wg.Go(func() {
		once := false
		err := sdk.Watch(bg, func(gs GameServer) {
			if gs.Status.State == StateAllocated && !once {
				once = true
				allocated <- gs
			}
		})
		watchErr <- err
	})

	var runErr error
loop:
	for {
		select {
		case <-ctx.Done():
			log.Info("agones: stopping (context done)")
			break loop
		case <-game.Done():
			log.Info("agones: match ended")
			break loop
		case gs := <-allocated:
			log.Info("agones: allocated", "name", gs.ObjectMeta.Name)
			if err := game.Allocated(ctx, gs); err != nil {
				runErr = fmt.Errorf("agones: game refused the allocation: %w", err)
				break loop
			}
		case err := <-watchErr:
			if err != nil && bg.Err() == nil {
				// A broken watch does not stop the match; allocation
				// can no longer be seen, so log it loudly.
				log.Error("agones: watch failed", "err", err)
			}
			watchErr = nil
		}
	}

	dctx, cancel := context.WithTimeout(bg, cfg.DrainTimeout)
	if err := game.Drain(dctx); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("agones: drain: %w", err))
	}
	cancel()
	if err := sdk.Shutdown(bg); err != nil {
		runErr = errors.Join(runErr, err)
	}
	log.Info("agones: shutdown requested")
	return runErr
}
