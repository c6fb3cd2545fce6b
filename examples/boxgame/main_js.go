//go:build js

package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"syscall/js"
)

// main of the browser build: the flags come from the page's URL query,
// ?frames=300&headless, each key=value as --key=value and a bare key as
// --key. Without ?signal= the game joins room ?room= (default boxgame) of
// the server that served the page (boxgame --web). The summary of a
// --frames run goes to the console, to globalThis.rewindSummary (JSON) and
// to a POST to "report" (boxgame --web prints it).
func main() {
	code := run(queryArgs(js.Global().Get("location")), os.Stdout, os.Stderr)
	js.Global().Set("rewindExitCode", code)
	if code != 0 {
		fmt.Fprintf(os.Stderr, "boxgame: exit code %d\n", code)
	}
}

// queryArgs turns the page's query into command-line flags.
func queryArgs(loc js.Value) []string {
	q, err := url.ParseQuery(trimQuestion(loc.Get("search").String()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "boxgame: query: %v\n", err)
	}
	var args []string
	for k, vs := range q { // flag order does not matter
		for _, v := range vs {
			if v == "" {
				args = append(args, "--"+k)
			} else {
				args = append(args, "--"+k+"="+v)
			}
		}
	}
	if q.Get("signal") == "" {
		scheme := "ws"
		if loc.Get("protocol").String() == "https:" {
			scheme = "wss"
		}
		room := q.Get("room")
		if room == "" {
			room = "boxgame"
		}
		args = append(args, "--signal="+scheme+"://"+loc.Get("host").String()+"/room/"+url.PathEscape(room))
	}
	return args
}

func trimQuestion(s string) string {
	if len(s) > 0 && s[0] == '?' {
		return s[1:]
	}
	return s
}

func publishSummary(s summary) {
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	js.Global().Set("rewindSummary", string(b))
	opts := js.Global().Get("Object").New()
	opts.Set("method", "POST")
	opts.Set("body", string(b))
	js.Global().Call("fetch", "report", opts)
}

func markComplete() { js.Global().Set("rewindComplete", true) }

// pageStatus shows msg in a line at the top of the page while the game
// has no screen yet (it waits for the room); "" removes it.
func pageStatus(msg string) {
	doc := js.Global().Get("document")
	el := doc.Call("getElementById", "boxgame-status")
	if msg == "" {
		if !el.IsNull() {
			el.Call("remove")
		}
		return
	}
	if el.IsNull() {
		el = doc.Call("createElement", "div")
		el.Set("id", "boxgame-status")
		el.Get("style").Set("cssText", "position:absolute;left:1em;top:1em;color:#ccc;font:14px sans-serif")
		doc.Get("body").Call("appendChild", el)
	}
	el.Set("textContent", "rewind box game: "+msg)
}
