package coord

import "context"

// Backend stores the registry, its locks and the log. The file-system
// backend (package registry) is the embedded default; a distributed one
// implements the same interface, so commands never change.
type Backend interface {
	// Update loads the registry under an exclusive lock, reconciles lock
	// state against it, runs fn, and, if fn succeeds and changed anything,
	// commits atomically. Events recorded in the Txn are logged.
	Update(ctx context.Context, fn func(*Txn) error) error
	// View loads a consistent snapshot without taking the lock.
	View(ctx context.Context, fn func(*Txn) error) error
	// AppendLog appends events to the coordination log.
	AppendLog(ctx context.Context, events ...Event) error
}
