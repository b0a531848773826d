package nats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gonats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// Options tune Open.
type Options struct {
	// Clock is a test's clock. nil or coord.SystemClock (every production
	// caller): the engine judges every instant on the server's clock
	// (liveness, claims, leases, kv and path-lock expiry) and never reads
	// this host's wall clock for it. Any other clock shifts the engine's
	// notion of the server's now by that clock's offset from this host's
	// wall clock (Clock() - time.Now(), read at each use), so a test that
	// advances it ages beats, claims, leases, keys and path locks as it
	// does on files; see "Time" in the package doc.
	Clock coord.Clock
	// LockWait bounds how long a commit keeps retrying against concurrent
	// writers; 0 is the project's lock_wait.
	LockWait time.Duration
	// Warn receives problems that happened after a commit (the change is
	// made, so the call still succeeds). nil discards them.
	Warn func(msg string)
	// Artifacts writes ROTD artifacts of the caller's checkout; nil when
	// there is none.
	Artifacts coord.ArtifactStore
	// Lenient opens a namespace whose config does not parse (Config then
	// returns the defaults), for doctor.
	Lenient bool
	// Name names this client to the server (nats.go's connection name).
	Name string
	// Holder names this process to a waiter that gives up on the commit
	// mutex (--lock-diagnose).
	Holder string
	// ConnectTimeout bounds connecting to the servers, the TCP dial and
	// the server's greeting each; 0 is ConnectTimeout. A caller that runs
	// before every edit of an agent (coord hook) passes less.
	ConnectTimeout time.Duration
}

// Time bounds. An unreachable server is reported within ConnectTimeout
// (a host that swallows packets: the dial; a server that accepts and
// never greets: handshakeTimeout, or Options.ConnectTimeout when less),
// a request without an answer within RequestTimeout; a commit that finds
// no server answering keeps trying (a cluster electing a leader) for at
// most IOBudget in all.
const (
	ConnectTimeout = 8 * time.Second
	RequestTimeout = 4 * time.Second
	IOBudget       = 9 * time.Second
	// handshakeTimeout bounds the server's greeting once connected.
	handshakeTimeout = 3 * time.Second
)

// Backend is the JetStream engine of one namespace. It implements
// coord.Backend and is safe for concurrent use.
type Backend struct {
	url      *URL
	nc       *gonats.Conn
	w        *wire
	names    names
	clock    coord.Clock
	lockWait time.Duration
	warnFn   func(string)
	lenient  bool
	arts     coord.ArtifactStore
	holderMu sync.Mutex
	holder   string
	// clustered: the server is part of a cluster, so reads that must see
	// the latest commit go to the stream's leader.
	clustered bool

	cfgOnce sync.Once
	cfg     coord.Config
	cfgErr  error
	meta    meta

	srv serverClock

	logMu   sync.Mutex
	logQ    chan []coord.Event // log lines of commits, written in the background
	logDone chan struct{}
}

var _ coord.Backend = (*Backend)(nil)

// names are a namespace's streams and subjects.
type names struct {
	ns      string
	bucket  string // the KV bucket: registry, config, quota, beats, leases, kv
	kv      string // its stream
	pre     string // its subject prefix, "$KV.<bucket>."
	log     string // the log stream
	logSubj string
	arc     string // the archive stream
	arcSubj string
	backup  string // the registry's last revisions, sourced from the bucket
	mutex   string // the commit mutex stream (memory)
	beats   string // the heartbeat stream (memory)
	beatPre string // its subject prefix, "coord.<ns>.beats."
}

func namesFor(ns string) names {
	b := "coord_" + ns
	return names{
		ns:      ns,
		bucket:  b,
		kv:      "KV_" + b,
		pre:     "$KV." + b + ".",
		log:     b + "_log",
		logSubj: "coord." + ns + ".log",
		arc:     b + "_archive",
		arcSubj: "coord." + ns + ".archive",
		backup:  b + "_backup",
		mutex:   b + "_mutex",
		beats:   b + "_beats",
		beatPre: "coord." + ns + ".beats.",
	}
}

// Keys of the namespace's bucket.
const (
	keyRegistry = "registry"
	keyDepMap   = "depmap"
	keyConfig   = "config"
	keyQuota    = "quota"
	keyMeta     = "meta"
	preLease    = "lease."
	preKV       = "kv."
)

// Keys of the heartbeat stream (subjects beatPre + key).
const (
	preBeat  = "beat."  // + agent: the liveness tick
	preAgent = "agent." // + agent: the agent's description (also a sign of life)
	keyBoot  = "boot"   // since when the stream's heartbeats are complete
)

// Open connects to the servers u names and opens its namespace, which
// must exist (Init creates it). An unreachable server, refused
// credentials, a server without JetStream and a namespace that does not
// exist are each one line naming the URL (exit 2).
func Open(ctx context.Context, raw string, opt Options) (*Backend, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	b, err := dial(ctx, u, opt)
	if err != nil {
		return nil, err
	}
	if err := b.load(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// dial connects without looking at the namespace.
func dial(ctx context.Context, u *URL, opt Options) (*Backend, error) {
	b := &Backend{url: u, names: namesFor(u.Namespace), clock: opt.Clock, lockWait: opt.LockWait,
		warnFn: opt.Warn, lenient: opt.Lenient, arts: opt.Artifacts, holder: opt.Holder}
	if b.clock == nil {
		b.clock = coord.SystemClock
	}
	b.srv.skew = skewOf(b.clock)
	name := opt.Name
	if name == "" {
		name = "coord"
	}
	connect, greet := ConnectTimeout, handshakeTimeout
	if opt.ConnectTimeout > 0 {
		connect, greet = opt.ConnectTimeout, min(greet, opt.ConnectTimeout)
	}
	deadline := time.Now().Add(connect)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	dialer := &firstDialer{d: net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}}
	dialer.deadline.Store(&deadline)
	opts := []gonats.Option{
		gonats.Name(name),
		gonats.Timeout(greet),
		gonats.SetCustomDialer(dialer),
		gonats.ReconnectWait(100 * time.Millisecond),
		gonats.MaxReconnects(-1),
		gonats.NoCallbacksAfterClientClose(),
		// The connection's own errors are reported by the operation that
		// meets them; nats.go's default handler would print to stderr.
		gonats.ErrorHandler(func(*gonats.Conn, *gonats.Subscription, error) {}),
	}
	if u.User != "" {
		if u.HasPassword {
			opts = append(opts, gonats.UserInfo(u.User, u.Password))
		} else {
			opts = append(opts, gonats.Token(u.User))
		}
	}
	w := &wire{timeout: RequestTimeout}
	opts = append(opts, gonats.DisconnectErrHandler(func(*gonats.Conn, error) { w.disconnected() }))
	nc, err := gonats.Connect(u.serverURLs(), opts...)
	dialer.deadline.Store(nil) // reconnections dial with the per-dial timeout only
	if err != nil {
		return nil, b.connectError(err)
	}
	if ok, _ := nc.ConnectedServerJetStream(); !ok {
		nc.Close()
		return nil, coord.Errorf(coord.CodeIO, "%s: the server does not run JetStream", u).
			WithHint("start it with JetStream on (nats-server -js, or 'coord hub'), or name a server that has it")
	}
	b.nc = nc
	w.nc = nc
	b.w = w
	b.clustered = nc.ConnectedClusterName() != ""
	return b, nil
}

// firstDialer bounds the first connection (every server of the URL in
// turn) by one deadline, and each later dial (nats.go reconnecting after
// the server restarted or a node failed) by the per-dial timeout alone:
// a deadline left on the dialer would fail every reconnection once it had
// passed, and a long-running process (watch, schedule, dashboard, mcp)
// would never reach a restarted hub again.
type firstDialer struct {
	d        net.Dialer
	deadline atomic.Pointer[time.Time]
}

func (f *firstDialer) Dial(network, address string) (net.Conn, error) {
	d := f.d
	if dl := f.deadline.Load(); dl != nil {
		d.Deadline = *dl
	}
	return d.Dial(network, address)
}

// connectError maps a failed connection to one line naming the URL.
func (b *Backend) connectError(err error) error {
	switch {
	case errors.Is(err, gonats.ErrAuthorization), errors.Is(err, gonats.ErrAuthExpired),
		strings.Contains(strings.ToLower(err.Error()), "authorization"):
		return coord.Errorf(coord.CodeIO, "%s: the server refused the credentials", b.url).
			WithHint("check the user and password in the URL (nats://user:pass@host:port/NAMESPACE)")
	}
	return coord.Errorf(coord.CodeIO, "%s: cannot reach the server: %s", b.url, coord.OneLine(err.Error())).
		WithHint("start one with 'coord hub', or check the host, the port and the network")
}

// SetHolder renames this process to waiters on the commit mutex (a front
// end that learns the caller's identity after opening).
func (b *Backend) SetHolder(holder string) {
	b.holderMu.Lock()
	b.holder = holder
	b.holderMu.Unlock()
}

func (b *Backend) holderName() string {
	b.holderMu.Lock()
	defer b.holderMu.Unlock()
	return b.holder
}

// Name is "nats".
func (b *Backend) Name() string { return "nats" }

// Where is the URL with its password masked.
func (b *Backend) Where() string { return b.url.String() }

// URL is the parsed URL the backend was opened on.
func (b *Backend) URL() *URL { return b.url }

// Close waits for the log lines of this process's commits, then closes
// the connection.
func (b *Backend) Close() error {
	b.flushLog()
	if b.nc != nil {
		b.nc.Close()
	}
	return nil
}

// Tasks is the registry document.
func (b *Backend) Tasks() coord.TaskStore { return tasks{b} }

// Beats are the heartbeat stream's beat. and agent. keys.
func (b *Backend) Beats() coord.BeatStore { return beats{b} }

// Leases are the lease. keys.
func (b *Backend) Leases() coord.LeaseStore { return leases{b} }

// KV is the kv. keys.
func (b *Backend) KV() coord.KVStore { return kvStore{b} }

// Quota is the quota document.
func (b *Backend) Quota() coord.QuotaStore { return quota{b} }

// Log is the log stream.
func (b *Backend) Log() coord.LogStore { return logStore{b} }

// Changes wakes waiters through JetStream watches.
func (b *Backend) Changes() coord.Notifier { return notifier{b} }

// Artifacts writes the caller's checkout's .rotd files; nil without one.
func (b *Backend) Artifacts() coord.ArtifactStore { return b.arts }

// Config is the namespace's config key (config.json's format), read when
// the backend was opened.
func (b *Backend) Config(ctx context.Context) (coord.Config, error) {
	return b.cfg, b.cfgErr
}

func (b *Backend) warn(err error) {
	if b.warnFn != nil && err != nil {
		b.warnFn(err.Error())
	}
}

// meta is the namespace's meta key: what the engine records about the
// namespace itself.
type meta struct {
	Version int `json:"version"`
	// Base is added to a stream sequence to make a lease epoch or a kv
	// revision: a project copied in keeps its epochs and revisions, and
	// every later one is larger (backend copy sets it). It is at most
	// maxBase.
	Base int64 `json:"base"`
}

// maxBase is the largest base a namespace continues from: half the
// counter ceiling, so that the base plus the stream's sequence stays
// within coord.MaxCounter for 2^52 writes. Lease epochs and kv revisions
// need no high-water mark of their own here: the stream's sequence never
// goes back, and a value written back from an older copy is a new
// message with a new, larger sequence.
const maxBase = coord.MaxCounter / 2

// checkBase refuses to issue a lease epoch or a kv revision from a base
// above maxBase (a hand edit of the meta key): the values would pass the
// counter ceiling.
func (b *Backend) checkBase() error {
	if b.meta.Base < 0 || b.meta.Base > maxBase {
		return coord.Errorf(coord.CodeIO, "%s: base %d is outside 0..%d: no lease epoch or kv revision can be issued from it", b.where(keyMeta), b.meta.Base, maxBase).
			WithHint("'coord doctor' reports it; set the base back to what it was before the edit")
	}
	return nil
}

// load reads config and meta in one round trip, and learns the server's
// clock in a second one sent at the same time.
func (b *Backend) load(ctx context.Context) error {
	sync := b.srv.start(ctx, b)
	msgs, err := b.w.lastEach(ctx, b.names.kv, []string{b.names.pre + keyConfig, b.names.pre + keyMeta}, nil)
	if err != nil {
		return b.ioErr(err, "")
	}
	var cfgMsg, metaMsg *msg
	for _, m := range msgs {
		switch strings.TrimPrefix(m.subject, b.names.pre) {
		case keyConfig:
			cfgMsg = m
		case keyMeta:
			metaMsg = m
		}
	}
	if metaMsg == nil || metaMsg.deleted() {
		return b.noNamespace()
	}
	if err := format.Unmarshal(b.where(keyMeta), metaMsg.data, &b.meta); err != nil {
		return coord.Errorf(coord.CodeIO, "%v", err).WithHint("run 'coord doctor'")
	}
	b.cfg = coord.DefaultConfig()
	if cfgMsg != nil && !cfgMsg.deleted() {
		b.cfg, b.cfgErr = format.ParseConfig(b.where(keyConfig), cfgMsg.data)
		if b.cfgErr != nil {
			b.cfgErr = coord.Errorf(coord.CodeIO, "%v", b.cfgErr).WithHint("fix the config key ('coord doctor' names it)")
			if b.lenient {
				b.cfg, b.cfgErr = coord.DefaultConfig(), nil
			}
		}
	}
	if b.lockWait <= 0 {
		b.lockWait = b.cfg.LockWait
	}
	if err := sync(); err != nil {
		return b.ioErr(err, "")
	}
	if b.cfgErr != nil {
		return b.cfgErr
	}
	return nil
}

// where names a key for people: "nats://host:port/ns: registry".
func (b *Backend) where(key string) string { return b.url.String() + " key " + key }

func (b *Backend) noNamespace() error {
	return coord.Errorf(coord.CodeIO, "%s: no project in namespace %q", b.url, b.url.Namespace).
		WithHint("check the namespace in the URL, or create it with 'coord init --backend %s'", b.url)
}

// ioErr maps an engine error to a coded one naming the URL: a coded
// error is returned as it is, a cancelled context is an interruption,
// everything else exit 2.
func (b *Backend) ioErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var ce *coord.Error
	if errors.As(err, &ce) {
		return err
	}
	at := b.url.String() + ":"
	if what != "" {
		at += " " + what + ":"
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &coord.Error{Code: coord.CodeInterrupted, Msg: "interrupted", Err: coord.ErrInterrupted}
	case errors.Is(err, errNoStream):
		if b.streamsMissing() {
			return b.noNamespace()
		}
		return coord.Errorf(coord.CodeIO, "%s no stream leader answered", at).
			WithHint("the cluster may have lost its quorum; check that a majority of the hub's nodes run and reach each other")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, gonats.ErrTimeout):
		return coord.Errorf(coord.CodeIO, "%s no answer within %s", at, coord.RoundDuration(RequestTimeout)).
			WithHint("the server is unreachable or a cluster lost its quorum")
	case errors.Is(err, gonats.ErrConnectionClosed), errors.Is(err, gonats.ErrDisconnected), errors.Is(err, gonats.ErrConnectionReconnecting):
		return coord.Errorf(coord.CodeIO, "%s lost the connection to the server", at).
			WithHint("check that the hub runs")
	}
	msg := err.Error()
	if ae, ok := err.(*jetstream.APIError); ok { // as the server said it, with its code
		msg = apiMessage(ae)
	}
	return coord.Errorf(coord.CodeIO, "%s %s", at, coord.OneLine(msg))
}

// streamsMissing tells a namespace that does not exist from a server
// that did not answer: JetStream answers account info when it runs.
func (b *Backend) streamsMissing() bool {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	_, err := b.w.streamInfo(ctx, b.names.kv)
	return errors.Is(err, errNoStream)
}

// serverClock is the server's clock as this process knows it: learned
// once from a stream info (which carries the server's time) and advanced
// by the local monotonic clock, which measures elapsed time without
// comparing this host's wall clock with the server's. It is re-learned
// when older than resync.
//
// With an injected clock (a test's; skew non-nil) the engine's now is the
// server's shifted by that clock's offset from this host's wall clock, and
// the server timestamps it reads as instants (heartbeat ticks, agent
// descriptions) are shifted by the offset their writer noted (hdrSkew):
// every instant is then on the injected clock's timeline, as on files. On
// the system clock (skew nil) nothing is shifted and hdrSkew is neither
// written nor honoured, so no client can make a production reader judge
// an instant other than by the server's clock.
type serverClock struct {
	mu     sync.Mutex
	base   time.Time // the server's time …
	mono   time.Time // … at this local instant (monotonic reading)
	known  bool
	resync time.Duration
	// skew is the injected clock's offset from this host's wall clock,
	// read at each use; nil on the system clock. Set once by dial.
	skew func() time.Duration
}

// hdrSkew notes, on a write whose server timestamp is read back as an
// instant, the writer's skew in nanoseconds. Only an engine on an injected
// clock writes or reads it.
const hdrSkew = "Coord-Skew"

// skewOf is the skew of clock: nil for the system clock.
func skewOf(clock coord.Clock) func() time.Duration {
	if clock == nil || reflect.ValueOf(clock).Pointer() == reflect.ValueOf(coord.SystemClock).Pointer() {
		return nil
	}
	return func() time.Duration { return clock().Sub(time.Now()) }
}

const clockResync = 30 * time.Second

// start learns the server's clock in the background if it is not known;
// the returned func waits for it.
func (c *serverClock) start(ctx context.Context, b *Backend) func() error {
	c.mu.Lock()
	fresh := c.known && time.Since(c.mono) < clockResync
	c.mu.Unlock()
	if fresh {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() {
		sent := time.Now()
		si, err := b.w.streamInfo(ctx, b.names.kv)
		if err == nil && si.TimeStamp.IsZero() {
			err = fmt.Errorf("the server does not report its time (NATS 2.12 or later is needed)")
		}
		if err == nil {
			got := time.Now()
			c.mu.Lock()
			// The answer was made somewhere between sent and got: take the
			// middle.
			c.base, c.mono, c.known = si.TimeStamp, sent.Add(got.Sub(sent)/2), true
			c.mu.Unlock()
		}
		done <- err
	}()
	return func() error { return <-done }
}

// now is the engine's current time: the server's, shifted by the skew of
// an injected clock (start must have succeeded once).
func (c *serverClock) now() time.Time {
	t := c.server()
	if c.skew != nil {
		t = t.Add(c.skew())
	}
	return t
}

// server is the server's current time, never shifted.
func (c *serverClock) server() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(time.Since(c.mono)).UTC()
}

// mark notes the skew on a write whose timestamp stamp will read back.
func (c *serverClock) mark(hdr gonats.Header) {
	if c.skew != nil {
		hdr.Set(hdrSkew, strconv.FormatInt(int64(c.skew()), 10))
	}
}

// stamp is the instant m was written, on the engine's timeline: the
// server's timestamp, shifted by its writer's noted skew on an injected
// clock (none noted: the server's own, unshifted).
func (c *serverClock) stamp(m *msg) time.Time {
	if c.skew == nil {
		return m.at
	}
	d, _ := strconv.ParseInt(m.hdr.Get(hdrSkew), 10, 64)
	return m.at.Add(time.Duration(d))
}

// serverNow returns the engine's now, learning the server's time if it is
// not fresh.
func (b *Backend) serverNow(ctx context.Context) (time.Time, error) {
	if err := b.srv.start(ctx, b)(); err != nil {
		return time.Time{}, b.ioErr(err, "")
	}
	return b.srv.now(), nil
}
