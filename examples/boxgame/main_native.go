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
