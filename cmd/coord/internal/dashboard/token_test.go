package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/coord"
)

// TestCheckToken: a blank token and one under 128 bits of entropy are
// refused (exit 1, saying how to get a strong one); random tokens of the
// usual alphabets long enough for 128 bits, and every generated one, are
// taken. The field report's "q" is refused (it was guessed in 17
// requests), and so is a long token of few characters.
func TestCheckToken(t *testing.T) {
	for _, c := range []struct {
		token string
		ok    bool
	}{
		{"", false},
		{"   ", false},
		{"q", false},
		{"s3cret", false},
		{"correct-horse-battery", false},
		{strings.Repeat("a", 64), false},
		{strings.Repeat("abcdefg", 10), false},            // 7 different characters
		{"7f3c9a0d5e1b4c2a8f6d0e9b3a5c7d1e", true},        // openssl rand -hex 16
		{"7f3c9a0d5e1b4c2a8f6d0e9b3a5c7d1", false},        // 124 bits
		{"7F3C9A0D5E1B4C2A8F6D0E9B3A5C7D1E", true},        // upper-case hex
		{"4k9QxZ2mB7vR1tL8pW3nY6", true},                  // 22 alphanumerics: 130 bits
		{"4k9QxZ2mB7vR1tL8pW3n", false},                   // 20: 119 bits
		{"Qk8v/Zx+3Lm9Tq2Rw7Yb1A==", true},                // base64 of 16 bytes
		{"904813726590348172659034871265903487126", true}, // 39 digits: 129.5 bits
		{"90481372659034817265903487126590348712", false}, // 38 digits
		{"7f3c9a0d5e1b4c2a8f6d0e9b3a5c7d1e\x1b", false},   // a control character
		{"7f3c9a0d5e1b4c2a 8f6d0e9b3a5c7d1e", false},      // a space
		{"7f3c9a0d5e1b4c2a8f6d0e9b3a5c7d1éé", false},      // not ASCII
	} {
		err := dashboard.CheckToken("--token", c.token)
		if (err == nil) != c.ok {
			t.Errorf("CheckToken(%q) = %v (%.0f bits), want ok=%v", c.token, err, dashboard.TokenBits(c.token), c.ok)
		}
		if err != nil && (coord.CodeOf(err) != coord.CodeUsage || !strings.Contains(err.Error(), "--token generate") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("CheckToken(%q): %q is not one usage line naming --token generate", c.token, err)
		}
	}
	for range 100 {
		if tok := dashboard.NewToken(); dashboard.CheckToken("--token", tok) != nil {
			t.Fatalf("a generated token is refused: %q", tok)
		}
	}
}

// limitFixture serves a dashboard guarded by a strong token, on a clock
// the test moves, through its handler (so each request may come from any
// address).
type limitFixture struct {
	t     *testing.T
	token string
	h     http.Handler
	d     *dashboard.Server
	mu    sync.Mutex
	now   time.Time
}

func newLimitFixture(t *testing.T) *limitFixture {
	lf := &limitFixture{t: t, token: dashboard.NewToken(), now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	f := newActsFixture(t, dashboard.Options{Token: lf.token, User: "pat", Now: lf.clock}, true, "", "", sample()...)
	lf.h, lf.d = f.d.Handler(), f.d
	return lf
}

func (lf *limitFixture) clock() time.Time { lf.mu.Lock(); defer lf.mu.Unlock(); return lf.now }

func (lf *limitFixture) advance(d time.Duration) {
	lf.mu.Lock()
	lf.now = lf.now.Add(d)
	lf.mu.Unlock()
}

// do sends a request from addr (host:port) and returns the recorded answer.
func (lf *limitFixture) do(addr, method, path, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(`{"reason":"x"}`))
	req.RemoteAddr = addr
	req.Host = "127.0.0.1:7777"
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	lf.h.ServeHTTP(w, req)
	return w
}

// TestWrongTokensLimited: ten wrong tokens from one address are 401s;
// the eleventh attempt is 429 with Retry-After, and so is the right
// token from that address (else the limit would only hide which guess
// was right), for reads (Bearer or ?token=) and writes alike; a request
// without a token is not an attempt (401, never 429); another address is
// not held up; once the clock has given an attempt back the right token
// is let in again. Against the build without the limit, the attempts are
// all 401 and the right token 200 at once.
func TestWrongTokensLimited(t *testing.T) {
	lf := newLimitFixture(t)
	const a, b = "192.0.2.7:50000", "198.51.100.9:40000"
	for i := range 10 {
		if w := lf.do(a, "GET", "/api/state.json", fmt.Sprintf("guess%d", i)); w.Code != 401 {
			t.Fatalf("wrong token %d: %d, want 401", i+1, w.Code)
		}
	}
	for _, c := range []struct {
		method, path, token string
	}{
		{"GET", "/api/state.json", "guess10"},
		{"GET", "/api/state.json?token=guess11", ""},
		{"GET", "/api/state.json", lf.token},
		{"GET", "/?token=" + lf.token, ""},
		{"POST", "/api/tasks/1.1/requeue", lf.token},
		{"POST", "/api/tasks/1.1/requeue", "guess12"},
	} {
		w := lf.do(a, c.method, c.path, c.token)
		if w.Code != 429 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "429 too many wrong tokens") {
			t.Errorf("%s %s (token %q) after 10 wrong ones: %d, Retry-After %q, %q; want 429 with Retry-After",
				c.method, c.path, c.token, w.Code, w.Header().Get("Retry-After"), w.Body.String())
		}
	}
	if w := lf.do(a, "GET", "/api/state.json", ""); w.Code != 401 {
		t.Errorf("no token while limited: %d, want 401", w.Code)
	}
	if w := lf.do("192.0.2.7:50001", "GET", "/api/state.json", lf.token); w.Code != 429 {
		t.Errorf("the same address from another port: %d, want 429", w.Code)
	}
	if w := lf.do(b, "GET", "/api/state.json", lf.token); w.Code != 200 {
		t.Errorf("another address with the token: %d, want 200", w.Code)
	}
	// IPv6: one /64 is one client.
	for i := range 10 {
		lf.do(fmt.Sprintf("[2001:db8::%x]:1", i+1), "GET", "/api/state.json", "guess")
	}
	if w := lf.do("[2001:db8::ffff]:1", "GET", "/api/state.json", lf.token); w.Code != 429 {
		t.Errorf("an address of a /64 that sent 10 wrong tokens: %d, want 429", w.Code)
	}
	if w := lf.do("[2001:db8:0:1::1]:1", "GET", "/api/state.json", lf.token); w.Code != 200 {
		t.Errorf("an address of another /64: %d, want 200", w.Code)
	}
	lf.advance(6 * time.Second)
	if w := lf.do(a, "GET", "/api/state.json", lf.token); w.Code != 200 {
		t.Errorf("after an attempt came back, the right token: %d, want 200", w.Code)
	}
	if w := lf.do(a, "GET", "/api/state.json", "guess13"); w.Code != 401 {
		t.Errorf("the attempt given back: %d, want 401", w.Code)
	}
	if w := lf.do(a, "GET", "/api/state.json", "guess14"); w.Code != 429 {
		t.Errorf("a second attempt within 6 s: %d, want 429", w.Code)
	}
}

// TestLimiterBounded: wrong tokens from 20,000 addresses leave the
// limiter holding at most 4,097 (the table and the bucket every other
// address shares), and the addresses it cannot track still cannot guess
// faster than that one shared bucket allows; once every attempt has come
// back, an address is forgotten.
func TestLimiterBounded(t *testing.T) {
	lf := newLimitFixture(t)
	for i := range 20000 {
		lf.do(fmt.Sprintf("10.%d.%d.%d:1", i>>16, i>>8&0xff, i&0xff), "GET", "/api/state.json", "guess")
	}
	if n := lf.d.LimiterTracked(); n > 4097 {
		t.Fatalf("the limiter holds %d addresses, want at most 4097", n)
	}
	// the shared bucket is spent: a new address is refused at once
	if w := lf.do("203.0.113.1:1", "GET", "/api/state.json", lf.token); w.Code != 429 {
		t.Fatalf("a new address while the shared bucket is spent: %d, want 429", w.Code)
	}
	lf.advance(time.Minute) // every attempt back
	if w := lf.do("203.0.113.1:1", "GET", "/api/state.json", lf.token); w.Code != 200 {
		t.Fatalf("a new address after a minute: %d, want 200", w.Code)
	}
	lf.do("203.0.113.2:1", "GET", "/api/state.json", "guess") // prunes the paid-back ones
	if n := lf.d.LimiterTracked(); n > 2 {
		t.Fatalf("after every attempt came back the limiter still holds %d addresses", n)
	}
}
