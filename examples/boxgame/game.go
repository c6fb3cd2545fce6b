package main

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"strings"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/ebitenutil"
	"github.com/hajimehoshi/ebiten/v2/vector"

	"github.com/rewindgo/rewind/examples/boxgame/sim"
	"github.com/rewindgo/rewind/rollback"
)

// Screen layout, in logical pixels: the HUD on top, the arena below it,
// clear of the window's edges by margin.
const (
	screenW = 640
	screenH = 520
	margin  = 20
	arenaX  = (screenW - 480) / 2
	arenaY  = screenH - 360 - margin
)

// Colours of the screen.
func background() color.RGBA { return color.RGBA{0x1d, 0x23, 0x2a, 0xff} }
func arenaColor() color.RGBA { return color.RGBA{0x33, 0x3d, 0x47, 0xff} }
func alarmColor() color.RGBA { return color.RGBA{0xd0, 0x10, 0x10, 0xff} }
func hudColor() color.RGBA   { return color.RGBA{0x10, 0x14, 0x18, 0xff} }

// youLabel says which players this window plays and with which keys:
// "you: P1 (WASD), P2 (arrows)", "you: P2 (scripted)", or "spectating".
func youLabel(local []rollback.PlayerHandle, script bool) string {
	if len(local) == 0 {
		return "spectating"
	}
	keys := []string{"WASD", "arrows", "IJKL", "TFGH"}
	parts := make([]string, len(local))
	for i, h := range local {
		k := keys[i%len(keys)]
		if script {
			k = "scripted"
		}
		parts[i] = fmt.Sprintf("P%d (%s)", h+1, k)
	}
	return "you: " + strings.Join(parts, ", ")
}

// readKeys returns the input byte of the local player using key set i:
// the first, second, ... local player uses WASD, the arrow keys, IJKL,
// TFGH (up, down, left, right).
func readKeys(i int) byte {
	keySets := [sim.MaxPlayers][4]ebiten.Key{
		{ebiten.KeyW, ebiten.KeyS, ebiten.KeyA, ebiten.KeyD},
		{ebiten.KeyArrowUp, ebiten.KeyArrowDown, ebiten.KeyArrowLeft, ebiten.KeyArrowRight},
		{ebiten.KeyI, ebiten.KeyK, ebiten.KeyJ, ebiten.KeyL},
		{ebiten.KeyT, ebiten.KeyG, ebiten.KeyF, ebiten.KeyH},
	}
	if i < 0 || i >= len(keySets) {
		return 0
	}
	var in byte
	for k, bit := range [4]byte{sim.Up, sim.Down, sim.Left, sim.Right} {
		if ebiten.IsKeyPressed(keySets[i][k]) {
			in |= bit
		}
	}
	return in
}

// game is the ebiten.Game: Update runs the match's due frames, Draw shows
// the boxes and the HUD.
type game struct {
	ctx   context.Context
	m     *match
	last  time.Time
	boxes []sim.Box

	// --frames runs: the screenshot is taken in the Draw after the match
	// completed, and the game ends Drain later.
	shotTaken bool
	shotErr   error
}

func newGame(ctx context.Context, m *match) *game {
	if !m.o.Script {
		m.readKey = readKeys
	}
	return &game{ctx: ctx, m: m}
}

// Update is called 60 times per second. The runner keeps its own
// fixed-timestep clock from the wall time passed in (running 10% slower
// while ahead of the other peers), so a late Update catches up and an early
// one runs no frame.
func (g *game) Update() error {
	now := time.Now()
	if g.last.IsZero() {
		g.last = now
	}
	elapsed := now.Sub(g.last)
	g.last = now
	if err := g.m.update(elapsed); err != nil {
		return err
	}
	o := g.m.o
	switch {
	case g.ctx.Err() != nil:
		return ebiten.Termination
	case o.Frames == 0:
		return nil
	case g.m.complete() && g.shotTaken && time.Since(g.m.finished) >= o.Drain:
		return ebiten.Termination
	case time.Since(g.m.start) > o.Timeout:
		return fmt.Errorf("timed out after %v at frame %d (frames 0..%d confirmed)", o.Timeout, g.m.currentFrame(), g.m.digest.Frames()-1)
	}
	return nil
}

// Draw draws the arena, the boxes and the HUD.
func (g *game) Draw(screen *ebiten.Image) {
	screen.Fill(background())
	w, h := sim.ArenaW.Float64(), sim.ArenaH.Float64()
	vector.DrawFilledRect(screen, arenaX, arenaY, float32(w), float32(h), arenaColor(), false)
	size := float32(sim.BoxSize.Float64())
	g.boxes = g.m.game.Boxes(g.boxes[:0])
	for _, b := range g.boxes {
		x, y := arenaX+float32(b.Pos.X.Float64()), arenaY+float32(b.Pos.Y.Float64())
		vector.DrawFilledRect(screen, x, y, size, size, sim.Color(int(b.Handle)), false)
		ebitenutil.DebugPrintAt(screen, fmt.Sprintf("P%d", b.Handle+1), int(x)+9, int(y)+9)
		if g.m.isLocal(rollback.PlayerHandle(b.Handle)) { // yours: outlined, and said so
			vector.StrokeRect(screen, x-3, y-3, size+6, size+6, 2, color.White, false)
			ebitenutil.DebugPrintAt(screen, "you", int(x)+int(size)/2-9, int(y)-18)
		}
	}
	g.drawHUD(screen)
	if g.m.complete() && !g.shotTaken {
		g.shotTaken = true
		if g.m.o.Screenshot != "" {
			g.shotErr = writePNG(screen, g.m.o.Screenshot)
		}
		markComplete()
	}
}

func (g *game) drawHUD(screen *ebiten.Image) {
	m := g.m
	st := m.stats()
	var b strings.Builder
	status := "running"
	switch {
	case m.run.Finished():
		status = "finished"
	case !m.running():
		status = "waiting for peers..."
	}
	// At a glance: who you are and the state first, then the netcode.
	fmt.Fprintf(&b, "%s | %s, %s\n", youLabel(m.local, m.o.Script), m.o.Mode, status)
	fmt.Fprintf(&b, "frame %d, confirmed %d | frames ahead %d | %.0f FPS\n",
		st.Frame, st.Confirmed, m.framesAhead(), ebiten.ActualFPS())
	fmt.Fprintf(&b, "rollbacks %d (%d frames, deepest %d) | stalls %d | %.0f B/s sent\n",
		st.Rollbacks, st.RollbackFrames, st.MaxRollback, st.Stalls, m.rate.rate)
	fmt.Fprintf(&b, "ping:%s | desyncs %d\n", m.pingString(), st.Desyncs)
	for _, ev := range m.events {
		b.WriteString(ev + "\n")
	}
	lines := strings.Count(b.String(), "\n")
	vector.DrawFilledRect(screen, 4, 2, screenW-8, float32(lines*16+6), hudColor(), false)
	ebitenutil.DebugPrintAt(screen, b.String(), 8, 4)
	if m.alarm != "" {
		// Loudly: a red banner across the arena that stays.
		vector.DrawFilledRect(screen, arenaX, arenaY+150, 480, 48, alarmColor(), false)
		msg := fmt.Sprintf("DESYNC! the peers' states differ (%d reports)\n%s", len(m.desyncs), m.alarm)
		ebitenutil.DebugPrintAt(screen, msg, arenaX+8, arenaY+158)
	}
}

// Layout fixes the logical screen size; the window scales it.
func (g *game) Layout(int, int) (int, int) { return screenW, screenH }

// writePNG saves the screen as a PNG file.
func writePNG(screen *ebiten.Image, path string) error {
	bounds := screen.Bounds()
	img := image.NewRGBA(bounds)
	screen.ReadPixels(img.Pix)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
