package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	rsignal "github.com/rewindgo/rewind/transport/signal"
)

type signalOptions struct {
	Listen   string
	TTL      time.Duration
	MaxRooms int
	Origins  string
}

func signalFlags() (*flag.FlagSet, *signalOptions) {
	o := &signalOptions{}
	fs := flag.NewFlagSet("rewind signal", flag.ContinueOnError)
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:8090", "TCP `address` to serve WebSocket rooms on (\":8090\": every interface)")
	fs.DurationVar(&o.TTL, "ttl", 10*time.Minute, "how long a room lives after its first peer joined")
	fs.IntVar(&o.MaxRooms, "max-rooms", 1024, "rooms open at once")
	fs.StringVar(&o.Origins, "origins", "", "comma-separated hosts of web pages allowed to connect (\"*\": any; default: same host only)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind signal [flags]

A WebRTC signalling server (package transport/signal) until interrupted:
peers that connect to ws://ADDR/room/NAME?n=N are numbered 0..N-1 in the
order they join, and their offers, answers and ICE candidates are relayed
to each other, so that they can open WebRTC data channels
(contrib/webrtc). No game traffic goes through it.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o
}

func signalCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o := signalFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	if o.TTL <= 0 || o.MaxRooms <= 0 {
		return usageError("--ttl and --max-rooms must be positive")
	}
	cfg := rsignal.ServerConfig{RoomTTL: o.TTL, MaxRooms: o.MaxRooms}
	if o.Origins != "" {
		cfg.OriginPatterns = strings.Split(o.Origins, ",")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.Listen)
	if err != nil {
		return err
	}
	srv := rsignal.NewServer(cfg)
	mux := http.NewServeMux()
	mux.Handle("/room/{name}", srv)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "signal: rooms at ws://%s/room/NAME?n=PEERS\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		srv.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = hs.Shutdown(sctx)
		cancel()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	st := srv.Stats()
	fmt.Fprintf(stdout, "signal: stopped; %d messages relayed, %d dropped, %d rooms expired, %d peers refused\n",
		st.Relayed, st.Dropped, st.Expired, st.Refused)
	return err
}
