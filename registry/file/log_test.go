package file

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// A torn tail (a line cut short by a power loss) and foreign lines are
// skipped and counted, never mis-parsed; the next append starts on a
// line of its own.
func TestLogTornTail(t *testing.T) {
	s := freshStore(t, crashSeed)
	now := time.Now().UTC()
	day := now.Format("2006-01-02")
	torn := "[" + day + "T10:00:00Z] a ▶ whole line\n" +
		"garbage that is not ours\n" +
		"[" + day + "T10:00:01Z] a ▶ cut sh"
	if err := os.WriteFile(s.tree.Path(LogFile), []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, skipped, err := s.logLines(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.HasSuffix(lines[0], "whole line") || skipped != 2 {
		t.Fatalf("lines %q, skipped %d; want the whole line only and 2 skipped", lines, skipped)
	}
	if err := s.appendLog(context.Background(), coord.Event{Time: now, Agent: "b", Text: "after"}); err != nil {
		t.Fatal(err)
	}
	lines, _, _ = s.logLines(0)
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "b ▶ after") || !strings.HasPrefix(last, "[") {
		t.Fatalf("append after a torn tail was glued to it: %q", lines)
	}
}
