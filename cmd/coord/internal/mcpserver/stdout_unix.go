//go:build unix

package mcpserver

import (
	"os"

	"golang.org/x/sys/unix"
)

// displaced keeps the *os.File that was os.Stdout reachable. Were it
// collected, its finalizer would close descriptor 1 (by then a copy of
// stderr): stray writes would fail, and the next file the server opened
// could be given descriptor 1 and receive them.
var displaced *os.File

// protectStdout sets the process's stdout aside for the protocol: it
// returns a copy of file descriptor 1, then makes descriptor 1 a copy of
// stderr and points os.Stdout there, so that anything else written to
// stdout (a stray print, a panic, a child process) lands on stderr.
func protectStdout() (*os.File, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	displaced = os.Stdout
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "protocol"), nil
}
