package file

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// quota.json (ROTD's quota.schema.json, coord.Quota) under
// .lock/quota.lock; the rules (rollover, limits, overflow) are coord's.

type quota struct{ b *Backend }

// Load reads quota.json strictly as it stands (missing: empty). Counters
// no addition can produce (negative ones) are refused, exit 2.
func (q quota) Load(ctx context.Context) (*coord.Quota, error) {
	return q.b.loadQuota()
}

func (s *Backend) loadQuota() (*coord.Quota, error) {
	data, err := s.tree.ReadFile(QuotaFile, readLimit(QuotaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return coord.NewQuota(), nil
	}
	if err != nil {
		return nil, IOError(err, "")
	}
	q, err := decodeQuota(s.tree.Path(QuotaFile), data)
	if err != nil {
		return nil, IOError(err, "")
	}
	return q, nil
}

// decodeQuota is quota.json's parse: strict JSON, then counters no
// addition can produce (negative ones) refused.
func decodeQuota(path string, data []byte) (*coord.Quota, error) {
	q := coord.NewQuota()
	if err := format.Unmarshal(path, data, q); err != nil {
		return nil, err
	}
	if q.AgentBreakdown == nil {
		q.AgentBreakdown = map[string]coord.AgentUsage{}
	}
	if err := q.Check(); err != nil {
		return nil, &format.ParseError{File: path, Msg: err.Error()}
	}
	return q, nil
}

func parseQuota(path string, data []byte) error {
	_, err := decodeQuota(path, data)
	return err
}

// Update runs fn on the counters under quota.json's lock and writes them
// (atomically and durably) if fn succeeds; on an error nothing is written.
func (q quota) Update(ctx context.Context, fn func(*coord.Quota) error) (*coord.Quota, error) {
	unlock, err := q.b.lock(ctx, quotaLock)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, err := q.b.loadQuota()
	if err != nil {
		return nil, err
	}
	if err := fn(cur); err != nil {
		return nil, err
	}
	data, _ := json.MarshalIndent(cur, "", "  ")
	var nd *fsops.NotDurableError
	if err := q.b.writeDoc(QuotaFile, append(data, '\n'), parseQuota); errors.As(err, &nd) {
		q.b.warn(nd) // replaced: every reader sees it
	} else if err != nil {
		return nil, IOError(err, "")
	}
	return cur, nil
}
