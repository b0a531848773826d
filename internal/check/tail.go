package check

import (
	"strings"
	"sync"
)

// Tail is an io.Writer that keeps the last bytes written to it: a
// check's output, kept for a note without holding all of it.
type Tail struct {
	mu  sync.Mutex
	max int
	b   []byte
	cut bool // bytes were dropped from the front
}

// NewTail keeps at most max bytes (max <= 0: 2 KiB).
func NewTail(max int) *Tail {
	if max <= 0 {
		max = 2 << 10
	}
	return &Tail{max: max}
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max { // trim now and then, not on every write
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the last lines written, at most max bytes, from the start of a line when bytes were dropped and a line
// begins in them, as valid UTF-8.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.b
	cut := t.cut
	if len(b) > t.max {
		b, cut = b[len(b)-t.max:], true
	}
	if cut {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
