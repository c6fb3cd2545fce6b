//go:build !js

package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// publishSummary hands the summary of a --frames run to the page (browser
// build only; the native build prints it).
func publishSummary(summary) {}

// markComplete tells the page that the match is complete and its last
// frame drawn (browser build only).
func markComplete() {}

// pageStatus shows msg on the page while the game has no screen yet
// (browser build only; "" removes it).
func pageStatus(string) {}
