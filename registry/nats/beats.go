package nats

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coord/coord"
)

// Heartbeats: "beat.<agent>" is a tick (an empty value: only its server
// timestamp counts), "agent.<agent>" the agent's description, written
// when the agent says what it is doing (itself a sign of life). An agent
// was last seen at the later of the two timestamps, both the server's.

type beats struct{ b *Backend }

// enc makes a name or key safe as a subject token.
func enc(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func dec(s string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return string(b), err == nil
}

// Beat marks agent alive now: a tick, or with info its description.
func (h beats) Beat(ctx context.Context, agent string, info *coord.BeatInfo) error {
	if err := coord.ValidAgentID(agent); err != nil {
		return err
	}
	b := h.b
	if info == nil {
		return b.put(ctx, preBeat+enc(agent), nil, 0, "a heartbeat")
	}
	in := *info
	in.AgentID = agent
	now, err := b.serverNow(ctx)
	if err != nil {
		return err
	}
	in.LastBeat = coord.FormatTime(now)
	if in.PID == 0 {
		in.PID = os.Getppid()
	}
	if in.Hostname == "" {
		in.Hostname, _ = os.Hostname()
	}
	data, _ := json.Marshal(in)
	return b.put(ctx, preAgent+enc(agent), data, 0, "a heartbeat")
}

// put stores a value under key unconditionally (ttl > 0: expiring),
// retrying while no server answers; a put is idempotent enough to send
// again.
func (b *Backend) put(ctx context.Context, key string, data []byte, ttl time.Duration, what string) error {
	hdr := noHeaders()
	b.srv.mark(hdr)
	if ttl > 0 {
		hdr.Set(hdrTTL, ttlHeader(ttl))
	}
	start := time.Now()
	for i := 0; ; i++ {
		_, err := b.w.publish(ctx, b.names.pre+key, data, hdr)
		if err == nil {
			return nil
		}
		if !transient(err) || ctx.Err() != nil || time.Since(start)+backoff(i) > IOBudget {
			return b.ioErr(err, "writing "+what)
		}
		sleep(ctx, backoff(i))
	}
}

// seen gathers, per agent, the latest server timestamp of its tick and
// description, and the description.
type seen struct {
	at   time.Time
	info *coord.BeatInfo
	tick *msg // the tick, to renew a future one
}

func (b *Backend) readBeats(ctx context.Context, filters []string) (map[string]*seen, error) {
	msgs, err := b.lastAll(ctx, filters)
	if err != nil {
		return nil, err
	}
	out := map[string]*seen{}
	for _, m := range msgs {
		if m.deleted() {
			continue
		}
		key := strings.TrimPrefix(m.subject, b.names.pre)
		var agent string
		var ok, desc bool
		if rest, isBeat := strings.CutPrefix(key, preBeat); isBeat {
			agent, ok = dec(rest)
		} else if rest, isAgent := strings.CutPrefix(key, preAgent); isAgent {
			agent, ok = dec(rest)
			desc = true
		}
		if !ok || coord.ValidAgentID(agent) != nil {
			continue
		}
		s := out[agent]
		if s == nil {
			s = &seen{}
			out[agent] = s
		}
		if at := b.srv.stamp(m); at.After(s.at) {
			s.at = at
		}
		if desc {
			var in coord.BeatInfo
			if json.Unmarshal(m.data, &in) == nil {
				s.info = &in
			}
		} else {
			s.tick = m
		}
	}
	return out, nil
}

// lastAll returns the last message of every subject matching filters:
// one multi-subject read, or past the server's 1,024 per read, by pages of
// filters (each filter a single subject) or through a consumer.
func (b *Backend) lastAll(ctx context.Context, filters []string) ([]*msg, error) {
	var out []*msg
	for len(filters) > 0 {
		n := min(len(filters), 500)
		page, err := b.retryRead(ctx, func(ctx context.Context) ([]*msg, error) {
			return b.w.multiLast(ctx, b.names.kv, filters[:n])
		})
		if err == errTooMany {
			page, err = b.lastByConsumer(ctx, filters[:n])
		}
		if err != nil {
			return nil, b.ioErr(err, "")
		}
		out = append(out, page...)
		filters = filters[n:]
	}
	return out, nil
}

// LastSeen returns when each agent last beat, on the server's clock, and
// the server's now. A timestamp ahead of now (a cluster's leader changed
// to a node whose clock is behind) is clamped to now, and the tick is
// written again so it ages from now on.
func (h beats) LastSeen(ctx context.Context, agents []string) (map[string]time.Time, time.Time, error) {
	b := h.b
	clock := b.srv.start(ctx, b)
	filters := make([]string, 0, 2*len(agents))
	for _, a := range agents {
		e := enc(a)
		filters = append(filters, b.names.pre+preBeat+e, b.names.pre+preAgent+e)
	}
	got, err := b.readBeats(ctx, filters)
	cerr := clock()
	if err != nil {
		return nil, time.Time{}, err
	}
	if cerr != nil {
		return nil, time.Time{}, b.ioErr(cerr, "")
	}
	now := b.srv.now()
	out := make(map[string]time.Time, len(got))
	for a, s := range got {
		at := s.at
		if at.After(now) {
			if err := b.put(ctx, preBeat+enc(a), nil, 0, "a heartbeat"); err != nil {
				return nil, now, err
			}
			at = now
		}
		out[a] = at
	}
	return out, now, nil
}

// List returns every agent with a heartbeat, by agent id, and the
// server's now. An agent that only ticked is described as idle.
func (h beats) List(ctx context.Context) ([]coord.Beat, time.Time, error) {
	b := h.b
	clock := b.srv.start(ctx, b)
	got, err := b.readBeats(ctx, []string{b.names.pre + preBeat + ">", b.names.pre + preAgent + ">"})
	cerr := clock()
	if err != nil {
		return nil, time.Time{}, err
	}
	if cerr != nil {
		return nil, time.Time{}, b.ioErr(cerr, "")
	}
	out := make([]coord.Beat, 0, len(got))
	for a, s := range got {
		info := s.info
		if info == nil {
			info = &coord.BeatInfo{AgentID: a, LastBeat: coord.FormatTime(s.at), Status: coord.AgentIdle}
		}
		out = append(out, coord.Beat{Agent: a, At: s.at, Info: info})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out, b.srv.now(), nil
}
