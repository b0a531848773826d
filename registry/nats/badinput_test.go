package nats_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	gonats "github.com/nats-io/nats.go"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	coordnats "github.com/rotd/coordination/registry/nats"
	"github.com/rotd/coordination/registry/nats/hub"
)

// plainServer runs a NATS server with opts (JetStream as given) on a free
// loopback port.
func plainServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.Host, opts.Port, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, true
	if opts.JetStream {
		opts.StoreDir = t.TempDir()
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatal("server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// wantOneLine checks a refusal: the exit code, one line naming the URL
// with its password masked, and a phrase.
func wantOneLine(t *testing.T, err error, code coord.Code, phrase string) {
	t.Helper()
	if coord.CodeOf(err) != code {
		t.Fatalf("exit %d, want %d: %v", coord.CodeOf(err), code, err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, phrase) || strings.Contains(msg, "s3cret") {
		t.Fatalf("%q: want one line with %q and no password", msg, phrase)
	}
}

func TestUnreachable(t *testing.T) {
	// A port nobody listens on: refused at once; exit 2 naming the URL.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err := coordnats.Open(context.Background(), "nats://alice:s3cret@"+addr+"/p", coordnats.Options{})
	wantOneLine(t, err, coord.CodeIO, "nats://alice:xxxxx@"+addr+"/p: cannot reach the server")
	// A host that swallows packets: bounded by ConnectTimeout (a
	// non-routable address from TEST-NET-1; skipped where the network
	// answers it at once).
	start = time.Now()
	_, err = coordnats.Open(context.Background(), "nats://192.0.2.1:4222/p", coordnats.Options{})
	if coord.CodeOf(err) != coord.CodeIO || time.Since(start) > 10*time.Second {
		t.Fatalf("blackholed host: %v after %s", err, time.Since(start))
	}
}

// TestSilentServer: a server that takes the connection and never greets
// (a hung process, a proxy that drops) is "cannot reach the server",
// exit 2, within the connect bound the caller chose (Options.
// ConnectTimeout, what coord hook passes), not a hang.
func TestSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // never accepts: the kernel does, and nothing is said
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	url := "nats://" + l.Addr().String() + "/p"
	_, err = coordnats.Open(context.Background(), url, coordnats.Options{ConnectTimeout: 200 * time.Millisecond})
	wantOneLine(t, err, coord.CodeIO, url+": cannot reach the server")
}

func TestWrongNamespace(t *testing.T) {
	h := startHub(t)
	newNamespace(t, h, "right")
	_, err := coordnats.Open(context.Background(), h.URL()+"/wrong", coordnats.Options{})
	wantOneLine(t, err, coord.CodeIO, `no project in namespace "wrong"`)
	if !strings.Contains(err.Error(), "coord init --backend "+h.URL()+"/wrong") {
		t.Fatalf("no hint: %v", err)
	}
	// Nothing was created by trying.
	nc, _ := gonats.Connect(h.URL())
	defer nc.Close()
	if _, err := nc.Request("$JS.API.STREAM.INFO.KV_coord_wrong", nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	m, _ := nc.Request("$JS.API.STREAM.INFO.KV_coord_wrong", nil, 5*time.Second)
	if !strings.Contains(string(m.Data), "not found") {
		t.Fatalf("the wrong namespace was created: %s", m.Data)
	}
}

func TestNoJetStream(t *testing.T) {
	s := plainServer(t, &server.Options{})
	url := s.ClientURL() + "/p"
	_, err := coordnats.Open(context.Background(), url, coordnats.Options{})
	wantOneLine(t, err, coord.CodeIO, "does not run JetStream")
	_, _, err = coordnats.Init(context.Background(), url, rotdtemplate.Coordination(), coordnats.Options{})
	wantOneLine(t, err, coord.CodeIO, "does not run JetStream")
}

func TestCredentialsRefused(t *testing.T) {
	s := plainServer(t, &server.Options{JetStream: true, Username: "alice", Password: "right"})
	hp := strings.TrimPrefix(s.ClientURL(), "nats://")
	for _, url := range []string{"nats://alice:s3cret@" + hp + "/p", "nats://" + hp + "/p"} {
		_, err := coordnats.Open(context.Background(), url, coordnats.Options{})
		wantOneLine(t, err, coord.CodeIO, "refused the credentials")
	}
	// The right ones work.
	url := "nats://alice:right@" + hp + "/p"
	if _, _, err := coordnats.Init(context.Background(), url, rotdtemplate.Coordination(), coordnats.Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := coordnats.Open(context.Background(), url, coordnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.Where(), "right") {
		t.Fatalf("Where shows the password: %s", b.Where())
	}
	b.Close()
}

// A value damaged by hand in the bucket: every command that reads it
// fails with one line naming the key (exit 2) and writes nothing; doctor
// names it too.
func TestCorruptedValue(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "bad")
	s := service(t, open(t, url, coordnats.Options{}))
	seed(t, s, "1")
	nc, err := gonats.Connect(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	put := func(key, value string) {
		t.Helper()
		if _, err := nc.Request("$KV.coord_bad."+key, []byte(value), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	put("registry", `{"version":1,"tasks":[{"id":"1","status":"claimed?"}]}`)
	ctx := context.Background()
	_, err = s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}})
	wantOneLine(t, err, coord.CodeIO, url+" key registry")
	var lines []string
	s.LogRead(ctx, 0, func(l string) error { lines = append(lines, l); return nil })
	if len(lines) != 1 { // the seed only
		t.Fatalf("log after the refusal: %q", lines)
	}
	probs, err := open(t, url, coordnats.Options{}).Doctor(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range probs {
		found = found || strings.Contains(p.What, "key registry")
	}
	if !found {
		t.Fatalf("doctor: %+v", probs)
	}
	put("config", `{"stale_after": 12}`)
	_, err = coordnats.Open(ctx, url, coordnats.Options{})
	wantOneLine(t, err, coord.CodeIO, url+" key config")
	if _, err := coordnats.Open(ctx, url, coordnats.Options{Lenient: true}); err != nil {
		t.Fatalf("doctor's open: %v", err)
	}
}

// The hub answers where doctor asks, in the shape doctor reads.
func TestHubInfoAgrees(t *testing.T) {
	if hub.InfoSubject != coordnats.HubInfoSubject {
		t.Fatalf("hub answers %s, doctor asks %s", hub.InfoSubject, coordnats.HubInfoSubject)
	}
	h := startHub(t)
	url := newNamespace(t, h, "info")
	probs, err := open(t, url, coordnats.Options{}).Doctor(context.Background(), false)
	if err != nil || len(probs) != 0 {
		t.Fatalf("doctor on a fresh hub: %+v %v", probs, err)
	}
}
