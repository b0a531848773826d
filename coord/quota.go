package coord

import (
	"fmt"
	"math"
	"time"
)

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

// Quota is the shared budget in ROTD's quota.json shape (counters for the
// current UTC day, last_reset at its start) plus the totals of earlier
// days.
type Quota struct {
	TokensUsed     int64                 `json:"tokens_used"`
	Requests       int64                 `json:"requests"`
	LastReset      string                `json:"last_reset"`
	DailyLimit     *int64                `json:"daily_limit,omitempty"`
	RequestLimit   *int64                `json:"request_limit,omitempty"`
	AgentBreakdown map[string]AgentUsage `json:"agent_breakdown"`
	History        map[string]DayUsage   `json:"history,omitempty"`
}

// QuotaLimits are the optional daily limits of the configuration.
type QuotaLimits struct {
	Tokens, Requests int64 // 0: none
}

// NewQuota is an empty quota.
func NewQuota() *Quota { return &Quota{AgentBreakdown: map[string]AgentUsage{}} }

// Check refuses counters no addition can produce: negative ones, which
// would let usage pass a limit.
func (q *Quota) Check() error {
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

// Rollover moves the counters to now's UTC day, keeping the old day's
// totals in History.
func (q *Quota) Rollover(now time.Time) {
	if q.AgentBreakdown == nil {
		q.AgentBreakdown = map[string]AgentUsage{}
	}
	day := now.UTC().Format("2006-01-02")
	last, err := ParseTime(q.LastReset)
	if err == nil && last.UTC().Format("2006-01-02") == day {
		return
	}
	if err == nil && (q.TokensUsed > 0 || q.Requests > 0) {
		if q.History == nil {
			q.History = map[string]DayUsage{}
		}
		q.History[last.UTC().Format("2006-01-02")] = DayUsage{q.TokensUsed, q.Requests, q.AgentBreakdown}
	}
	q.TokensUsed, q.Requests, q.LastReset = 0, 0, day+"T00:00:00Z"
	q.AgentBreakdown = map[string]AgentUsage{}
}

// Add records agent's usage at now within the limits: a limit that would
// be passed, or a counter that would overflow, refuses (CodeConflict) and
// changes nothing.
func (q *Quota) Add(agent string, tokens, requests int64, lim QuotaLimits, now time.Time) error {
	q.Rollover(now)
	if lim.Tokens > 0 {
		q.DailyLimit = &lim.Tokens
	}
	if lim.Requests > 0 {
		q.RequestLimit = &lim.Requests
	}
	if tokens < 0 || requests < 0 {
		return Errorf(CodeUsage, "quota: usage to add must not be negative (%d tokens, %d requests)", tokens, requests)
	}
	// Counters never wrap: a sum past 2^63-1 would turn negative and pass
	// every limit.
	total, ok1 := addCount(q.TokensUsed, tokens)
	reqs, ok2 := addCount(q.Requests, requests)
	u := q.AgentBreakdown[agent]
	uTokens, ok3 := addCount(u.Tokens, tokens)
	uReqs, ok4 := addCount(u.Requests, requests)
	if !(ok1 && ok2 && ok3 && ok4) {
		return Errorf(CodeConflict, "quota: adding %d tokens and %d requests to today's %d and %d would overflow the counters", tokens, requests, q.TokensUsed, q.Requests).
			WithHint("nothing was added; check the numbers given to 'coord quota add'")
	}
	if lim.Tokens > 0 && total > lim.Tokens {
		return Errorf(CodeConflict, "quota: %d tokens today plus %d exceeds the daily limit %d", q.TokensUsed, tokens, lim.Tokens).
			WithHint("wait for the next UTC day or raise quota_daily_tokens in config.json")
	}
	if lim.Requests > 0 && reqs > lim.Requests {
		return Errorf(CodeConflict, "quota: %d requests today plus %d exceeds the daily limit %d", q.Requests, requests, lim.Requests).
			WithHint("wait for the next UTC day or raise quota_daily_requests in config.json")
	}
	q.TokensUsed, q.Requests = total, reqs
	u.Tokens, u.Requests = uTokens, uReqs
	u.LastActivity = FormatTime(now)
	q.AgentBreakdown[agent] = u
	return nil
}

// addCount adds two non-negative counters; ok is false when the sum would
// not fit in an int64.
func addCount(a, b int64) (int64, bool) {
	if b > math.MaxInt64-a {
		return 0, false
	}
	return a + b, true
}
