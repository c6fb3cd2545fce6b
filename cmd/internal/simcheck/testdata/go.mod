module github.com/rewindgo/rewind

go 1.26
