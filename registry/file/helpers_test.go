package file

import (
	"context"
	"time"

	"github.com/rotd/coordination/coord"
)

// archive moves done tasks completed before cutoff (all when zero) to the
// archive, as the application does: coord.Txn.ArchiveDone in an Update.
func (s *Backend) archive(ctx context.Context, cutoff time.Time) ([]string, error) {
	var moved []string
	err := s.update(ctx, func(tx *coord.Txn) error {
		moved = tx.ArchiveDone(cutoff)
		return nil
	})
	return moved, err
}

// logLines collects the last n log lines (n <= 0: all) through the
// LogStore.
func (s *Backend) logLines(n int) (lines []string, skipped int, err error) {
	skipped, err = s.Log().Read(context.Background(), n, func(line string) error {
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return lines, skipped, nil
}
