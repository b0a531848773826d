package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// frameWriter collects top's output and cancels once n frames are in.
type frameWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	n      int
	cancel context.CancelFunc
}

func (w *frameWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Count(w.buf.String(), "\nLOG\n") >= w.n {
		w.cancel()
	}
	return len(p), nil
}

// TestTopNotATerminal: the live top writes frames one after another, with
// no escape sequence, when its stdout is not a terminal (a pipe, a file).
//
// Broken build this fails against: top writing its cursor and clear-screen
// sequences whatever stdout is.
func TestTopNotATerminal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if code, _, errs := coordIn("--root", root, "init"); code != 0 {
		t.Fatalf("init: %s", errs)
	}
	if code, _, errs := coordIn("--root", root, "--agent", "a", "msg", "hello"); code != 0 {
		t.Fatalf("msg: %s", errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := &frameWriter{n: 2, cancel: cancel}
	// Two frames: the first, then the redraw that follows within a second.
	var errb bytes.Buffer
	run(ctx, []string{"coord", "--root", root, "top"}, strings.NewReader(""), w, &errb)
	w.mu.Lock()
	out := w.buf.String()
	w.mu.Unlock()
	if n := strings.Count(out, "\nLOG\n"); n < 2 {
		t.Fatalf("top ended after %d frames (stderr %q): %q", n, errb.String(), out)
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Fatalf("top wrote escape sequences to a non-terminal: %q", out)
	}
	if !strings.Contains(out, "a ▶ hello") {
		t.Fatalf("frame without the log: %q", out)
	}
}

// TestIsTerminal: a pseudo-terminal is one, a pipe is not.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Fatal("a pipe or a buffer taken for a terminal")
	}
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptm.Close()
	if !isTerminal(ptm) {
		t.Fatal("a pseudo-terminal not recognised")
	}
}

// TestDemoPlainWhenPiped: make demo's headings carry no escape sequence
// when its output is piped (the demo itself runs in 'make demo').
func TestDemoPlainWhenPiped(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(script)
	i, j := strings.Index(s, "# Bold headings"), strings.Index(s, "\nfi\n")
	if i < 0 || j < i {
		t.Fatal("demo.sh: the say() definition moved; update this test")
	}
	out, err := exec.Command("bash", "-c", s[i:j+4]+"say heading").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "== heading\n" {
		t.Fatalf("piped demo heading %q", out)
	}
}
