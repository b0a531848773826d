// Package engines links every storage engine into a program: each
// registers itself with registry/backend when linked (file:// and a
// project root: registry/file; nats://: registry/nats). A program that
// opens backends imports this package for its side effect, and then
// names only registry/backend.
package engines

import (
	_ "github.com/rotd/coordination/registry/file" // file:// and project roots
	_ "github.com/rotd/coordination/registry/nats" // nats://
)
