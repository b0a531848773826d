package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Widths at which tables clip free text (coord.Cell): titles, paths and
// the like; the reasons of 'ready --explain'; log lines in 'top'. Ids are
// never clipped (they are at most 64 characters); --json prints every
// field whole.
const (
	textWidth   = 60
	reasonWidth = 100
	logWidth    = 160
)

// isTerminal reports whether w is a terminal. Escape sequences (top's
// redraw, the demo's bold headings) are written only to one.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}
