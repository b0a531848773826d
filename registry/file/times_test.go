package file

import (
	"context"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// TestRotateFutureFirstLine: a first log line dated in the future (a hand
// edit, a clock set back) never stops the daily rotation: the log is
// dated by its first line of today or before, else by today, so it
// rotates once a later day comes.
//
// Broken build this fails against: the log dated by its first line as it
// reads (a line from 2999 kept coordination.log from ever rotating).
func TestRotateFutureFirstLine(t *testing.T) {
	ctx := context.Background()
	day := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, log string
		now       time.Time
		want      string // rotated name, "" none
	}{
		{"a past line after the future one", "[2999-01-01T00:00:00Z] x ▶ from the future\n[2026-11-21T09:00:00Z] a ▶ yesterday\n", day, "coordination-2026-11-21.log"},
		{"only future lines, today", "[2999-01-01T00:00:00Z] x ▶ from the future\n", day, ""},
		{"only future lines, then a foreign one", "[2999-01-01T00:00:00Z] x ▶ from the future\nnot ours\n", day, ""},
		{"today", "[2026-11-22T09:00:00Z] a ▶ today\n", day, ""},
		{"yesterday", "[2026-11-21T09:00:00Z] a ▶ yesterday\n", day, "coordination-2026-11-21.log"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := freshStore(t, crashSeed)
			writeTreeFile(t, s, LogFile, []byte(c.log))
			got, err := s.rotate(ctx, c.now)
			if err != nil || got != c.want {
				t.Fatalf("rotate: %q, %v; want %q", got, err, c.want)
			}
		})
	}

	// Only lines from the future: today's lines follow them, and the next
	// day the log rotates under today's name.
	s := freshStore(t, crashSeed)
	writeTreeFile(t, s, LogFile, []byte("[2999-01-01T00:00:00Z] x ▶ from the future\n"))
	if err := s.appendLog(ctx, coord.Event{Time: day, Agent: "a", Text: "today"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.rotate(ctx, day.Add(24*time.Hour)); err != nil || got != "coordination-2026-11-22.log" {
		t.Fatalf("rotate the next day: %q, %v", got, err)
	}
}
