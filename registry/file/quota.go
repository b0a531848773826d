package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"time"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/format"
)

const quotaLock = LockDir + "/quota.lock"

// AgentUsage is one agent's usage in the current UTC day.
type AgentUsage struct {
	Tokens       int64  `json:"tokens"`
	Requests     int64  `json:"requests"`
	LastActivity string `json:"last_activity,omitempty"`
}

// DayUsage is a past day's totals.
type DayUsage struct {
	Tokens   int64                 `json:"tokens"`
	Requests int64                 `json:"requests"`
	Agents   map[string]AgentUsage `json:"agents,omitempty"`
}

// Quota is quota.json in ROTD's shape (counters for the current UTC day,
// last_reset at its start) plus the totals of earlier days.
type Quota struct {
	TokensUsed     int64                 `json:"tokens_used"`
	Requests       int64                 `json:"requests"`
	LastReset      string                `json:"last_reset"`
	DailyLimit     *int64                `json:"daily_limit,omitempty"`
	RequestLimit   *int64                `json:"request_limit,omitempty"`
	AgentBreakdown map[string]AgentUsage `json:"agent_breakdown"`
	History        map[string]DayUsage   `json:"history,omitempty"`
}

// LoadQuota reads quota.json strictly and rolls it over to now's UTC day.
func (s *Store) LoadQuota() (*Quota, error) {
	q := &Quota{AgentBreakdown: map[string]AgentUsage{}}
	data, err := s.Tree.ReadFile(QuotaFile, maxSmallFile*16)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, IOError(err, "")
	}
	if err == nil {
		if err := format.CheckStrict(s.Tree.Path(QuotaFile), data); err != nil {
			return nil, IOError(err, "")
		}
		if err := json.Unmarshal(data, q); err != nil {
			return nil, IOError(&format.ParseError{File: s.Tree.Path(QuotaFile), Msg: err.Error()}, "")
		}
		if q.AgentBreakdown == nil {
			q.AgentBreakdown = map[string]AgentUsage{}
		}
		if err := q.check(); err != nil {
			return nil, IOError(&format.ParseError{File: s.Tree.Path(QuotaFile), Msg: err.Error()}, "")
		}
	}
	q.rollover(s.Clock().UTC())
	return q, nil
}

func (q *Quota) rollover(now time.Time) {
	day := now.Format("2006-01-02")
	start := day + "T00:00:00Z"
	last, err := coord.ParseTime(q.LastReset)
	if err == nil && last.UTC().Format("2006-01-02") == day {
		return
	}
	if err == nil && (q.TokensUsed > 0 || q.Requests > 0) {
		if q.History == nil {
			q.History = map[string]DayUsage{}
		}
		q.History[last.UTC().Format("2006-01-02")] = DayUsage{q.TokensUsed, q.Requests, q.AgentBreakdown}
	}
	q.TokensUsed, q.Requests, q.LastReset = 0, 0, start
	q.AgentBreakdown = map[string]AgentUsage{}
}

// AddQuota adds usage for agent under quota.json's lock. If a limit would
// be exceeded, nothing is written and the error exits 3.
func (s *Store) AddQuota(ctx context.Context, agent string, tokens, requests int64, lim coord.QuotaLimits) (*Quota, error) {
	unlock, err := s.Tree.Lock(ctx, quotaLock, s.LockWait, s.holderLine())
	if err != nil {
		return nil, IOError(err, "")
	}
	defer unlock()
	q, err := s.LoadQuota()
	if err != nil {
		return nil, err
	}
	if lim.Tokens > 0 {
		q.DailyLimit = &lim.Tokens
	}
	if lim.Requests > 0 {
		q.RequestLimit = &lim.Requests
	}
	if tokens < 0 || requests < 0 {
		return q, coord.Errorf(coord.CodeUsage, "quota: usage to add must not be negative (%d tokens, %d requests)", tokens, requests)
	}
	// Counters never wrap: a sum past 2^63-1 would turn negative and pass
	// every limit.
	total, ok1 := addCount(q.TokensUsed, tokens)
	reqs, ok2 := addCount(q.Requests, requests)
	u := q.AgentBreakdown[agent]
	uTokens, ok3 := addCount(u.Tokens, tokens)
	uReqs, ok4 := addCount(u.Requests, requests)
	if !(ok1 && ok2 && ok3 && ok4) {
		return q, coord.Errorf(coord.CodeConflict, "quota: adding %d tokens and %d requests to today's %d and %d would overflow the counters", tokens, requests, q.TokensUsed, q.Requests).
			WithHint("nothing was added; check the numbers given to 'coord quota add'")
	}
	if lim.Tokens > 0 && total > lim.Tokens {
		return q, coord.Errorf(coord.CodeConflict, "quota: %d tokens today plus %d exceeds the daily limit %d", q.TokensUsed, tokens, lim.Tokens).
			WithHint("wait for the next UTC day or raise quota_daily_tokens in config.json")
	}
	if lim.Requests > 0 && reqs > lim.Requests {
		return q, coord.Errorf(coord.CodeConflict, "quota: %d requests today plus %d exceeds the daily limit %d", q.Requests, requests, lim.Requests).
			WithHint("wait for the next UTC day or raise quota_daily_requests in config.json")
	}
	now := s.Clock().UTC()
	q.TokensUsed, q.Requests = total, reqs
	u.Tokens, u.Requests = uTokens, uReqs
	u.LastActivity = coord.FormatTime(now)
	q.AgentBreakdown[agent] = u
	b, _ := json.MarshalIndent(q, "", "  ")
	if err := s.Tree.WriteFile(QuotaFile, append(b, '\n'), 0o644); err != nil {
		return nil, IOError(err, "")
	}
	return q, nil
}

// addCount adds two non-negative counters; ok is false when the sum would
// not fit in an int64.
func addCount(a, b int64) (int64, bool) {
	if b > math.MaxInt64-a {
		return 0, false
	}
	return a + b, true
}

// check refuses counters no addition can produce: negative ones, which
// would let usage pass a limit.
func (q *Quota) check() error {
	if q.TokensUsed < 0 || q.Requests < 0 {
		return fmt.Errorf("negative counters (tokens_used %d, requests %d)", q.TokensUsed, q.Requests)
	}
	for a, u := range q.AgentBreakdown {
		if u.Tokens < 0 || u.Requests < 0 {
			return fmt.Errorf("agent_breakdown %q has negative counters", a)
		}
	}
	return nil
}
