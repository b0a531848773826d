package coord

import (
	"path"
	"strings"
	"time"
)

// ArchiveDone moves done tasks completed before cutoff (all done tasks
// when cutoff is zero) from Tasks to the Outbox, which the store archives
// before it commits; a done task whose work has not landed yet (still in
// flight: its write claims hold) stays. It returns the ids moved.
func (tx *Txn) ArchiveDone(cutoff time.Time) []string {
	var moved []string
	keep := tx.Tasks[:0:0]
	for _, t := range tx.Tasks {
		// Work not yet landed stays: its write claims hold until it has.
		if t.Status != Done || t.InFlight() || !cutoff.IsZero() && !completedBefore(t, cutoff) {
			keep = append(keep, t)
			continue
		}
		tx.Outbox = append(tx.Outbox, t)
		moved = append(moved, t.ID)
	}
	if len(moved) == 0 {
		return nil
	}
	tx.Tasks = keep
	tx.Index()
	tx.Log(CoordinatorID, "archived %d done tasks", len(moved))
	return moved
}

func completedBefore(t *Task, cutoff time.Time) bool {
	when, err := ParseTime(t.CompletedAt)
	return err == nil && when.Before(cutoff)
}

// ArchiveMonth is the archive a task completed at completedAt belongs to,
// "YYYY-MM" (now's month when the time is unknown).
func ArchiveMonth(completedAt string, now time.Time) string {
	when := now
	if t, err := ParseTime(completedAt); err == nil {
		when = t
	}
	return when.UTC().Format("2006-01")
}

// MaxArtifact bounds an artifact written through coord.
const MaxArtifact = 64 << 20

// ArtifactName validates the name of a ROTD artifact relative to .rotd/
// ("tasks.jsonl", "session_state.json"; ".rotd/x.json" is accepted too)
// and returns it clean. The coordination tree itself is refused: its files
// have their own commands.
func ArtifactName(name string) (string, error) {
	n := strings.TrimPrefix(CleanPath(name), ".rotd/")
	if name == "" || strings.ContainsRune(name, 0) || strings.HasPrefix(name, "/") || HasDotDot(name) || n == "" ||
		strings.HasPrefix(n, "../") || strings.HasSuffix(n, "/") {
		return "", Errorf(CodeUsage, "invalid artifact %q: give a file path inside .rotd/", clip(name))
	}
	if n == "coordination" || strings.HasPrefix(n, "coordination/") || strings.HasPrefix(n, ".lock") {
		return "", Errorf(CodeUsage, "artifact %q is inside the coordination tree", clip(name)).
			WithHint("use coord's own commands for coordination files")
	}
	return n, nil
}

// ArtifactKind is what an artifact's content must be: "jsonl" (one JSON
// object per line), "json" (one JSON document), or "" (any text).
func ArtifactKind(name string) string {
	switch path.Ext(name) {
	case ".jsonl":
		return "jsonl"
	case ".json":
		return "json"
	}
	return ""
}
