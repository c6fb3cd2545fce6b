// Package palette holds the arena's colours that its screenshots are
// checked for: the ships' (one per player) and the net graph's. The game
// draws with them and arena/checkshot looks for them, so the two cannot
// drift apart.
package palette

import "image/color"

// ships are the ship colours, player 1 first.
var ships = [...]color.RGBA{
	{0xe8, 0x4a, 0x5f, 0xff}, // red
	{0x3d, 0x9b, 0xe9, 0xff}, // blue
	{0x58, 0xc4, 0x6a, 0xff}, // green
	{0xf2, 0xb1, 0x34, 0xff}, // amber
	{0xb0, 0x6e, 0xe0, 0xff}, // violet
	{0x4f, 0xd1, 0xc5, 0xff}, // teal
}

// Ship returns the colour of player p's ship. Players are numbered from 1
// in the order they joined the server (replicate's client ids); the
// colours repeat after six.
func Ship(p uint64) color.RGBA {
	return ships[(p+uint64(len(ships))-1)%uint64(len(ships))]
}

// Graph is the net graph's background.
func Graph() color.RGBA { return color.RGBA{0x0b, 0x2a, 0x1c, 0xff} }

// Plots are the net graph's plot colours, top to bottom: ping, bytes
// in, bytes out, ticks ahead, rollback depth, corrections.
func Plots() []color.RGBA {
	return []color.RGBA{
		{0x7f, 0xdb, 0xff, 0xff},
		{0x2e, 0xcc, 0x40, 0xff},
		{0xff, 0x85, 0x1b, 0xff},
		{0xb1, 0x0d, 0xc9, 0xff},
		{0xff, 0xdc, 0x00, 0xff},
		{0xff, 0x41, 0x36, 0xff},
	}
}
