package dashboard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Options configure a dashboard.
type Options struct {
	// Reader is the project, read-only.
	Reader app.Reader
	// TaskJSON encodes a task as the registry holds it (what `ls --json`
	// prints for it).
	TaskJSON func(*coord.Task) []byte
	// Token, when set, is required on every request but the static
	// files (Authorization: Bearer T, or ?token=T; a write takes it from
	// the Authorization header only).
	Token string
	// Acts, with a Token, lets the page act on tasks (docs/COMMANDS.md#supervising):
	// POST /api/tasks/ID/ACTION. Without either, every POST is 405 and
	// the page shows no buttons.
	Acts Actor
	// User names the person acting through the page in the log (an
	// agent id; "" is DefaultUser).
	User string
	// LoopbackOnly refuses, token or not, a request whose Host is not a
	// loopback name: a token this process made for a loopback page
	// (--allow-actions) is then still no use to a page that reaches the
	// dashboard through DNS rebinding.
	LoopbackOnly bool
	// Timeout is how long an agent may stay silent before it counts as
	// stale (0: the project's stale_after, read again at every build, so
	// the page judges as the sweep does even after a change).
	Timeout time.Duration
	// DoctorEvery is how often the doctor check runs (the alerts'
	// problems); 0 never.
	DoctorEvery time.Duration
	// StallAfter is how long a read of the state may go unanswered
	// before the page stops calling itself live (0: DefaultStallAfter).
	// The read goes on (up to readWait): its outcome replaces the stall.
	StallAfter time.Duration
	// Rows is how many rows each list shows on the page (0: 15).
	Rows int
	// LogLines is how many log lines the page shows (0: 40).
	LogLines int
	// Started, if set, is called once the first snapshot is built and
	// the server answers.
	Started func()
	// Logf receives what the server has to say (a failed read, a failed
	// doctor); nil discards it.
	Logf func(format string, args ...any)
	// Now is the clock the limit on wrong tokens runs on (nil: time.Now).
	Now func() time.Time
}

// DefaultUser is the name the log gives a person acting through the
// page when Options.User does not say.
const DefaultUser = "human"

// Actor is what the page's actions call: app.Supervisor.
type Actor interface {
	Requeue(context.Context, app.Act) (app.ActResult, error)
	Assign(context.Context, app.Act) (app.ActResult, error)
	Unblock(context.Context, app.Act) (app.ActResult, error)
	Cancel(context.Context, app.Act) (app.ActResult, error)
	Approve(context.Context, app.Act) (app.ActResult, error)
	Reject(context.Context, app.Act) (app.ActResult, error)
}

// Settle is how long the builder lets a burst of changes gather before
// it reads the state once for all of them.
const Settle = 150 * time.Millisecond

// writeWait bounds one write to a client: a browser that does not take
// an event within it is dropped (it reconnects).
const writeWait = 10 * time.Second

// maxClients bounds the open event streams; more are answered 503 (the
// browser retries).
const maxClients = 64

// DefaultStallAfter is how long a read of the state may go unanswered
// before the page stops calling itself live, whatever the read does next
// (a hub that went away makes a read wait for its timeouts first).
const DefaultStallAfter = 5 * time.Second

// readWait bounds one read of the state. It is long: a read may need
// several seconds to succeed after a hub came back (the NATS engine
// retries a stream that is not there yet for up to its IOBudget), and
// cutting it short would keep the page from ever recovering; the stall
// watch says the page is not live meanwhile.
const readWait = 30 * time.Second

// pingEvery is how often an open event stream carries a ping event when
// nothing changed: the page counts a stream silent for three of them as
// failed (not live) and reconnects.
const pingEvery = 5 * time.Second

// Server is one dashboard. Run builds its snapshots; Handler serves them.
type Server struct {
	opt Options

	mu      sync.Mutex
	cur     *snapshot
	clients map[*client]struct{}
	seq     uint64
	doc     doctorResult
	readErr string        // why the backend cannot be read now ("" when it can)
	fails   uint64        // reads that failed (or stalled) so far
	reading time.Time     // when the read in flight began (zero: none)
	stopDoc func()        // ends the doctor's check in flight (nil: none)
	ready   chan struct{} // closed once the first snapshot exists
	kick    chan struct{} // the backend is readable again: run the doctor now

	// renderMu orders the renders and publications of the builder and of
	// the stall watch (watchReads).
	renderMu sync.Mutex
	// advised is the advised number over time (under renderMu).
	advised adviceSeries

	limit *limiter // wrong tokens, per client address
}

type client struct {
	next chan *snapshot // the newest snapshot not yet sent: a buffer of one
}

// New prepares a dashboard; call Run to start building snapshots.
func New(opt Options) *Server {
	if opt.Rows <= 0 {
		opt.Rows = 15
	}
	if opt.LogLines <= 0 {
		opt.LogLines = 40
	}
	if opt.StallAfter <= 0 {
		opt.StallAfter = DefaultStallAfter
	}
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	if opt.TaskJSON == nil {
		panic("dashboard: Options.TaskJSON is nil")
	}
	if opt.User == "" {
		opt.User = DefaultUser
	}
	return &Server{opt: opt, clients: map[*client]struct{}{}, ready: make(chan struct{}), kick: make(chan struct{}, 1),
		doc: doctorResult{off: opt.DoctorEvery <= 0}, limit: newLimiter(opt.Now)}
}

// Build reads the state once and publishes it (Run does this after every
// change; tests and benchmarks call it directly). A read that fails keeps
// the last good state on the page, marked as not live with the reason.
func (s *Server) Build(ctx context.Context) error {
	s.mu.Lock()
	s.reading = time.Now()
	s.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, readWait)
	st, err := s.opt.Reader.State(rctx, app.StateRequest{Timeout: s.opt.Timeout, LogLines: s.opt.LogLines})
	cancel()
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		err = coord.Errorf(coord.CodeIO, "%s: no answer within %s", coord.OneLine(s.opt.Reader.Where()), readWait)
	}
	s.renderMu.Lock()
	defer s.renderMu.Unlock()
	s.mu.Lock()
	s.reading = time.Time{}
	recovered := err == nil && s.readErr != ""
	if err != nil {
		s.readErr = coord.OneLine(err.Error())
		s.failed()
	} else {
		s.readErr = ""
	}
	readErr, doc, prev := s.readErr, s.doc, s.cur
	s.mu.Unlock()
	if recovered {
		select { // what the doctor found meanwhile was about the outage
		case s.kick <- struct{}{}:
		default:
		}
	}
	if err != nil {
		if prev == nil {
			return err
		}
		st = *prev.state // keep showing the last good state, and say so
	}
	if err == nil {
		if now, perr := coord.ParseTime(st.Now); perr == nil {
			s.advised.add(now, st.Advice.Agents)
		}
	}
	snap, rerr := s.render(&st, doc, readErr)
	if rerr != nil {
		return rerr
	}
	s.publish(snap)
	return err
}

// render renders a state with the doctor's result and the read error.
func (s *Server) render(st *app.State, doc doctorResult, readErr string) (*snapshot, error) {
	var advised []int
	if now, err := coord.ParseTime(st.Now); err == nil {
		advised = s.advised.slots(now)
	}
	return render(0, st, doc, renderOptions{rows: s.opt.Rows, token: s.opt.Token, actions: s.actions(), readErr: readErr, ownTimeout: s.opt.Timeout > 0, advised: advised}, s.opt.TaskJSON)
}

// actions reports whether the page may act: a token, and something to
// act with.
func (s *Server) actions() bool { return s.opt.Token != "" && s.opt.Acts != nil }

// watchReads marks the page as not live once a read of the state has gone
// unanswered for Options.StallAfter, without waiting for the read to give
// up: it republishes the last state with that reason. The read's own
// outcome replaces it when it comes.
func (s *Server) watchReads(ctx context.Context) {
	stall := s.opt.StallAfter
	t := time.NewTicker(stall / 10)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.renderMu.Lock()
		s.mu.Lock()
		stalled := !s.reading.IsZero() && time.Since(s.reading) >= stall && s.readErr == "" && s.cur != nil
		if stalled {
			s.readErr = fmt.Sprintf("%s: no answer for %s", coord.OneLine(s.opt.Reader.Where()), coord.RoundDuration(stall))
			s.failed()
		}
		readErr, doc, prev := s.readErr, s.doc, s.cur
		s.mu.Unlock()
		if stalled {
			s.opt.Logf("cannot read the state (the page shows the last one): %s", readErr)
			if snap, err := s.render(prev.state, doc, readErr); err == nil {
				s.publish(snap)
			}
		}
		s.renderMu.Unlock()
	}
}

// failed counts a failed read and ends the doctor's check in flight: what
// it finds now is the outage, not the project. s.mu is held.
func (s *Server) failed() {
	s.fails++
	if s.stopDoc != nil {
		s.stopDoc()
	}
}

// publish makes snap current (the page, the JSON state and /tasks serve
// it from now on) and, when it shows something new, hands it to every
// client, replacing whatever snapshot a slow client had not taken yet.
func (s *Server) publish(snap *snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.cur
	s.seq++
	snap.seq = s.seq
	s.cur = snap
	if prev == nil {
		close(s.ready)
	}
	if snap.same(prev) {
		return
	}
	for c := range s.clients {
		select {
		case <-c.next: // a slow client skips the snapshot it had not taken
		default:
		}
		c.next <- snap
	}
}

// current is the newest snapshot, nil before the first.
func (s *Server) current() *snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Run builds a snapshot now (unless Build already made one) and then after every change the backend
// notifies (coalesced over Settle) and at least every second (the ages
// move; app.PollInterval), and runs the doctor check every DoctorEvery,
// until ctx ends. The first build's error is returned (the backend cannot
// be read); later ones are shown on the page and logged.
func (s *Server) Run(ctx context.Context) error {
	if s.current() == nil {
		if err := s.Build(ctx); err != nil {
			return err
		}
	}
	if s.opt.DoctorEvery > 0 {
		go s.runDoctor(ctx)
	}
	go s.watchReads(ctx)
	failing := false
	err := s.opt.Reader.Until(ctx, 0, Settle, func() (bool, error) {
		err := s.Build(ctx)
		if err != nil && ctx.Err() == nil && !failing {
			s.opt.Logf("cannot read the state (the page shows the last one): %v", err)
		}
		failing = err != nil
		return false, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// runDoctor runs the doctor check now, every DoctorEvery, and as soon as
// the backend is readable again after it was not. It is the one read that
// takes the registry's lock (app.Reader.Problems), so it runs on this
// timer only, never because a client asked, and is bounded in time.
//
// A check during which the state could not be read says nothing about
// the project (on a hub that went away it lists the timeouts it met as
// problems): it is shown as a check that could not run, and the next one
// runs once the backend answers.
func (s *Server) runDoctor(ctx context.Context) {
	t := time.NewTicker(s.opt.DoctorEvery)
	defer t.Stop()
	for {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		s.mu.Lock()
		fails, unreadable := s.fails, s.readErr != ""
		s.stopDoc = cancel
		s.mu.Unlock()
		d := doctorResult{at: s.opt.Reader.Now(), err: errUnreadable}
		if !unreadable {
			probs, err := s.opt.Reader.Problems(dctx)
			var open []coord.Problem
			for _, p := range probs {
				if p.Remains() {
					open = append(open, p)
				}
			}
			d = doctorResult{at: s.opt.Reader.Now(), problems: open}
			if err != nil {
				d.err = coord.OneLine(err.Error())
			}
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		s.stopDoc = nil
		if s.fails != fails || s.readErr != "" {
			d = doctorResult{at: d.at, err: errUnreadable}
		} else if d.err != "" {
			s.opt.Logf("doctor check failed: %s", d.err)
		}
		s.doc = d
		s.mu.Unlock()
		// The next build (within a second) shows it.
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
	}
}

// errUnreadable is why the doctor's check is not shown while the backend
// cannot be read.
const errUnreadable = "the backend cannot be read"

// Handler serves the dashboard. It waits for the first snapshot (Run or
// Build) before answering.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /static/{file}", http.StripPrefix("/static/", s.staticOnly(files)))
	mux.Handle("GET /{$}", s.guard(http.HandlerFunc(s.servePage)))
	mux.Handle("GET /events", s.guard(http.HandlerFunc(s.serveEvents)))
	mux.Handle("GET /api/state.json", s.guard(http.HandlerFunc(s.serveState)))
	mux.Handle("GET /tasks", s.guard(http.HandlerFunc(s.serveTasks)))
	mux.Handle("GET /task", s.guard(http.HandlerFunc(s.serveTask)))
	if s.actions() {
		mux.Handle("POST /api/tasks/{id}/{action}", http.HandlerFunc(s.serveAct))
	}
	return s.headers(mux)
}

// headers sets what every answer carries and refuses the methods the
// dashboard does not answer: everything but GET and HEAD, and POST too
// when the page may act.
func (s *Server) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
		case r.Method == http.MethodPost && s.actions():
		case s.actions():
			h.Set("Allow", "GET, HEAD, POST")
			http.Error(w, "405 method not allowed: GET, or POST to /api/tasks/ID/ACTION", http.StatusMethodNotAllowed)
			return
		default:
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "405 the dashboard is read-only: GET only (it acts only when started with --token or --allow-actions)", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// staticOnly serves the embedded style sheet, script and icon, and
// nothing else (no templates, no directory listing).
func (s *Server) staticOnly(files http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "style.css", "app.js", "acts.js", "icon.svg":
			w.Header().Set("Cache-Control", "no-cache")
			files.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

// guard lets a request in when it carries the token (when there is one),
// or, without a token, when it names the server by a loopback host (a
// page elsewhere cannot reach it through DNS rebinding). A client
// address that sent too many wrong tokens waits (429, limit.go). It then
// waits for the first snapshot.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opt.Token != "" {
			got, ok := bearer(r)
			if !ok {
				got, ok = r.URL.Query().Get("token"), r.URL.Query().Has("token")
			}
			if status, msg := s.checkToken(w, r, got, ok); status != 0 {
				http.Error(w, msg, status)
				return
			}
		}
		if (s.opt.Token == "" || s.opt.LoopbackOnly) && !LoopbackHost(r.Host) {
			http.Error(w, "403 forbidden: this dashboard answers only to a loopback host name (localhost, 127.0.0.1, [::1])", http.StatusForbidden)
			return
		}
		select {
		case <-s.ready:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// checkToken judges the token a request presented (sent: it presented
// one): 0 when it is the dashboard's, else the status and message to
// refuse it with. A wrong token counts against the client's address;
// an address with no attempt left gets 429 whatever it sent.
func (s *Server) checkToken(w http.ResponseWriter, r *http.Request, got string, sent bool) (int, string) {
	key := clientKey(r)
	if sent {
		if wait := s.limit.wait(key); wait > 0 {
			return tooMany(w, wait)
		}
	}
	want := sha256.Sum256([]byte(s.opt.Token))
	sum := sha256.Sum256([]byte(got))
	if sent && subtle.ConstantTimeCompare(sum[:], want[:]) == 1 {
		return 0, ""
	}
	if sent {
		s.limit.failed(key)
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="coord dashboard"`)
	return http.StatusUnauthorized, "401 unauthorized: send the dashboard's token as 'Authorization: Bearer T' or '?token=T'"
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", false
}

// LoopbackHost reports whether a Host header (host or host:port) names
// this machine's loopback: localhost (or a name under .localhost) or a
// loopback address.
func LoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "."), "["), "]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckAddr applies the contract's rule to a listening address before
// anything is bound: HOST:PORT, and without a token the host must be
// loopback (localhost or a loopback address; an empty host means every
// interface).
func CheckAddr(addr, token string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return coord.Errorf(coord.CodeUsage, "--addr %q is not HOST:PORT", coord.OneLine(addr)).WithHint("e.g. --addr 127.0.0.1:7777")
	}
	if token != "" {
		return nil
	}
	if host == "" || !LoopbackHost(host) {
		return coord.Errorf(coord.CodeUsage, "--addr %s is not a loopback address, and the dashboard would be open to anyone who can reach it", coord.OneLine(addr)).
			WithHint("pass --token T (or COORD_DASHBOARD_TOKEN) and open the page with ?token=T, or bind 127.0.0.1")
	}
	return nil
}

// CheckListener re-checks the rule on the address actually bound (a name
// such as localhost may resolve elsewhere).
func CheckListener(ln net.Listener, token string) error {
	if token != "" {
		return nil
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsLoopback() {
		return nil
	}
	return coord.Errorf(coord.CodeUsage, "the dashboard is bound to %s, which is not a loopback address", ln.Addr()).
		WithHint("pass --token T (or COORD_DASHBOARD_TOKEN), or bind 127.0.0.1")
}

// Serve runs the dashboard on ln until ctx ends: the builder, and an HTTP
// server with timeouts. It returns nil after a clean stop.
func Serve(ctx context.Context, ln net.Listener, opt Options) error {
	s := New(opt)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.Build(ctx); err != nil {
		return err
	}
	built := make(chan error, 1)
	go func() { built <- s.Run(ctx) }()
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second, // the event stream sets its own per write
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if opt.Started != nil {
		opt.Started()
	}
	var err error
	select {
	case err = <-built: // the first read failed, or ctx ended
	case err = <-served:
	case <-ctx.Done():
	}
	cancel()
	sctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	srv.Shutdown(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// String names the dashboard's state for logs.
func (s *Server) String() string {
	c := s.current()
	if c == nil {
		return "dashboard (no snapshot yet)"
	}
	return fmt.Sprintf("dashboard (snapshot %d)", c.seq)
}
