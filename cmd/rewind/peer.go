package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/transport"
)

// peerOptions are the settings of one peer of a demo match played across
// processes (rewind peer).
type peerOptions struct {
	demoOptions
	// Listen is the UDP address this peer listens on.
	Listen string
	// Handle is the local player's handle; Remotes are the other players'
	// addresses in handle order (skipping Handle); SpectatorAddrs the
	// addresses of the spectators this peer hosts.
	Handle                  int
	Remotes, SpectatorAddrs []netip.AddrPort
	// Host, when valid, makes this process a spectator of the peer at Host
	// in a match of Peers players.
	Host netip.AddrPort
}

func peerFlags() (*flag.FlagSet, *peerOptions, *[3]string) {
	o := &peerOptions{}
	var lists [3]string // remotes, spectators, host to spectate
	fs := flag.NewFlagSet("rewind peer", flag.ContinueOnError)
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:7000", "UDP `address` this peer listens on")
	fs.IntVar(&o.Handle, "handle", 0, "this peer's player handle (0..players-1)")
	fs.StringVar(&lists[0], "remote", "", "comma-separated `HOST:PORT` of the other peers, in handle order (required)")
	fs.StringVar(&lists[1], "spectators", "", "comma-separated `HOST:PORT` of spectators this peer hosts")
	fs.StringVar(&lists[2], "spectate", "", "be a spectator of the peer at `HOST:PORT` (which lists this --listen address in --spectators) instead of a player")
	fs.IntVar(&o.Peers, "players", 2, "with --spectate: the number of players of the match")
	fs.IntVar(&o.Frames, "frames", 600, "length of the match in frames (60 per second): the same on every peer")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the game and the bots: the same on every peer")
	fs.IntVar(&o.NPCs, "npcs", demo.DefaultNPCs, "number of wandering NPCs: the same on every peer")
	fs.DurationVar(&o.Latency, "latency", 0, "added one-way latency of what this peer sends")
	fs.DurationVar(&o.Jitter, "jitter", 0, "latency jitter of what this peer sends")
	fs.Float64Var(&o.Loss, "loss", 0, "probability that a datagram this peer sends is lost (0..1)")
	fs.IntVar(&o.InputDelay, "input-delay", 2, "input delay in frames")
	fs.IntVar(&o.DesyncInterval, "desync-interval", 30, "frames between desync checks (0: off)")
	fs.BoolVar(&o.JSON, "json", false, "print the summary as one JSON object on stdout (live stats go to stderr)")
	fs.StringVar(&o.DumpDir, "dump-dir", "", "on a desync, write this peer's state of the differing types at that frame to a file in `DIR` (compare it with the other peer's with rewind diff)")
	fs.DurationVar(&o.Drain, "drain", time.Second, "how long to keep answering the other peers after finishing")
	fs.DurationVar(&o.Timeout, "timeout", 0, "give up after this long (0: 3x the match plus 30s)")
	fs.DurationVar(&o.StatsEvery, "stats", time.Second, "live statistics period (0: off)")
	fs.BoolVar(&o.Rejoin, "rejoin", false, "this process replaces a peer of a running match that left (its process died or its link was down for 2s or more): it rejoins the match with the same flags as the first one (every peer must allow it: --rejoin-bytes above 0)")
	fs.IntVar(&o.RejoinBytes, "rejoin-bytes", 1<<20, "the largest game state this peer sends to a peer that rejoins, or takes when rejoining (0: no rejoining; at most 1 MiB)")
	dashboardFlag(fs, &o.Dashboard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind peer [flags]

Plays one peer of the demo match ("rewind demo") in this process, against
peers in other processes or on other machines. Two terminals:

  rewind peer --listen 127.0.0.1:7000 --handle 0 --remote 127.0.0.1:7001
  rewind peer --listen 127.0.0.1:7001 --handle 1 --remote 127.0.0.1:7000

A spectator follows a peer that hosts it:

  rewind peer --listen 127.0.0.1:7000 --handle 0 --remote 127.0.0.1:7001 --spectators 127.0.0.1:7002
  rewind peer --listen 127.0.0.1:7002 --spectate 127.0.0.1:7000 --players 2

A peer that left (its process was killed, or its link was down for longer
than the 2 s disconnect timeout) comes back by running the same command
again with --rejoin, at least 2 s after it left: it gets the state of a
recent frame from a peer and plays on from there.

The peer plays --frames frames and waits until the match is finished
(every state 0..--frames confirmed and checked on every peer), keeps
answering the others for --drain, and prints a summary with the digest of
its confirmed checksums: peers that print the same digest computed the same
state at every frame. Exits with status 1 on a desync or an unfinished match.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o, &lists
}

func peerCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o, lists := peerFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.Remotes, err = parseAddrs(lists[0]); err != nil {
		return err
	}
	if o.SpectatorAddrs, err = parseAddrs(lists[1]); err != nil {
		return err
	}
	host, err := parseAddrs(lists[2])
	if err != nil {
		return err
	}
	switch {
	case len(host) > 1:
		return usageError("--spectate takes one address")
	case len(host) == 1 && (len(o.Remotes) > 0 || len(o.SpectatorAddrs) > 0):
		return usageError("a spectator (--spectate) has no --remote peers or --spectators")
	case len(host) == 1:
		o.Host = host[0]
	default:
		o.Peers, o.Spectators = 1+len(o.Remotes), len(o.SpectatorAddrs)
	}
	switch {
	case o.Host.IsValid():
	case len(o.Remotes) == 0:
		return usageError("--remote is required: the other peers' addresses")
	case o.Handle < 0 || o.Handle >= o.Peers:
		return usageError("--handle %d: want 0..%d with %d remote peers", o.Handle, o.Peers-1, len(o.Remotes))
	}
	if err := o.check(); err != nil {
		return err
	}
	switch {
	case o.RejoinBytes < 0 || o.RejoinBytes > 1<<20:
		return usageError("--rejoin-bytes %d: want 0..%d", o.RejoinBytes, 1<<20)
	case o.Rejoin && o.RejoinBytes == 0:
		return usageError("--rejoin needs --rejoin-bytes above 0")
	case o.Rejoin && o.Host.IsValid():
		return usageError("a spectator (--spectate) cannot --rejoin")
	case o.Rejoin && o.Record != "":
		return usageError("a rejoining peer cannot record")
	}
	live := stdout
	if o.JSON {
		live = stderr
	}
	run := runPeer
	if o.Host.IsValid() {
		run = runSpectator
	}
	sum, err := run(ctx, *o, live)
	if err != nil {
		return err
	}
	return report(stdout, o.JSON, sum)
}

func parseAddrs(list string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for s := range strings.SplitSeq(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		a, err := netip.ParseAddrPort(s)
		if err != nil {
			return nil, usageError("address %q: want IP:PORT", s)
		}
		out = append(out, a)
	}
	return out, nil
}

// peerResult is the summary of one peer: the demo's fields plus the digest.
type peerResult struct {
	*demoSummary
	// Handle is the local player's handle (-1 for a spectator).
	Handle int `json:"handle"`
	// Digest is the SHA-256 (first 16 bytes, hex) over the confirmed
	// checksums of frames 0..DigestFrames-1, each as a little-endian uint32
	// frame and uint64 checksum. Peers with equal digests over the same
	// frames computed the same state at every one of them.
	Digest       string `json:"digest"`
	DigestFrames int    `json:"digest_frames"`
	// DigestFrom is the first frame of the digest: 0, or for a peer that
	// rejoined (--rejoin) the frame whose state it loaded.
	DigestFrom int `json:"digest_from"`
	// FinalChecksum is the checksum of the state of the last frame
	// (--frames), in hex: equal on every peer that finished the match,
	// rejoined ones included.
	FinalChecksum string `json:"final_checksum"`
}

func (r *peerResult) ok() bool {
	return r.demoSummary.ok() && r.DigestFrom+r.DigestFrames == r.Frames+1
}

func (r *peerResult) print(w io.Writer) {
	r.demoSummary.print(w)
	switch {
	case r.DigestFrames == 0:
		fmt.Fprintln(w, "no digest: no frame confirmed")
	case !r.ok():
		fmt.Fprintf(w, "digest %s over frames %d..%d, of a match that did not finish properly\n", r.Digest, r.DigestFrom, r.DigestFrom+r.DigestFrames-1)
	default:
		fmt.Fprintf(w, "digest %s over frames %d..%d (compare with the other peers)\n", r.Digest, r.DigestFrom, r.DigestFrom+r.DigestFrames-1)
	}
	if r.FinalChecksum != "" {
		fmt.Fprintf(w, "final checksum %s\n", r.FinalChecksum)
	}
}

// digest folds the consecutive confirmed checksums from frame 0 (see
// peerResult.Digest) and returns it with the number of frames covered.
func digest(sums []frameSum) (string, int) { return digestFrom(sums, 0) }

// digestFrom is digest from frame from.
func digestFrom(sums []frameSum, from int) (string, int) {
	h := sha256.New()
	var buf [12]byte
	n := 0
	for _, s := range sums {
		if s.frame != rollback.Frame(from+n) {
			break
		}
		binary.LittleEndian.PutUint32(buf[:4], uint32(s.frame))
		binary.LittleEndian.PutUint64(buf[4:], s.sum)
		h.Write(buf[:])
		n++
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), n
}

// runPeer plays this process's peer until the match is finished, answers
// the other peers for o.Drain more, and returns the summary.
func runPeer(ctx context.Context, o peerOptions, live io.Writer) (*peerResult, error) {
	// The socket outlives an interruption (ctx) until the session has told
	// the other peers that this one leaves (m.close).
	sock, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel() // closes the socket
	udp, conn, err := o.listen(sock)
	if err != nil {
		return nil, err
	}
	p := &demoPeer{idx: o.Handle, conn: udp, remotes: map[rollback.PlayerHandle]string{}}
	m := &match{o: o.demoOptions, peers: []*demoPeer{p}}
	defer m.close()

	// o.Remotes skips this peer's handle; start wants an entry for every one.
	addrs := slices.Insert(slices.Clone(o.Remotes), o.Handle, netip.AddrPort{})
	if err := p.start(&o.demoOptions, conn, addrs, o.SpectatorAddrs, nil); err != nil {
		return nil, err
	}
	dash, stopDash := context.WithCancel(ctx) // the dashboard ends with the run
	defer stopDash()
	if err := m.startDashboard(dash, fmt.Sprintf("rewind peer %d", o.Handle), live); err != nil {
		return nil, err
	}
	sum := o.newSummary("peer")
	sum.Remote = true
	elapsed, err := m.playOne(ctx, p.run, fmt.Sprintf("peer %d", p.idx), p.names, sum, live)
	if err != nil {
		return nil, err
	}
	sum.finish(m.peers, nil, elapsed)
	sc := p.game.Score()
	sum.Score = append(sum.Score[:0], sc.Points[:o.Peers]...) // every player's, not only this peer's
	res := &peerResult{demoSummary: sum, Handle: o.Handle}
	if o.Rejoin && len(p.sums) > 0 {
		res.DigestFrom = int(p.sums[0].frame) // the frame whose state it loaded
	}
	res.Digest, res.DigestFrames = digestFrom(p.sums, res.DigestFrom)
	if n := len(p.sums); n > 0 && p.sums[n-1].frame == rollback.Frame(o.Frames) {
		res.FinalChecksum = fmt.Sprintf("%016x", p.sums[n-1].sum)
	}
	return res, nil
}

// playOne runs the one peer or spectator of m until the match is finished (the
// session's EndFrame is o.Frames: every state 0..o.Frames confirmed and
// checked on every peer) and o.Drain has passed since, or until the
// timeout, or until ctx is done. It returns the time played. names labels
// the remotes; while some have not answered after waitNote, it says so
// once.
func (m *match) playOne(ctx context.Context, run *runner.Runner, who string, names map[netip.AddrPort]string, sum *demoSummary, live io.Writer) (time.Duration, error) {
	var doneAt time.Time
	noteAt := time.Now().Add(waitNote)
	return m.loop(ctx, sum, live, func(now time.Time, dt time.Duration) (bool, error) {
		if !noteAt.IsZero() && now.After(noteAt) {
			noteAt = time.Time{}
			if !sum.running[who] {
				var silent []string
				for _, a := range slices.SortedFunc(maps.Keys(names), netip.AddrPort.Compare) {
					if !sum.answered[who][a] {
						silent = append(silent, names[a])
					}
				}
				if len(silent) > 0 {
					fmt.Fprintf(live, "%s: still waiting for %s to answer: start it, with %v in its --remote\n", who, strings.Join(silent, ", "), m.listenAddr())
				}
			}
		}
		// Once finished the runner only polls: the other peers may not know
		// yet that we are done.
		if _, err := run.Update(dt); err != nil {
			return false, fmt.Errorf("%s: %w", who, err)
		}
		if run.Finished() && doneAt.IsZero() {
			doneAt = now
		}
		for _, ev := range run.Session().Events() {
			sum.event(live, who, ev, run, names)
		}
		if len(sum.Abandoned) > 0 && !sum.running[who] {
			return true, nil // left during the handshake: the match cannot start
		}
		return !doneAt.IsZero() && now.Sub(doneAt) >= m.o.Drain, nil
	})
}

// waitNote is how long a peer waits for its remotes before saying which
// have not answered.
const waitNote = 5 * time.Second

// listenAddr is the address of this process's socket.
func (m *match) listenAddr() string {
	switch {
	case len(m.peers) > 0:
		return m.peers[0].conn.LocalAddr().String()
	case len(m.specs) > 0:
		return m.specs[0].conn.LocalAddr().String()
	}
	return ""
}

// listen opens this process's UDP socket and, with link conditions, the
// conditioned conn on top of it (else conn is the socket).
func (o *peerOptions) listen(ctx context.Context) (*transport.UDPConn, transport.PacketConn, error) {
	udp, err := transport.ListenUDP(ctx, o.Listen, transport.UDPConfig{})
	if err != nil {
		return nil, nil, err
	}
	if link := (transport.LinkConfig{Latency: o.Latency, Jitter: o.Jitter, Loss: o.Loss}); link != (transport.LinkConfig{}) {
		return udp, transport.Condition(udp, transport.ConditionConfig{Link: link, Seed: o.Seed*1000 + uint64(udp.LocalAddr().Port())}), nil
	}
	return udp, udp, nil
}

// runSpectator follows the host's match until it is finished, drains, and
// returns the summary: the demo's fields that apply to a spectator, and the
// digest of the states 0..o.Frames it simulated, comparable with the
// peers'.
func runSpectator(ctx context.Context, o peerOptions, live io.Writer) (*peerResult, error) {
	sock, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel() // closes the socket, after the session is closed
	udp, conn, err := o.listen(sock)
	if err != nil {
		return nil, err
	}
	s := &demoSpectator{conn: udp}
	m := &match{o: o.demoOptions, specs: []*demoSpectator{s}}
	defer m.close()
	if s.sess, err = rollback.NewSpectator(conn, o.Host, rollback.Config{
		NumPlayers: o.Peers, MaxInputSize: demo.InputSize, Seed: o.Seed*1000 + 500, EndFrame: o.Frames,
	}); err != nil {
		return nil, err
	}
	if s.game, err = demo.New(o.gameConfig()); err != nil {
		return nil, err
	}
	// A spectator simulates confirmed frames only: every state is final.
	// The state after frame f is that of frame f+1.
	add := func(ctx *runner.Context, f rollback.Frame) {
		sum, err := s.game.Checksum()
		ctx.Fail(err)
		s.sums = append(s.sums, frameSum{f, sum})
	}
	s.run, err = s.game.NewRunner(s.sess, runner.Config{Step: func(ctx *runner.Context) {
		if ctx.Frame == 0 {
			add(ctx, 0)
		}
		s.game.Step(ctx)
		add(ctx, ctx.Frame+1)
	}})
	if err != nil {
		return nil, err
	}
	sum := o.newSummary("spectator")
	sum.Spectators, sum.Remote = 1, true
	names := map[netip.AddrPort]string{o.Host: fmt.Sprintf("the host at %v", o.Host)}
	elapsed, err := m.playOne(ctx, s.run, "spectator", names, sum, live)
	if err != nil {
		return nil, err
	}
	sum.started("spectator", names)
	frame := int(s.sess.CurrentFrame())
	sum.DurationSec = round3(elapsed.Seconds())
	sum.FramesReached, sum.Finished = frame >= o.Frames, s.run.Finished()
	sum.ChecksumsEqual, sum.CheckedFrames = true, len(s.sums) // compared by whoever reads the digests
	sum.ConfirmedTail = len(s.sums) - 1
	sum.SpectatorFrames, sum.SpectatorChecked = []int{frame}, len(s.sums)
	sc := s.game.Score()
	sum.Score = append([]int32(nil), sc.Points[:o.Peers]...)
	res := &peerResult{demoSummary: sum, Handle: -1}
	res.Digest, res.DigestFrames = digest(s.sums)
	return res, nil
}
