package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/rewindgo/rewind/examples/arena/palette"
)

// writeShot writes a 200x200 PNG: background, the ships of players
// 1..ships (12x12 each), and, with graph, a net graph panel with a pixel
// of each plot colour.
func writeShot(t *testing.T, ships int, graph bool) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	for i := range img.Pix {
		img.Pix[i] = 0x20
	}
	fill := func(x0, y0, w, h int, c color.RGBA) {
		for y := y0; y < y0+h; y++ {
			for x := x0; x < x0+w; x++ {
				img.SetRGBA(x, y, c)
			}
		}
	}
	for p := range ships {
		fill(10+20*p, 10, 12, 12, palette.Ship(uint64(p+1)))
	}
	if graph {
		fill(100, 0, 100, 200, palette.Graph())
		for i, c := range palette.Plots() {
			img.SetRGBA(110+i, 100, c)
		}
	}
	path := filepath.Join(t.TempDir(), "shot.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func TestCheck(t *testing.T) {
	if _, err := check(writeShot(t, 2, true), 2, 100, 1000); err != nil {
		t.Errorf("two ships and a graph: %v", err)
	}
	if _, err := check(writeShot(t, 1, true), 2, 100, 1000); err == nil {
		t.Error("player 2's ship missing: accepted")
	}
	if _, err := check(writeShot(t, 2, false), 2, 100, 1000); err == nil {
		t.Error("no net graph: accepted")
	}
}
