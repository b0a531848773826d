//go:build !unix

package mcpserver

import "os"

// protectStdout sets os.Stdout aside for the protocol and points it at
// stderr (descriptors are not rearranged here).
func protectStdout() (*os.File, error) {
	out := os.Stdout
	os.Stdout = os.Stderr
	return out, nil
}
