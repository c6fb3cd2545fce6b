// Command checkshot checks arena screenshots (CI): each PNG must show the
// ships of --players players (at least --min-pixels pixels of each
// player's colour, package palette), the net graph (its background over
// at least --min-graph pixels, and every plot's colour somewhere), and
// must not be blank (at least 3 distinct colours).
//
//	go run ./arena/checkshot --players 2 a.png b.png
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"

	"github.com/rewindgo/rewind/examples/arena/palette"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checkshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	players := fs.Int("players", 2, "players whose ships must be visible")
	minPixels := fs.Int("min-pixels", 100, "pixels of each player's colour required")
	minGraph := fs.Int("min-graph", 20000, "pixels of the net graph's background required")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "checkshot: no PNG files given")
		return 2
	}
	code := 0
	for _, path := range fs.Args() {
		res, err := check(path, *players, *minPixels, *minGraph)
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
func check(path string, players, minPixels, minGraph int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return "", err
	}
	c := count(img, players)
	desc := fmt.Sprintf("%d colours, ship pixels %v, graph %d pixels, plot pixels %v", c.colors, c.ships, c.graph, c.plots)
	if c.colors < 3 {
		return "", fmt.Errorf("blank or single-coloured image: %s", desc)
	}
	for i, n := range c.ships {
		if n < minPixels {
			return "", fmt.Errorf("ship of player %d not visible (%d pixels of its colour, want %d): %s", i+1, n, minPixels, desc)
		}
	}
	if c.graph < minGraph {
		return "", fmt.Errorf("no net graph (%d pixels of its background, want %d): %s", c.graph, minGraph, desc)
	}
	for i, n := range c.plots {
		if n == 0 {
			return "", fmt.Errorf("net graph plot %d not drawn: %s", i+1, desc)
		}
	}
	return desc, nil
}

// counts is what count found in an image.
type counts struct {
	colors int
	ships  []int // pixels of each player's ship colour
	graph  int   // pixels of the net graph's background
	plots  []int // pixels of each plot's colour
}

func count(img image.Image, players int) counts {
	seen := map[color.RGBA]bool{}
	c := counts{ships: make([]int, players), plots: make([]int, len(palette.Plots()))}
	plots := palette.Plots()
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			px := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[px] = true
			if px == palette.Graph() {
				c.graph++
			}
			for i := range c.ships {
				if px == palette.Ship(uint64(i+1)) {
					c.ships[i]++
				}
			}
			for i, pc := range plots {
				if px == pc {
					c.plots[i]++
				}
			}
		}
	}
	c.colors = len(seen)
	return c
}
