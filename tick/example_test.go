package tick_test

import (
	"fmt"
	"time"

	"github.com/rewindgo/rewind/tick"
)

func ExampleClock() {
	clock, err := tick.NewClock(60)
	if err != nil {
		panic(err)
	}
	var frame tick.Tick
	// The render loop measures the wall time between frames and passes it in.
	for _, elapsed := range []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 40 * time.Millisecond} {
		for range clock.Advance(elapsed) {
			frame = frame.Next() // simulate one fixed step
		}
		fmt.Printf("after %v: frame %v, alpha %.2f\n", elapsed, frame, clock.Alpha())
	}
	// Output:
	// after 10ms: frame 0, alpha 0.60
	// after 10ms: frame 1, alpha 0.20
	// after 40ms: frame 3, alpha 0.60
}

func ExampleExpand16() {
	// The sender puts only the low 16 bits of its tick on the wire; the
	// receiver rebuilds the full tick near its own.
	sent := tick.Tick(0x0001_0002)
	local := tick.Tick(0x0000_FFF0)
	fmt.Printf("%#x\n", uint32(tick.Expand16(uint16(sent), local)))
	// Output: 0x10002
}

func ExampleTick_Sub() {
	older, newer := tick.Tick(0xFFFF_FFFE), tick.Tick(3)
	fmt.Println(newer.Sub(older), newer.After(older), tick.Max(older, newer))
	// Output: 5 true 3
}

func ExampleDelta() {
	// The frame durations at 60 Hz are whole nanoseconds that add up to
	// exactly one second.
	var sum time.Duration
	for f := range tick.Tick(60) {
		sum += tick.Delta(f, 60)
	}
	fmt.Println(tick.Delta(0, 60), tick.Delta(1, 60), sum, tick.Elapsed(90, 60))
	// Output: 16.666666ms 16.666667ms 1s 1.5s
}
