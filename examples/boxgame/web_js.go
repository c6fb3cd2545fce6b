//go:build js

package main

import (
	"context"
	"errors"
	"io"
)

// serveWeb: a browser cannot serve pages.
func serveWeb(context.Context, options, io.Writer, io.Writer) (string, error) {
	return "", errors.New("a browser cannot serve the page: run boxgame --web natively")
}
