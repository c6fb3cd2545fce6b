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
	"github.com/hajimehoshi/ebiten/v2/inpututil"
	"github.com/hajimehoshi/ebiten/v2/vector"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/examples/arena/palette"
	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// Screen layout, in logical pixels: the HUD on top, the arena on the
// left, the net graph on the right.
const (
	screenW  = 800
	screenH  = 580
	arenaX   = 10
	arenaY   = 80
	arenaPx  = 480
	graphX   = arenaX + arenaPx + 10
	graphY   = arenaY
	graphW   = screenW - graphX - 10
	graphH   = arenaPx
	unit     = float32(arenaPx) / shooter.Size // pixels per arena unit
	shipPx   = 16
	bulletPx = 4
)

// Colours of the screen; ships and the net graph have those of package
// palette, which checkshot looks for.
func background() color.RGBA { return color.RGBA{0x1d, 0x23, 0x2a, 0xff} }
func arenaColor() color.RGBA { return color.RGBA{0x33, 0x3d, 0x47, 0xff} }
func panelColor() color.RGBA { return color.RGBA{0x10, 0x14, 0x18, 0xff} }

// plotColors are the net graph's plot colours, in plot order.
var plotColors = palette.Plots()

// keyboard holds the player's keys, read once per Update.
type keyboard struct{ held uint8 }

// buttons is the client's input source: the keys held at the last Update.
func (k *keyboard) buttons(tick.Tick) uint8 { return k.held }

// read samples the keys: WASD or the arrows move, Space fires, E scans.
func (k *keyboard) read() {
	var b uint8
	pressed := func(keys ...ebiten.Key) bool {
		for _, key := range keys {
			if ebiten.IsKeyPressed(key) {
				return true
			}
		}
		return false
	}
	if pressed(ebiten.KeyW, ebiten.KeyArrowUp) {
		b |= shooter.Up
	}
	if pressed(ebiten.KeyS, ebiten.KeyArrowDown) {
		b |= shooter.Down
	}
	if pressed(ebiten.KeyA, ebiten.KeyArrowLeft) {
		b |= shooter.Left
	}
	if pressed(ebiten.KeyD, ebiten.KeyArrowRight) {
		b |= shooter.Right
	}
	if pressed(ebiten.KeySpace) {
		b |= shooter.Fire
	}
	if pressed(ebiten.KeyE) {
		b |= shooter.Scan
	}
	k.held = b
}

// game is the ebiten.Game of a client: Update runs the client's frame,
// Draw shows the arena, the overlays, the HUD and the net graph.
type game struct {
	ctx  context.Context
	c    *client
	o    clientOptions
	keys *keyboard
	last time.Time

	smooth bool // correction smoothing (key C)
	truth  bool // the server's positions as outlines (key T)
	graph  bool // the net graph (key G)
	decay  predict.Decay

	finished  time.Time // a --ticks run has what it needs
	shotTaken bool
	shotErr   error
	// onFinish, when set, is called when a --ticks run has what it needs,
	// then every second while it lingers (the browser publishes its
	// summary).
	onFinish  func()
	published time.Time
}

func newGame(ctx context.Context, c *client, o clientOptions, keys *keyboard) *game {
	return &game{ctx: ctx, c: c, o: o, keys: keys, smooth: !o.NoSmooth, truth: o.Outlines, graph: true}
}

// Update is called 60 times per second: keys, then the client's frame
// with the wall time since the previous one (the frame's clock runs the
// ticks due).
func (g *game) Update() error {
	now := time.Now()
	if g.last.IsZero() {
		g.last = now
	}
	elapsed := now.Sub(g.last)
	g.last = now
	if !g.o.Bot {
		g.keys.read()
	}
	if inpututil.IsKeyJustPressed(ebiten.KeyC) {
		g.smooth = !g.smooth
	}
	if inpututil.IsKeyJustPressed(ebiten.KeyT) {
		g.truth = !g.truth
	}
	if inpututil.IsKeyJustPressed(ebiten.KeyG) {
		g.graph = !g.graph
	}
	// A slow display (a browser on software WebGL) runs fewer than 12
	// frames a second, and Ebitengine then calls Update once a frame;
	// predict's frame runs at most tick.DefaultMaxSteps ticks a call. So
	// the frame's time runs in pieces of at most that many ticks (at most
	// a second of them: a longer stall is tick sync's to snap), and the
	// client's ticks keep up with the server's.
	const piece = tick.DefaultMaxSteps * time.Second / tickRate
	for n := 0; elapsed > piece && n < tickRate/tick.DefaultMaxSteps; n++ {
		if err := g.c.update(piece, g.decay); err != nil {
			return err
		}
		elapsed -= piece
	}
	if err := g.c.update(min(elapsed, piece), g.decay); err != nil {
		return err
	}
	switch {
	case g.ctx.Err() != nil:
		return ebiten.Termination
	case g.o.Ticks == 0:
		return nil
	case g.finished.IsZero() && g.c.done(g.o.Ticks):
		g.finished = now
		if g.onFinish != nil {
			g.onFinish()
			g.published = now
		}
	case !g.finished.IsZero() && g.shotTaken && !g.o.Linger:
		return ebiten.Termination
	case !g.finished.IsZero(): // lingering: the page stays, the game plays on
		if g.onFinish != nil && now.Sub(g.published) >= time.Second {
			g.onFinish()
			g.published = now
		}
	case time.Since(g.c.started) > g.o.Timeout:
		if !g.c.connected() {
			return fmt.Errorf("timed out after %v, not playing yet (%v)", g.o.Timeout, g.c.rc.State())
		}
		return fmt.Errorf("timed out after %v at tick %v (%d truths matched at or after tick %d)", g.o.Timeout, g.c.tl.Now(), len(g.c.tail(g.o.Ticks)), g.o.Ticks)
	}
	return nil
}

// Layout fixes the logical screen size; the window scales it.
func (g *game) Layout(int, int) (int, int) { return screenW, screenH }

// toScreen returns the screen position of arena position (x, y).
func toScreen(x, y float64) (float32, float32) {
	return arenaX + float32(x)*unit, arenaY + float32(y)*unit
}

// Draw draws the arena, the ships and bullets, the effects, the overlays
// and the HUD; in a --ticks run, the frame after the run finished is the
// screenshot.
func (g *game) Draw(screen *ebiten.Image) {
	c := g.c
	screen.Fill(background())
	vector.DrawFilledRect(screen, arenaX, arenaY, arenaPx, arenaPx, arenaColor(), false)
	if c.connected() {
		g.drawEffects(screen) // under the ships, which stay visible
		g.drawWorld(screen)
		if g.truth {
			g.drawTruth(screen)
		}
	} else {
		ebitenutil.DebugPrintAt(screen, "connecting to "+g.o.Server+" ...", arenaX+150, arenaY+230)
	}
	g.drawHUD(screen)
	if g.graph {
		g.drawGraph(screen)
	}
	if !g.finished.IsZero() && !g.shotTaken {
		g.shotTaken = true
		if g.o.Screenshot != "" {
			g.shotErr = writePNG(screen, g.o.Screenshot)
		}
	}
}

// offset returns e's smoothing offset, when smoothing is on.
func (g *game) offset(e ecs.Entity) (float64, float64) {
	if !g.smooth {
		return 0, 0
	}
	o := g.c.offsets[e]
	return o[0], o[1]
}

// drawWorld draws the bullets, then the ships: the own ship and all
// bullets as predicted (plus the smoothing offset), the other ships
// interpolated at the time the screen shows them.
func (g *game) drawWorld(screen *ebiten.Image) {
	c := g.c
	own := uint64(c.rc.ID())
	for e, b := range c.body.Store().Values() {
		bu, ok := c.bullet.Store().Get(e)
		if !ok {
			continue
		}
		ox, oy := g.offset(e)
		x, y := toScreen(float64(b.X)+ox, float64(b.Y)+oy)
		col := palette.Ship(bu.Player)
		col.R, col.G, col.B = col.R/2+0x7f, col.G/2+0x7f, col.B/2+0x7f // lighter than the ship
		vector.DrawFilledRect(screen, x-bulletPx/2, y-bulletPx/2, bulletPx, bulletPx, col, false)
	}
	st, sf := c.showAt(c.tl.Now())
	for e, sh := range c.ships.Values() {
		if !c.live(e) {
			continue
		}
		var b shooter.Body
		var ok bool
		var ox, oy float64
		if sh.Player == own {
			b, ok = c.body.Store().Get(e)
			ox, oy = g.offset(e)
		} else {
			b, ok = c.interp.At(e, st, sf)
		}
		if !ok {
			continue
		}
		x, y := toScreen(float64(b.X)+ox, float64(b.Y)+oy)
		vector.DrawFilledRect(screen, x-shipPx/2, y-shipPx/2, shipPx, shipPx, palette.Ship(sh.Player), false)
		label := fmt.Sprintf("P%d", sh.Player)
		if sh.Player == own {
			vector.StrokeRect(screen, x-shipPx/2-3, y-shipPx/2-3, shipPx+6, shipPx+6, 2, color.White, false)
			label += " you"
		}
		ebitenutil.DebugPrintAt(screen, label, int(x)-8, int(y)+shipPx/2+2)
	}
}

// drawTruth outlines every ship and bullet where the server had it at the
// newest complete server tick: the own ship's prediction runs ahead of it
// by the round trip, the others are shown behind it by the interpolation
// delay.
func (g *game) drawTruth(screen *ebiten.Image) {
	c := g.c
	newest, ok := c.frame.Newest()
	if !ok {
		return
	}
	for _, r := range c.recs {
		if r.isGone || r.born.After(newest) {
			continue
		}
		var b shooter.Body
		if r.remote {
			b, ok = c.interp.At(r.ce, newest, 0)
		} else {
			b, ok = c.body.At(r.ce, newest)
		}
		if !ok {
			continue
		}
		x, y := toScreen(float64(b.X), float64(b.Y))
		s := float32(bulletPx + 4)
		if r.ship {
			s = shipPx + 8
		}
		vector.StrokeRect(screen, x-s/2, y-s/2, s, s, 1, color.RGBA{0xff, 0xff, 0xff, 0xc0}, false)
	}
}

// drawEffects draws the muzzle flashes of the own shots and the hit
// markers of the own scans, as the effect.Tracker played them (a
// rollback that removed one cancelled it: it is gone).
func (g *game) drawEffects(screen *ebiten.Image) {
	c := g.c
	st, sf := c.showAt(c.tl.Now())
	for _, f := range g.c.flashes {
		fade := 1 - float32(f.age)/flashFrames
		x, y := toScreen(float64(f.fx.X), float64(f.fx.Y))
		if !f.fx.Scan {
			vector.DrawFilledCircle(screen, x, y, 3+6*fade, color.RGBA{0xff, 0xf0, 0x90, uint8(0xff * fade)}, true)
			continue
		}
		// The scan's reach: shooter.Distance is the larger of the two
		// axes, so the range is a square.
		r := float32(shooter.ScanRange) * unit
		vector.StrokeRect(screen, x-r, y-r, 2*r, 2*r, 1, color.RGBA{0x90, 0xc0, 0xff, uint8(0x90 * fade)}, true)
		if !f.fx.Hit {
			continue
		}
		for e, sh := range c.ships.Values() {
			if sh.Player != f.fx.Target {
				continue
			}
			if b, ok := c.interp.At(e, st, sf); ok {
				tx, ty := toScreen(float64(b.X), float64(b.Y))
				// Thin while a rollback may still cancel it, thick once
				// confirmed (effect.Tracker's Confirm).
				red, w := color.RGBA{0xff, 0x30, 0x30, 0xff}, float32(2)
				if f.done {
					w = 4
				}
				vector.StrokeLine(screen, tx-12, ty-12, tx+12, ty+12, w, red, true)
				vector.StrokeLine(screen, tx-12, ty+12, tx+12, ty-12, w, red, true)
			}
		}
	}
}

// onOff names a toggle's state.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "OFF"
}

// drawHUD writes the numbers on a dark panel above the arena.
func (g *game) drawHUD(screen *ebiten.Image) {
	c := g.c
	var b strings.Builder
	who := "keyboard"
	if g.o.Bot {
		who = "bot"
	}
	if !c.connected() {
		fmt.Fprintf(&b, "arena | %s | connecting to %s\n", who, g.o.Server)
	} else {
		st := c.tl.Stats()
		last := c.graph.last()
		in, out := c.graph.rates()
		fmt.Fprintf(&b, "you: P%d (%s) | tick %v | ping %dms | in %.1f kB/s | out %.1f kB/s | ahead %d | %.0f FPS\n",
			c.rc.ID(), who, c.tl.Now(), last.ping.Milliseconds(), in/1000, out/1000, last.ahead, ebiten.ActualFPS())
		fmt.Fprintf(&b, "rollbacks %d (%d ticks resimulated) | corrections %d (max %d) | smoothing %s | server outlines %s\n",
			st.Rollbacks, st.TicksResimulated, st.Corrections, c.maxCorr, onOff(g.smooth), onOff(g.truth))
		fs := c.fx.Stats()
		fmt.Fprintf(&b, "effects played %d, cancelled %d | scans %d (hits %d), server agreed %d/%d | state = server's: %d ticks, %d differ\n",
			fs.Played, fs.Cancelled, len(c.game.Scans()), c.hitMarkers, c.agreed, c.agreed+c.disagreed, c.nMatched, c.mismatches)
	}
	b.WriteString("WASD/arrows move, Space fire, E scan | C smoothing, T server outlines, G net graph\n")
	vector.DrawFilledRect(screen, 4, 2, screenW-8, 70, panelColor(), false)
	ebitenutil.DebugPrintAt(screen, b.String(), 8, 4)
}

// plot is one net graph plot: a title and each sample's value.
type plot struct {
	title string
	unit  string
	value func(s sample) float64
	min   float64 // the scale's least top
}

// plots are the net graph's plots, top to bottom.
var plots = [...]plot{
	{"ping", "ms", func(s sample) float64 { return float64(s.ping.Milliseconds()) }, 50},
	{"bytes in", "B/frame", func(s sample) float64 { return float64(s.in) }, 200},
	{"bytes out", "B/frame", func(s sample) float64 { return float64(s.out) }, 200},
	{"ticks ahead", "", func(s sample) float64 { return float64(s.ahead) }, 8},
	{"rollback depth", "ticks", func(s sample) float64 { return float64(s.depth) }, 8},
	{"corrections", "", func(s sample) float64 { return float64(s.corrections) }, 4},
}

// drawGraph draws the net graph: each plot's last graphSamples frames,
// scaled to its largest value, with its newest value.
func (g *game) drawGraph(screen *ebiten.Image) {
	gr := &g.c.graph
	vector.DrawFilledRect(screen, graphX, graphY, graphW, graphH, palette.Graph(), false)
	h := float32(graphH) / float32(len(plots))
	for i, p := range plots {
		top := float32(graphY) + float32(i)*h
		hi := p.min
		for k := range gr.n {
			hi = max(hi, p.value(gr.at(k)))
		}
		bottom := top + h - 4
		plotH := h - 20
		vector.StrokeLine(screen, graphX, top+h, graphX+graphW, top+h, 1, panelColor(), false)
		dx := float32(graphW-8) / graphSamples
		for k := range gr.n {
			v := float32(p.value(gr.at(k)) / hi)
			x := float32(graphX+4) + float32(graphSamples-gr.n+k)*dx
			vector.DrawFilledRect(screen, x, bottom-v*plotH, dx+0.5, max(v*plotH, 1), plotColors[i], false) // +0.5: no gaps between bars
		}
		ebitenutil.DebugPrintAt(screen, fmt.Sprintf("%s %.0f %s (top %.0f)", p.title, p.value(gr.last()), p.unit, hi), graphX+4, int(top)+2)
	}
}

// writePNG saves the screen as a PNG file.
func writePNG(screen *ebiten.Image, path string) error {
	img := image.NewRGBA(screen.Bounds())
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
