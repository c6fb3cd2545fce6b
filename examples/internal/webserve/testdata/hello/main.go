// Command hello is the smallest program webserve's test builds for
// GOOS=js GOARCH=wasm.
package main

func main() { println("hello") }
