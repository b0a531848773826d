package nats

import (
	"context"
	"encoding/json"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// Quota is one document, "quota", in quota.json's format, changed by
// compare-and-set; the rules (rollover, limits, overflow) are coord's.

type quota struct{ b *Backend }

func (b *Backend) readQuota(ctx context.Context) (*coord.Quota, *doc, error) {
	docs, err := b.readDocs(ctx, keyQuota)
	if err != nil {
		return nil, nil, err
	}
	d := docs[keyQuota]
	if !d.present() {
		return coord.NewQuota(), d, nil
	}
	q, err := decodeQuota(b.where(keyQuota), d.data)
	if err != nil {
		return nil, nil, coord.Errorf(coord.CodeIO, "%v", err).WithHint("fix the quota key; 'coord doctor' checks it")
	}
	return q, d, nil
}

// decodeQuota is the quota key's parse: strict JSON, then counters no
// addition can produce (negative ones) refused.
func decodeQuota(where string, data []byte) (*coord.Quota, error) {
	q := coord.NewQuota()
	if err := format.Unmarshal(where, data, q); err != nil {
		return nil, err
	}
	if q.AgentBreakdown == nil {
		q.AgentBreakdown = map[string]coord.AgentUsage{}
	}
	if err := q.Check(); err != nil {
		return nil, &format.ParseError{File: where, Msg: err.Error()}
	}
	return q, nil
}

// Load reads the counters as they stand (missing: empty).
func (q quota) Load(ctx context.Context) (*coord.Quota, error) {
	cur, _, err := q.b.readQuota(ctx)
	return cur, err
}

// Update runs fn on the counters and commits them by compare-and-set if
// fn succeeds, again on a lost race; on an error nothing is written.
func (q quota) Update(ctx context.Context, fn func(*coord.Quota) error) (*coord.Quota, error) {
	var cur *coord.Quota
	err := q.b.update(ctx, "the quota", func(ctx context.Context) (*doc, error) {
		var d *doc
		var err error
		cur, d, err = q.b.readQuota(ctx)
		return d, err
	}, func(*doc) ([]byte, error) {
		if err := fn(cur); err != nil {
			return nil, err
		}
		data, _ := json.MarshalIndent(cur, "", "  ")
		return append(data, '\n'), nil
	})
	if err != nil {
		return nil, err
	}
	return cur, nil
}
