package check

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRun: the exit status and the last lines; a signal and a timeout
// read as a shell reads them (128+N), with what ended the check said.
func TestRun(t *testing.T) {
	ctx := context.Background()
	env := os.Environ()
	r, err := Run(ctx, nil, t.TempDir(), []string{"sh", "-c", "for i in $(seq 2000); do echo line $i; done; exit 3"}, env, time.Minute, 100)
	if err != nil || r.Exit != 3 || r.Signal != 0 || r.TimedOut || r.Passed() || r.How() != "exited 3" {
		t.Fatalf("exit 3: %+v, %v", r, err)
	}
	if !strings.HasPrefix(r.Tail, "line ") || !strings.HasSuffix(r.Tail, "line 2000\n") || len(r.Tail) > 100 {
		t.Fatalf("tail %q", r.Tail)
	}
	r, err = Run(ctx, nil, t.TempDir(), []string{"sh", "-c", "kill -TERM $$"}, env, time.Minute, 0)
	if err != nil || r.Signal != syscall.SIGTERM || r.Exit != 128+15 || !strings.Contains(r.How(), "SIGTERM") {
		t.Fatalf("killed by SIGTERM: %+v, %v", r, err)
	}
	r, err = Run(ctx, nil, t.TempDir(), []string{"sleep", "60"}, env, 200*time.Millisecond, 0)
	if err != nil || !r.TimedOut || r.Exit != 137 || r.How() != "ran out of time" || r.Took > 30*time.Second {
		t.Fatalf("over time: %+v, %v", r, err)
	}
	if _, err := Run(ctx, nil, t.TempDir(), []string{"/nonexistent/check"}, env, time.Minute, 0); err == nil {
		t.Fatal("a check that cannot start: no error")
	}
	r, err = Run(ctx, nil, t.TempDir(), []string{"true"}, env, time.Minute, 0)
	if err != nil || !r.Passed() {
		t.Fatalf("true: %+v, %v", r, err)
	}
}

// TestExitOf: the supervisor's reports in the one convention.
func TestExitOf(t *testing.T) {
	for report, want := range map[string]Status{
		"exit 0":         {},
		"exit 3":         {Exit: 3},
		"signal 9":       {Exit: 137, Signal: 9},
		"error no such":  {Exit: 127},
		"something else": {Exit: 127},
	} {
		if got, _ := ExitOf(report); got != want {
			t.Errorf("ExitOf(%q) = %+v, want %+v", report, got, want)
		}
	}
	if _, text := ExitOf("signal 9"); text != "killed by SIGKILL (signal 9)" {
		t.Errorf("signal 9 text %q", text)
	}
}

// TestTail: the last lines from a line's start, valid UTF-8.
func TestTail(t *testing.T) {
	tl := NewTail(10)
	for i := 0; i < 100; i++ {
		tl.Write([]byte("abc\n"))
	}
	tl.Write([]byte("x\xffy\n"))
	if got := tl.String(); got != "abc\nx\uFFFDy\n" {
		t.Fatalf("tail %q", got)
	}
}
