// Command checkshot checks box game screenshots (CI): each PNG must show
// the boxes of --players players (at least --min-pixels pixels of each
// player's colour) and must not be blank (at least 3 distinct colours).
//
//	go run ./boxgame/checkshot --players 2 a.png b.png
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"

	"github.com/rewindgo/rewind/examples/boxgame/sim"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checkshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	players := fs.Int("players", 2, "players whose boxes must be visible")
	minPixels := fs.Int("min-pixels", 200, "pixels of each player's colour required")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "checkshot: no PNG files given")
		return 2
	}
	code := 0
	for _, path := range fs.Args() {
		res, err := check(path, *players, *minPixels)
		if err != nil {
			fmt.Fprintf(stderr, "checkshot: %s: %v\n", path, err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: OK, %s\n", path, res)
	}
	return code
}

// check opens a PNG and checks it; it returns a description of what it saw.
func check(path string, players, minPixels int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return "", err
	}
	colors, boxPixels := count(img, players)
	desc := fmt.Sprintf("%d colours, box pixels %v", colors, boxPixels)
	if colors < 3 {
		return "", fmt.Errorf("blank or single-coloured image: %s", desc)
	}
	for h, n := range boxPixels {
		if n < minPixels {
			return "", fmt.Errorf("box of player %d not visible (%d pixels of its colour, want %d): %s", h+1, n, minPixels, desc)
		}
	}
	return desc, nil
}

// count returns the number of distinct colours in img and, for each player,
// the number of pixels of the player's box colour.
func count(img image.Image, players int) (int, []int) {
	seen := map[color.RGBA]bool{}
	box := make([]int, players)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[c] = true
			for h := range box {
				if c == sim.Color(h) {
					box[h]++
				}
			}
		}
	}
	return len(seen), box
}
