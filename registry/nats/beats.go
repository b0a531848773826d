package nats

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// Heartbeats: "beat.<agent>" is a tick (an empty value: only its server
// timestamp counts), "agent.<agent>" the agent's description, written
// when the agent says what it is doing (itself a sign of life). An agent
// was last seen at the later of the two timestamps, both the server's.
//
// They live in a stream of their own kept in memory (names.beats): a
// claim writes two of them, and on disk each would be synced, in the
// same stream as the registry, in turn with its commits. Memory is lost
// when the server restarts (every node of a cluster at once), so the
// stream's "boot" key says since when its heartbeats are complete: Init
// writes it with the stream ({"lost":false}), and a reader that finds it
// missing writes it again with {"lost":true}, its server timestamp then
// standing for "heartbeats before this instant may be lost". While it
// says so, an agent asked about that has no heartbeat counts as last
// seen at the boot key's timestamp: a live holder whose beat the restart
// lost is judged stale no sooner than stale_after after the restart was
// noticed, never sooner than after the restart itself.

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
		return b.putBeat(ctx, preBeat+enc(agent), nil)
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
	return b.putBeat(ctx, preAgent+enc(agent), data)
}

// putBeat stores a heartbeat key, retrying while no server answers; a
// missing heartbeat stream is made again.
func (b *Backend) putBeat(ctx context.Context, key string, data []byte) error {
	hdr := noHeaders()
	b.srv.mark(hdr) // an injected clock's offset, read back by stamp
	return b.retryWrite(ctx, "a heartbeat", b.beatsMissing, func() error {
		_, err := b.w.publish(ctx, b.names.beatPre+key, data, hdr)
		return err
	})
}

// beatsMissing makes the heartbeat stream again when it is missing (a
// single server restarted: it keeps no memory stream), or returns why
// not.
func (b *Backend) beatsMissing(ctx context.Context) error {
	return b.ensureMemStream(ctx, b.names.beats)
}

// everyBeat are the filters of every agent's tick and description.
func (n names) everyBeat() []string {
	return []string{n.beatPre + preBeat + ">", n.beatPre + preAgent + ">"}
}

// bootInfo is the boot key's value.
type bootInfo struct {
	// Lost: heartbeats before the key's timestamp may have been lost (the
	// server restarted).
	Lost bool `json:"lost"`
}

// bootMark writes the boot key if it is missing and returns it as
// stored (the first writer's, when several race).
func (b *Backend) bootMark(ctx context.Context, lost bool) (*msg, error) {
	subject := b.names.beatPre + keyBoot
	data, _ := json.Marshal(bootInfo{Lost: lost})
	hdr := casHeader(0)
	b.srv.mark(hdr)
	var m *msg
	err := b.retryWrite(ctx, "the heartbeat stream's boot key", b.beatsMissing, func() error {
		_, err := b.w.publish(ctx, subject, data, hdr)
		if err != nil && !errors.Is(err, errConflict) {
			return err
		}
		if b.clustered {
			m, err = b.w.lastFromLeader(ctx, b.names.beats, subject)
		} else {
			m, err = b.w.last(ctx, b.names.beats, subject)
		}
		if err == nil && m == nil {
			err = errNoStream // written, then gone: the server restarted again
		}
		return err
	})
	return m, err
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
	return b.retryWrite(ctx, what, nil, func() error {
		_, err := b.w.publish(ctx, b.names.pre+key, data, hdr)
		return err
	})
}

// seen gathers, per agent, the latest server timestamp of its tick and
// description, and the description.
type seen struct {
	at   time.Time
	info *coord.BeatInfo
	tick *msg // the tick, to renew a future one
}

// readBeats reads the heartbeat keys filters name, and the boot key if
// they name it (nil: missing).
func (b *Backend) readBeats(ctx context.Context, filters []string) (map[string]*seen, *msg, error) {
	msgs, err := b.lastAll(ctx, b.names.beats, filters)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]*seen{}
	var boot *msg
	for _, m := range msgs {
		if m.deleted() {
			continue
		}
		key := strings.TrimPrefix(m.subject, b.names.beatPre)
		if key == keyBoot {
			boot = m
			continue
		}
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
	return out, boot, nil
}

// lastAll returns the last message of every subject matching filters:
// one multi-subject read, or past the server's 1,024 per read, by pages of
// filters (each filter a single subject) or through a consumer.
func (b *Backend) lastAll(ctx context.Context, stream string, filters []string) ([]*msg, error) {
	var out []*msg
	remade := false
	for len(filters) > 0 {
		n := min(len(filters), 500)
		page, err := b.retryRead(ctx, func(ctx context.Context) ([]*msg, error) {
			if literal(filters[:n]) {
				return b.w.lastEach(ctx, stream, filters[:n], nil)
			}
			return b.w.multiLast(ctx, stream, filters[:n])
		})
		if err == errTooMany {
			page, err = b.lastByConsumer(ctx, stream, filters[:n])
		}
		if err != nil && stream == b.names.beats && errors.Is(err, errNoStream) && !remade {
			if merr := b.beatsMissing(ctx); merr != nil {
				return nil, merr
			}
			remade = true
			continue // read again from the stream made now
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
// written again so it ages from now on. After the heartbeat stream lost
// its content (the boot key says so, or is missing and is written now),
// an agent without a heartbeat counts as seen at the boot key's time.
func (h beats) LastSeen(ctx context.Context, agents []string) (map[string]time.Time, time.Time, error) {
	b := h.b
	filters := make([]string, 0, 2*len(agents)+1)
	for _, a := range agents {
		e := enc(a)
		filters = append(filters, b.names.beatPre+preBeat+e, b.names.beatPre+preAgent+e)
	}
	return b.lastSeen(ctx, filters, agents)
}

// SeenAll is LastSeen for every agent with a heartbeat: one read of the
// heartbeat stream. An agent without one is absent even after the stream
// lost its content (the boot key's time is given to the agents LastSeen
// names).
func (h beats) SeenAll(ctx context.Context) (map[string]time.Time, time.Time, error) {
	b := h.b
	return b.lastSeen(ctx, b.names.everyBeat(), nil)
}

// lastSeen reads the heartbeat keys filters name, and the boot key, and
// returns when each agent last beat and the server's now, as LastSeen
// does; the boot key's time is given to each of agents without a beat.
func (b *Backend) lastSeen(ctx context.Context, filters, agents []string) (map[string]time.Time, time.Time, error) {
	clock := b.srv.start(ctx, b)
	filters = append(filters, b.names.beatPre+keyBoot)
	got, boot, err := b.readBeats(ctx, filters)
	cerr := clock()
	if err != nil {
		return nil, time.Time{}, err
	}
	if cerr != nil {
		return nil, time.Time{}, b.ioErr(cerr, "")
	}
	if boot == nil {
		if boot, err = b.bootMark(ctx, true); err != nil {
			return nil, time.Time{}, err
		}
	}
	now := b.srv.now()
	out := make(map[string]time.Time, len(got))
	for a, s := range got {
		at := s.at
		if at.After(now) {
			if err := b.putBeat(ctx, preBeat+enc(a), nil); err != nil {
				return nil, now, err
			}
			at = now
		}
		out[a] = at
	}
	var bi bootInfo
	if json.Unmarshal(boot.data, &bi) == nil && bi.Lost {
		since := b.srv.stamp(boot)
		if since.After(now) {
			since = now
		}
		for _, a := range agents {
			if _, ok := out[a]; !ok {
				out[a] = since
			}
		}
	}
	return out, now, nil
}

// List returns every agent with a heartbeat, by agent id, and the
// server's now. An agent that only ticked is described as idle.
func (h beats) List(ctx context.Context) ([]coord.Beat, time.Time, error) {
	b := h.b
	clock := b.srv.start(ctx, b)
	got, _, err := b.readBeats(ctx, b.names.everyBeat())
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
