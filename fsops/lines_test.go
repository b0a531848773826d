package fsops

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestEnsureLines(t *testing.T) {
	want := []string{"/.rotd/coordination/", "/.rotd/agent_id"}
	for _, c := range []struct {
		name, before, after string
		added               []string
	}{
		{"missing file", "", "/.rotd/coordination/\n/.rotd/agent_id\n", want},
		{"empty file", "\x00", "/.rotd/coordination/\n/.rotd/agent_id\n", want},
		{"no final newline", "# mine\n*.tmp", "# mine\n*.tmp\n/.rotd/coordination/\n/.rotd/agent_id\n", want},
		{"one there", "/.rotd/agent_id\n", "/.rotd/agent_id\n/.rotd/coordination/\n", want[:1]},
		{"both there, with blanks", "  /.rotd/coordination/ \n/.rotd/agent_id", "  /.rotd/coordination/ \n/.rotd/agent_id", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "info", "exclude")
			switch c.before {
			case "":
			case "\x00":
				os.MkdirAll(filepath.Dir(name), 0o755)
				os.WriteFile(name, nil, 0o644)
			default:
				os.MkdirAll(filepath.Dir(name), 0o755)
				os.WriteFile(name, []byte(c.before), 0o644)
			}
			added, err := EnsureLines(context.Background(), name, want, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(added, c.added) {
				t.Errorf("added %q, want %q", added, c.added)
			}
			got, _ := os.ReadFile(name)
			if string(got) != c.after {
				t.Errorf("file is %q, want %q", got, c.after)
			}
			// idempotent
			added, err = EnsureLines(context.Background(), name, want, time.Second)
			if err != nil || added != nil {
				t.Errorf("second call added %q, %v", added, err)
			}
			if again, _ := os.ReadFile(name); string(again) != string(got) {
				t.Errorf("second call changed the file to %q", again)
			}
		})
	}
}

// A FIFO (or any non-regular file) at the name is refused at once, never
// read: opening one for reading would block until a writer came.
func TestEnsureLinesNotRegular(t *testing.T) {
	name := filepath.Join(t.TempDir(), "exclude")
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := EnsureLines(context.Background(), name, []string{"x"}, time.Second)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err = %v, want 'not a regular file'", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("EnsureLines blocked on a FIFO")
	}
}
