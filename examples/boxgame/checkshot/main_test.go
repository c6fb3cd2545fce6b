package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/examples/boxgame/sim"
)

func writeImage(t *testing.T, img image.Image) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shot.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// TestCheck: a screenshot with both boxes passes; a blank one, and one
// missing a box, fail with the reason.
func TestCheck(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 100))
	fill(img, img.Bounds(), color.RGBA{20, 20, 20, 255})
	blank := writeImage(t, img)
	fill(img, image.Rect(0, 0, 100, 5), color.RGBA{200, 200, 200, 255}) // text
	fill(img, image.Rect(10, 10, 30, 30), sim.Color(0))
	oneBox := writeImage(t, img)
	fill(img, image.Rect(50, 50, 70, 70), sim.Color(1))
	both := writeImage(t, img)

	if _, err := check(both, 2, 200); err != nil {
		t.Fatalf("two boxes: %v", err)
	}
	if _, err := check(blank, 2, 200); err == nil || !strings.Contains(err.Error(), "blank") {
		t.Fatalf("blank image: %v", err)
	}
	if _, err := check(oneBox, 2, 200); err == nil || !strings.Contains(err.Error(), "player 2") {
		t.Fatalf("one box: %v", err)
	}
	if code := run([]string{"--players", "2", both, oneBox}, os.Stdout, os.Stderr); code != 1 {
		t.Fatalf("exit %d with a failing file", code)
	}
}
