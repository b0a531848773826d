// Package hub runs the NATS server coord's NATS engine talks to, embedded
// in the coord process ('coord hub'): JetStream on file storage with every
// write synced to disk before it is acknowledged (Jepsen found
// acknowledged writes lost under NATS's default of syncing every two
// minutes), data kept in one directory across restarts, and with a
// cluster name and routes one node of a cluster whose namespaces are
// replicated three times. One directory serves one hub: a running hub
// holds the flock of DIR/hub.lock (LockFile), and a second hub on the
// same directory is refused at once, naming the first one's pid.
//
// It is its own package so that only 'coord hub' and tests link the
// server; the engine (package registry/nats) is a client only.
//
// Limits: no TLS and no authentication of its own (put it on a private
// network, or run nats-server with a configuration of yours and point
// coord at it); don't add or remove cluster nodes while agents run
// (Jepsen lost acknowledged writes on membership changes during
// partitions). The directory lock is a flock: it excludes hubs on one
// machine's local file system, not hubs on two machines sharing a
// network file system.
package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	gonats "github.com/nats-io/nats.go"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

// InfoSubject is where the hub answers with Info as JSON (the engine's
// doctor asks there: registry/nats.HubInfoSubject).
const InfoSubject = "coord.hub.info"

// Info is what a hub says about itself (registry/nats.HubInfo).
type Info struct {
	Version    string `json:"version"`     // the NATS server's
	SyncAlways bool   `json:"sync_always"` // every write synced before it is acknowledged
	Cluster    string `json:"cluster,omitempty"`
	Nodes      int    `json:"nodes"` // configured cluster size (1: single node)
	StoreDir   string `json:"store_dir"`
}

// DefaultListen is where a hub listens for clients unless told.
const DefaultListen = "127.0.0.1:4222"

// DefaultClusterPort is the route port of a clustered hub unless told.
const DefaultClusterPort = 6222

// MaxPayload is the largest message the hub accepts: a registry document
// of about 40,000 tasks compressed. NATS warns above 8 MB.
const MaxPayload = 8 << 20

// Options say how to run a hub.
type Options struct {
	// Dir holds the data (DIR/jetstream) and the node's name; it is
	// created if missing.
	Dir string
	// Listen is HOST:PORT for clients (port 0: a free one).
	Listen string
	// Cluster names the cluster this node joins ("": a single node).
	Cluster string
	// ClusterListen is HOST:PORT for routes (default: Listen's host,
	// port 6222; port 0: a free one).
	ClusterListen string
	// Routes are the other nodes' route URLs (nats-route://host:port or
	// host:port).
	Routes []string
	// ClusterAdvertise is the HOST:PORT this node tells the others to
	// route to ("": ClusterListen's), for a node behind NAT or a proxy.
	ClusterAdvertise string
	// Name is the node's name; "" reads it from DIR/server_name, making
	// one up the first time (a cluster knows its peers by name, so it
	// must not change across restarts).
	Name string
	// Logf, if set, receives the server's notices and errors.
	Logf func(format string, args ...any)
}

// Hub is a running server.
type Hub struct {
	s      *server.Server
	nc     *gonats.Conn
	opts   Options
	url    string
	dir    *fsops.Tree
	unlock func() // lets LockFile go
	once   sync.Once
}

// LockFile is the file in a hub's directory whose exclusive flock the
// running hub holds for its whole life, so that a second hub on the same
// directory (two servers writing one store would grant one task to two
// agents at one epoch) is refused at once, naming the holder. The lock
// goes with the process, however it ends.
const LockFile = "hub.lock"

// holder is what a hub writes into LockFile for a second one to name.
type holder struct {
	PID   int    `json:"pid"`
	Host  string `json:"host"`
	Since string `json:"since"`
}

// lockDir takes the exclusive lock of the hub directory dir, or refuses
// (exit 2) naming the hub that holds it.
func lockDir(dir string) (*fsops.Tree, func(), error) {
	t, err := fsops.OpenTree(dir)
	if err != nil {
		return nil, nil, coord.Errorf(coord.CodeIO, "hub: %v", err)
	}
	host, _ := os.Hostname()
	me, _ := json.Marshal(holder{PID: os.Getpid(), Host: host, Since: coord.FormatTime(time.Now())})
	unlock, err := t.Lock(context.Background(), LockFile, 0, me)
	var lt *fsops.LockTimeoutError
	switch {
	case errors.As(err, &lt):
		t.Close()
		var h holder
		who := "another hub"
		if json.Unmarshal([]byte(lt.Holder), &h) == nil && h.PID > 0 {
			who = fmt.Sprintf("another hub (pid %d on %s, since %s)", h.PID, h.Host, h.Since)
		}
		return nil, nil, coord.Errorf(coord.CodeIO, "hub: %s is in use by %s", dir, who).
			WithHint("one directory serves one hub: stop that hub first, or give this one another --dir")
	case err != nil:
		t.Close()
		return nil, nil, coord.Errorf(coord.CodeIO, "hub: cannot lock %s: %v", t.Path(LockFile), err).
			WithHint("check that %s is a writable directory of this machine", dir)
	}
	return t, unlock, nil
}

// Start starts a hub and returns once it accepts connections.
func Start(o Options) (*Hub, error) {
	if o.Dir == "" {
		return nil, coord.Errorf(coord.CodeUsage, "hub: --dir is needed")
	}
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	host, port, err := splitListen("--listen", o.Listen)
	if err != nil {
		return nil, err
	}
	if o.ClusterListen != "" {
		if _, _, err := splitListen("--cluster-listen", o.ClusterListen); err != nil {
			return nil, err
		}
	}
	if o.Cluster == "" && len(o.Routes) > 0 {
		return nil, coord.Errorf(coord.CodeUsage, "hub: --routes needs --cluster NAME")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, coord.Errorf(coord.CodeIO, "hub: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, coord.Errorf(coord.CodeIO, "hub: %v", err)
	}
	t, unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			unlock()
			t.Close()
		}
	}()
	if o.Name == "" {
		if o.Name, err = nodeName(t); err != nil {
			return nil, err
		}
	}
	opts := &server.Options{
		ServerName:   o.Name,
		Host:         host,
		Port:         port,
		JetStream:    true,
		StoreDir:     dir,
		SyncAlways:   true,
		SyncInterval: 2 * time.Minute,
		MaxPayload:   MaxPayload,
		NoSigs:       true,
		NoLog:        o.Logf == nil,
		// Heartbeats between client and server: a hub that vanished is
		// noticed by long-running clients within seconds.
		PingInterval: 10 * time.Second,
	}
	if o.Cluster != "" {
		if o.ClusterListen == "" {
			o.ClusterListen = net.JoinHostPort(host, strconv.Itoa(DefaultClusterPort))
		}
		ch, cp, err := splitListen("--cluster-listen", o.ClusterListen)
		if err != nil {
			return nil, err
		}
		opts.Cluster.Name, opts.Cluster.Host, opts.Cluster.Port = o.Cluster, ch, cp
		opts.Cluster.Advertise = o.ClusterAdvertise
		var routes []string
		for _, r := range o.Routes {
			r = strings.TrimSpace(r)
			if r == "" {
				continue
			}
			if !strings.Contains(r, "://") {
				r = "nats-route://" + r
			}
			routes = append(routes, r)
		}
		opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
	} else if len(o.Routes) > 0 {
		return nil, coord.Errorf(coord.CodeUsage, "hub: --routes needs --cluster NAME")
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, coord.Errorf(coord.CodeIO, "hub: %v", err)
	}
	lg := &logger{f: o.Logf, fatal: make(chan string, 8)}
	s.SetLogger(lg, false, false)
	go s.Start()
	if err := ready(s, lg.fatal, o.Listen, dir); err != nil {
		s.Shutdown()
		return nil, err
	}
	lg.started.Store(true)
	h := &Hub{s: s, opts: o, dir: t, unlock: unlock}
	h.url = "nats://" + advertised(host, s.Addr())
	nc, err := gonats.Connect("", gonats.InProcessServer(s), gonats.Name("coord hub"), gonats.MaxReconnects(-1))
	if err != nil {
		s.Shutdown()
		return nil, coord.Errorf(coord.CodeIO, "hub: %v", err)
	}
	h.nc = nc
	nodes := 1
	if o.Cluster != "" {
		nodes = len(opts.Routes) + 1
	}
	info, _ := json.Marshal(Info{Version: server.VERSION, SyncAlways: true, Cluster: o.Cluster, Nodes: nodes, StoreDir: dir})
	if _, err := nc.Subscribe(InfoSubject, func(m *gonats.Msg) { m.Respond(info) }); err != nil {
		started = true // h.Shutdown lets the directory go
		h.Shutdown()
		return nil, coord.Errorf(coord.CodeIO, "hub: %v", err)
	}
	started = true // Shutdown lets the directory go from now on
	return h, nil
}

// URL is the hub's client URL, nats://HOST:PORT, with the port it got.
func (h *Hub) URL() string { return h.url }

// ClusterURL is the hub's route URL, nats-route://HOST:PORT ("" when not
// clustered).
func (h *Hub) ClusterURL() string {
	a := h.s.ClusterAddr()
	if a == nil {
		return ""
	}
	return "nats-route://" + net.JoinHostPort(a.IP.String(), strconv.Itoa(a.Port))
}

// Server is the embedded server (tests find stream leaders through it).
func (h *Hub) Server() *server.Server { return h.s }

// Shutdown stops the server cleanly: every stream is flushed and closed;
// then the directory's lock is let go. It is safe to call more than once.
func (h *Hub) Shutdown() {
	if h.nc != nil {
		h.nc.Close()
	}
	h.s.Shutdown()
	h.s.WaitForShutdown()
	h.once.Do(func() {
		h.unlock()
		h.dir.Close()
	})
}

// WaitJetStream waits up to d for JetStream to take requests (a cluster
// has elected its meta leader and every node is current).
func (h *Hub) WaitJetStream(d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if h.s.JetStreamIsCurrent() && (h.opts.Cluster == "" || h.metaLeaderKnown()) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("hub: JetStream is not ready")
}

func (h *Hub) metaLeaderKnown() bool {
	_, err := h.nc.Request("$JS.API.INFO", nil, time.Second)
	return err == nil
}

// splitListen reads HOST:PORT; port 0 asks for a free one.
func splitListen(flag, hp string) (string, int, error) {
	host, p, err := net.SplitHostPort(hp)
	n, perr := strconv.Atoi(p)
	if err != nil || perr != nil || n < 0 || n > 65535 {
		return "", 0, coord.Errorf(coord.CodeUsage, "hub: %s %q is not HOST:PORT", flag, hp)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if n == 0 {
		n = server.RANDOM_PORT
	}
	return host, n, nil
}

// advertised is the HOST:PORT clients should use: the listen host, or
// this machine's name for a wildcard address.
func advertised(host string, addr net.Addr) string {
	port := 0
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = ta.Port
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// nodeName reads DIR/server_name, making one up the first time.
func nodeName(t *fsops.Tree) (string, error) {
	const p = "server_name"
	data, err := t.ReadFile(p, 4096)
	if err == nil {
		if n := strings.TrimSpace(string(data)); n != "" {
			return n, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", coord.Errorf(coord.CodeIO, "hub: %v", err)
	}
	var r [4]byte
	rand.Read(r[:])
	host, _ := os.Hostname()
	host = strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			return c
		}
		return '-'
	}, host)
	name := "coord-" + host + "-" + hex.EncodeToString(r[:])
	if err := t.WriteFile(p, []byte(name+"\n"), 0o644); err != nil {
		return "", coord.Errorf(coord.CodeIO, "hub: %v", err)
	}
	return name, nil
}

// ready waits until the server accepts connections, up to 30 s, or until
// it reports that it cannot start (a port taken, a store it cannot use):
// that is one line at once, not a wait for the bound.
func ready(s *server.Server, fatal <-chan string, listen, dir string) error {
	deadline := time.Now().Add(30 * time.Second)
	for !s.ReadyForConnections(50 * time.Millisecond) {
		select {
		case msg := <-fatal:
			err := coord.Errorf(coord.CodeIO, "hub: cannot start: %s", coord.OneLine(msg))
			if strings.Contains(msg, "address already in use") {
				return err.WithHint("another process (another hub?) listens there: stop it, or choose another port with --listen or --cluster-listen")
			}
			return err.WithHint("check that %s is a writable directory no other hub uses", dir)
		default:
		}
		if time.Now().After(deadline) {
			return coord.Errorf(coord.CodeIO, "hub: the server did not start listening on %s within 30 s", listen).
				WithHint("is the machine overloaded, or the directory %s locked by another hub?", dir)
		}
	}
	return nil
}

// logger passes the server's notices, warnings and errors to f (nil:
// nowhere). A fatal error before the server is started goes to fatal
// instead, for Start to return as its error; after, to f.
type logger struct {
	f       func(string, ...any)
	fatal   chan string
	started atomic.Bool
}

func (l *logger) log(format string, v ...any) {
	if l.f != nil {
		l.f(format, v...)
	}
}

func (l *logger) Noticef(format string, v ...any) { l.log("[INF] "+format, v...) }
func (l *logger) Warnf(format string, v ...any)   { l.log("[WRN] "+format, v...) }
func (l *logger) Errorf(format string, v ...any)  { l.log("[ERR] "+format, v...) }
func (l *logger) Debugf(format string, v ...any)  {}
func (l *logger) Tracef(format string, v ...any)  {}
func (l *logger) Fatalf(format string, v ...any) {
	if !l.started.Load() {
		select {
		case l.fatal <- fmt.Sprintf(format, v...):
			return
		default:
		}
	}
	l.log("[FTL] "+format, v...)
}
