package coord

import "context"

// Updater is the transaction half of a TaskStore, as the stale sweep of
// package heartbeat uses it until the application layer takes the sweep
// over.
type Updater interface {
	Update(ctx context.Context, fn func(*Txn) error) error
	View(ctx context.Context, fn func(*Txn) error) error
}
