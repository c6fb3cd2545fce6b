// Package simcheck is the determinism analyzer behind "rewind vet" and the
// go vet tool cmd/rewind-vet: it checks that simulation code follows the
// determinism rules of rewind (a rollback peer, a predicting client and an
// authoritative server must compute the same bits from the same inputs).
//
// # What is simulation code
//
// The analyzer finds the functions that rewind runs as the simulation:
//
//   - a function (literal, function or method value) used as a
//     runner.Step (the Step field of runner.Config, an assignment, an
//     argument or a conversion of type runner.Step);
//   - the sim argument of predict.Timeline.Step, predict.ClientFrame.Frame
//     and predict.ServerFrame.Frame (the authoritative server's step);
//   - a function declaration whose doc comment holds the directive
//     //rewind:sim (for sessions driven by hand: the code that answers a
//     rollback Advance request, a server's own tick).
//
// A function literal counts through the variable that holds it (step :=
// func(...){...}; runner.Config{Step: step}). Everything those functions
// call, statically, in the same module is simulation code too.
// Calls into rewind's library packages are not followed (they are the
// deterministic API the rules point to); neither are calls through
// interfaces or function values.
//
// # What it reports
//
// In simulation code: range over a map (and maps.Keys, maps.Values,
// maps.All), wall-clock time (time.Now, time.Since, timers, tickers,
// sleeps), the global generators of math/rand and math/rand/v2, crypto/rand,
// go statements, channel operations and select, package unsafe, addresses
// turned into numbers (uintptr conversions of pointers, reflect's Pointer
// and UnsafeAddr), and writes to package-level variables. Each finding says
// why it breaks determinism and what to use instead: the world's rng.Rand,
// the frame's tick time, sorted keys, package fixed.
//
// With the float option (-float for rewind vet, -simcheck.float for go
// vet) it also notes x*y + z in floating point: Go may fuse it into one
// fused multiply-add on arm64, ppc64le, s390x, riscv64 and amd64 with
// GOAMD64=v3, and not on default amd64 or wasm, so peers on different
// platforms can compute different bits.
//
// A line that is deliberately outside the rules (a debug counter, say)
// carries the comment //rewind:ok with a reason, on the line itself or
// the line above.
//
// # Facts
//
// Every function of a package in a module gets a fact listing the findings
// in its body and in what it calls in the same module, so that a sim
// function in one package is checked through the helpers it calls in
// another; a finding in another package is reported at the call that
// reaches it.
package simcheck
