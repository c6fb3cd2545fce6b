// Package bad breaks every rule in simulation code.
package bad

import (
	crand "crypto/rand"
	"maps"
	"math/rand"
	randv2 "math/rand/v2"
	"reflect"
	"sort"
	"time"
	"unsafe"

	"github.com/rewindgo/rewind/examples/helper"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/rollback/runner"
)

type world struct {
	scores map[int]int
	ents   []*int
	n      int
}

var frames int

var w world

// step is the game's runner.Step, through a Config literal.
func step(ctx *runner.Context) { // want step:"sim findings"
	for k := range w.scores { // want `range over a map: Go randomises map iteration order`
		_ = k
	}
	for k := range maps.Keys(w.scores) { // want `range over maps.Keys`
		_ = k
	}
	_ = time.Now()              // want `time.Now: the wall clock differs`
	_ = time.Since(time.Time{}) // want `time.Since`
	_ = rand.Intn(6)            // want `math/rand.Intn: the global generator`
	_ = randv2.IntN(6)          // want `math/rand/v2.IntN`
	_ = rand.New(rand.NewSource(1))
	var b [8]byte
	_, _ = crand.Read(b[:]) // want `crypto/rand.Read`
	frames++                // want `write to package-level variable frames`
	w.n = 3                 // want `write to package-level variable w`
	sub()
	_ = helper.Deeper() // want `call to helper.Deeper reaches, at helper.go:8: time.Now`
	_ = helper.Pure(1, 2)
	debug() //rewind:ok debug counter, not state
}

// sub is reached from step.
func sub() { // want sub:"sim findings"
	done := make(chan int, 1) // want `make\(chan\)`
	go func() {               // want `go statement`
		done <- 1 // want `channel send`
	}()
	<-done   // want `channel receive`
	select { // want `select statement`
	default:
	}
	p := unsafe.Pointer(&w)                  // want `unsafe.Pointer: memory layout`
	_ = unsafe.Sizeof(w)                     // constant: fine
	_ = uintptr(p)                           // want `uintptr of a pointer`
	_ = reflect.ValueOf(&w).Pointer()        // want `reflect.Value.Pointer`
	sort.Slice(w.ents, func(i, j int) bool { // sorting by address
		return uintptr(unsafe.Pointer(w.ents[i])) < uintptr(unsafe.Pointer(w.ents[j])) // want `uintptr of a pointer` `unsafe.Pointer` `uintptr of a pointer` `unsafe.Pointer`
	})
}

func debug() { // want debug:"sim findings"
	frames--
}

// notSim breaks the rules but is never run as the simulation.
func notSim() { // want notSim:"sim findings"
	_ = time.Now()
}

func setup() { // want setup:"sim findings"
	runner.New(runner.Config{Step: step})
	var cfg runner.Config
	cfg.Step = func(ctx *runner.Context) {
		_ = time.Now() // want `time.Now`
	}
	runner.Run(runner.Step(func(ctx *runner.Context) {
		for range w.scores { // want `range over a map`
		}
	}))
	var tl predict.Timeline
	tl.Step(func(t uint32) {
		_ = rand.Int() // want `math/rand.Int`
	})
	var sf predict.ServerFrame[int]
	_ = sf.Frame(1, func(t uint32, input func(id uint64) int) {
		go notSimEither() // want `go statement`
	})
	predict.Helper()
	viaVar := func(ctx *runner.Context) {
		_ = time.Since(time.Time{}) // want `time.Since`
	}
	runner.New(runner.Config{Step: viaVar})
}

func notSimEither() {}

//rewind:sim
func advance(frame int) { // want advance:"sim findings"
	frames = frame // want `write to package-level variable frames`
}

//rewind:sim
func timers() { // want timers:"sim findings"
	t := time.NewTimer(time.Second) // want `time.NewTimer`
	_ = t
	time.AfterFunc(time.Second, func() {}) // want `time.AfterFunc`
	time.Sleep(time.Millisecond)           // want `time.Sleep`
	_ = time.Tick(time.Second)             // want `time.Tick`
	for range maps.Values(w.scores) {      // want `range over maps.Values`
	}
	for range maps.All(w.scores) { // want `range over maps.All`
	}
	ch := make(chan int) // want `make\(chan\)`
	for range ch {       // want `range over a channel`
	}
	_ = rand.New(rand.NewSource(1)).Intn(3) // a generator of its own: not the global one
	_ = randv2.New(randv2.NewPCG(1, 2)).IntN(3)
	d := 2 * time.Second // time.Duration arithmetic is fine
	_ = d
}
