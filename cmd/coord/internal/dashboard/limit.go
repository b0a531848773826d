package dashboard

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Failed attempts are rate-limited per client address: a request that
// presents a token (Bearer or ?token=) and gets it wrong spends one of
// its address's guessBurst attempts, which come back at one every
// guessEvery. An address with none left is answered 429 with Retry-After
// for every request that presents a token, the right one included (else
// the limit would only hide which guess was right), until one has come
// back. A request without a token guesses nothing and is not counted.
//
// Memory is bounded: at most maxTracked addresses are tracked (an IPv6
// client by its /64, which one host usually holds whole); an address
// whose attempts have all come back is forgotten, and when the table is
// full of addresses still paying back, every new address shares one
// bucket, so many addresses cannot guess faster than one plus that
// bucket.
const (
	guessBurst = 10
	guessEvery = 6 * time.Second
	maxTracked = 4096
)

// sharedKey is the bucket of every address the full table cannot take.
const sharedKey = "*"

type limiter struct {
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

// bucket is one address's attempts: left as of at.
type bucket struct {
	left float64
	at   time.Time
}

func newLimiter(now func() time.Time) *limiter {
	if now == nil {
		now = time.Now
	}
	return &limiter{now: now, buckets: map[string]*bucket{}}
}

// clientKey is the address a request is limited by: its peer's IP (an
// IPv6 one cut to its /64). Headers such as X-Forwarded-For are never
// read: a client could set them to anything.
func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// refill brings b's attempts up to now.
func (l *limiter) refill(b *bucket, now time.Time) {
	if now.After(b.at) {
		b.left = math.Min(guessBurst, b.left+float64(now.Sub(b.at))/float64(guessEvery))
	}
	b.at = now
}

// wait is how long key must wait before its next attempt (0: it may try
// now).
func (l *limiter) wait(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if b, ok = l.buckets[sharedKey]; !ok || len(l.buckets) < maxTracked {
			return 0
		}
	}
	now := l.now()
	l.refill(b, now)
	if b.left >= 1 {
		return 0
	}
	return time.Duration((1 - b.left) * float64(guessEvery))
}

// failed spends one of key's attempts.
func (l *limiter) failed(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxTracked {
			l.forgetPaid(now)
		}
		if len(l.buckets) >= maxTracked {
			key = sharedKey
		}
		if b, ok = l.buckets[key]; !ok {
			b = &bucket{left: guessBurst, at: now}
			l.buckets[key] = b
		}
	}
	l.refill(b, now)
	b.left--
}

// forgetPaid drops the addresses whose attempts have all come back: they
// are as if never seen.
func (l *limiter) forgetPaid(now time.Time) {
	for k, b := range l.buckets {
		if l.refill(b, now); b.left >= guessBurst {
			delete(l.buckets, k)
		}
	}
}

// tracked is how many addresses the limiter holds (for tests).
func (l *limiter) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// tooMany answers a request from an address that must wait: 429 with
// Retry-After in whole seconds (at least 1).
func tooMany(w http.ResponseWriter, wait time.Duration) (status int, msg string) {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return http.StatusTooManyRequests, "429 too many wrong tokens from this address: try again in " + strconv.Itoa(secs) + " s"
}
