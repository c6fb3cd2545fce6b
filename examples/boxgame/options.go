package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rewindgo/rewind/examples/boxgame/sim"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/signal"
)

type mode int

const (
	modeP2P mode = iota
	modeSpectator
	modeSyncTest
)

func (m mode) String() string { return [...]string{"p2p", "spectator", "synctest"}[m] }

// options are the command-line settings.
type options struct {
	Mode mode
	// Players lists every player in handle order: the zero AddrPort for a
	// local player, the peer's address for a remote one (P2P).
	Players []netip.AddrPort
	// Spectators are the addresses of spectators this peer hosts (P2P).
	Spectators []netip.AddrPort
	// Host is the peer a spectator follows.
	Host netip.AddrPort
	// NumPlayers is the player count of a spectator or SyncTest run.
	NumPlayers int
	Port       int

	// Signal is the room URL of a WebRTC match (--signal, or this
	// process's own room with --web); the players are then the room's
	// members, in the order they joined, and Players is filled in by
	// newMatch.
	Signal string
	// Web is the address that serves the browser build and the
	// signalling rooms (--web); Room the room this process joins there.
	Web, Room string
	// ICE lists STUN/TURN server URLs for WebRTC.
	ICE []string

	InputDelay     int
	DesyncInterval int
	CheckDistance  int
	Link           transport.LinkConfig
	Seed           uint64

	// Frames > 0 is the match's length (rollback.Config.EndFrame): the run
	// ends once the match is finished on every peer and Drain has passed.
	Frames     int
	Drain      time.Duration
	Timeout    time.Duration
	Script     bool
	Headless   bool
	Screenshot string
	JSON       bool
	Scale      float64
}

var errUsage = errors.New("usage")

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	var players, spectators, spectate, ice string
	var synctest bool
	fs := flag.NewFlagSet("boxgame", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&players, "players", "local,local", "every player in handle order: `local` or the HOST:PORT of a remote peer (2-4 entries)")
	fs.IntVar(&o.Port, "port", 7000, "UDP port this peer listens on")
	fs.StringVar(&spectators, "spectators", "", "comma-separated HOST:PORT of spectators this peer hosts")
	fs.StringVar(&spectate, "spectate", "", "watch the match of the peer at `HOST:PORT` (needs --num-players)")
	fs.BoolVar(&synctest, "synctest", false, "SyncTest: all --num-players local, every frame rolled back and re-simulated to check determinism")
	fs.IntVar(&o.NumPlayers, "num-players", 2, "players of a --spectate, --synctest, --signal or --web run")
	fs.StringVar(&o.Signal, "signal", "", "play over WebRTC in the room at `URL` (ws://HOST:PORT/room/NAME) of a signalling server (boxgame --web, rewind signal): players are numbered in the order they join")
	fs.StringVar(&o.Web, "web", "", "serve the browser build and signalling rooms on `ADDR` (e.g. :8080), and play over WebRTC in --room there")
	fs.StringVar(&o.Room, "room", "boxgame", "with --web: the `name` of the room this peer joins (browsers join ?room=NAME, default boxgame)")
	fs.StringVar(&ice, "ice", "", "comma-separated STUN/TURN server `URLs` for WebRTC (e.g. stun:stun.example.org:3478); default none: LAN or one machine")
	fs.IntVar(&o.CheckDistance, "check-distance", 7, "frames SyncTest rolls back every frame")
	fs.IntVar(&o.InputDelay, "input-delay", 2, "input delay in frames")
	fs.IntVar(&o.DesyncInterval, "desync-interval", 10, "frames between desync checks (0: off)")
	fs.DurationVar(&o.Link.Latency, "latency", 0, "added one-way latency of what this peer sends")
	fs.DurationVar(&o.Link.Jitter, "jitter", 0, "latency jitter: each datagram gets ± up to this much")
	fs.Float64Var(&o.Link.Loss, "loss", 0, "probability that a datagram this peer sends is lost (0..1)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the link conditions")
	fs.IntVar(&o.Frames, "frames", 0, "length of the match: stop once every peer has confirmed states 0..N (0: play until the window closes)")
	fs.DurationVar(&o.Drain, "drain", 2*time.Second, "with --frames: keep answering peers this long after finishing")
	fs.DurationVar(&o.Timeout, "timeout", time.Minute, "with --frames: give up after this long")
	fs.BoolVar(&o.Script, "script", false, "local players play scripted inputs instead of the keyboard")
	fs.BoolVar(&o.Headless, "headless", false, "CI run: --script, no keyboard, exit after --frames (needs a display, e.g. xvfb-run)")
	fs.StringVar(&o.Screenshot, "screenshot", "", "with --frames: write the last frame to this PNG `file`")
	fs.BoolVar(&o.JSON, "json", false, "with --frames: print a JSON summary on stdout")
	fs.Float64Var(&o.Scale, "scale", 1, "window scale")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: boxgame [flags]

The bevy_ggrs box game on rewind and Ebitengine. Two terminals on one machine:

  boxgame --port 7000 --players local,127.0.0.1:7001
  boxgame --port 7001 --players 127.0.0.1:7000,local

Over WebRTC, with a friend in a browser (the page is served on :8080):

  boxgame --web :8080            then open http://HOST:8080/ in the browser
  boxgame --signal ws://HOST:8080/room/boxgame    another native peer

Keys of the local players, in order: WASD, arrow keys, IJKL, TFGH.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if o.Headless {
		o.Script = true
	}
	if ice != "" {
		o.ICE = strings.Split(ice, ",")
	}
	explicitPlayers := false
	fs.Visit(func(f *flag.Flag) { explicitPlayers = explicitPlayers || f.Name == "players" || f.Name == "spectators" })
	var err error
	switch {
	case (o.Signal != "" || o.Web != "") && (synctest || spectate != "" || explicitPlayers):
		return o, fmt.Errorf("%w: --signal and --web take the players from the room: no --players, --spectators, --spectate or --synctest", errUsage)
	case o.Signal != "" || o.Web != "":
		o.Mode = modeP2P
		if o.Signal != "" {
			if o.Signal, err = roomURL(o.Signal, o.NumPlayers); err != nil {
				return o, err
			}
		}
		if !signal.ValidRoomName(o.Room) {
			return o, fmt.Errorf("%w: --room %q: letters, digits, '-', '_' and '.' only", errUsage, o.Room)
		}
	case synctest && spectate != "":
		return o, fmt.Errorf("%w: --synctest and --spectate exclude each other", errUsage)
	case synctest:
		o.Mode = modeSyncTest
	case spectate != "":
		o.Mode = modeSpectator
		if o.Host, err = resolve(spectate); err != nil {
			return o, err
		}
	default:
		for _, p := range strings.Split(players, ",") {
			var a netip.AddrPort
			if p = strings.TrimSpace(p); p != "local" && p != "localhost" {
				if a, err = resolve(p); err != nil {
					return o, err
				}
			}
			o.Players = append(o.Players, a)
		}
		if len(o.Players) < sim.MinPlayers+1 || len(o.Players) > sim.MaxPlayers {
			return o, fmt.Errorf("%w: --players has %d entries, want 2..%d", errUsage, len(o.Players), sim.MaxPlayers)
		}
		if spectators != "" {
			for _, s := range strings.Split(spectators, ",") {
				a, err := resolve(strings.TrimSpace(s))
				if err != nil {
					return o, err
				}
				o.Spectators = append(o.Spectators, a)
			}
		}
	}
	switch {
	case (o.Signal != "" || o.Web != "") && o.NumPlayers < 2:
		return o, fmt.Errorf("%w: --num-players %d: a WebRTC room has 2..%d players", errUsage, o.NumPlayers, sim.MaxPlayers)
	case (o.Mode != modeP2P || o.Signal != "" || o.Web != "") && (o.NumPlayers < sim.MinPlayers || o.NumPlayers > sim.MaxPlayers):
		return o, fmt.Errorf("%w: --num-players %d, want %d..%d", errUsage, o.NumPlayers, sim.MinPlayers, sim.MaxPlayers)
	case o.Port < 0 || o.Port > 65535:
		return o, fmt.Errorf("%w: --port %d", errUsage, o.Port)
	case o.InputDelay < 0 || o.InputDelay > rollback.MaxInputDelay:
		return o, fmt.Errorf("%w: --input-delay %d, want 0..%d", errUsage, o.InputDelay, rollback.MaxInputDelay)
	case !(o.Link.Loss >= 0 && o.Link.Loss <= 1) || o.Link.Latency < 0 || o.Link.Jitter < 0:
		return o, fmt.Errorf("%w: --loss is a probability (0..1), --latency and --jitter not negative", errUsage)
	case o.Frames < 0:
		return o, fmt.Errorf("%w: --frames %d", errUsage, o.Frames)
	case o.Headless && o.Frames == 0:
		return o, fmt.Errorf("%w: --headless needs --frames", errUsage)
	case o.Scale <= 0:
		return o, fmt.Errorf("%w: --scale %v", errUsage, o.Scale)
	}
	return o, nil
}

// roomURL checks a --signal URL and adds the room size (n=players) to it
// when it has none.
func roomURL(s string, players int) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return "", fmt.Errorf("%w: --signal %q: want ws://HOST:PORT/room/NAME (or wss://)", errUsage, s)
	}
	q := u.Query()
	if q.Get("n") == "" {
		q.Set("n", strconv.Itoa(players))
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// resolve parses HOST:PORT, looking the host up when it is a name.
func resolve(s string) (netip.AddrPort, error) {
	if a, err := netip.ParseAddrPort(s); err == nil {
		return a, nil
	}
	ua, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: address %q: %v", errUsage, s, err)
	}
	a := ua.AddrPort()
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port()), nil
}
