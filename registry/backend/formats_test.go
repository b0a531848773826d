package backend

import (
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// Formats reads each dialect with its own reader, refuses an unknown one
// (exit 1), and reads the registry only for the dialect that refers to
// it (ROTD's phase dependencies).
func TestFormatsParseSeed(t *testing.T) {
	var f Formats
	now := time.Date(2025, 7, 6, 12, 0, 0, 0, time.UTC)
	read := 0
	have := func() ([]*coord.Task, error) {
		read++
		return []*coord.Task{{ID: "5.1"}}, nil
	}
	batch, err := f.ParseSeed("", "tasks.jsonl", strings.NewReader(`{"id":"a","title":"A"}`+"\n"), have, now)
	if err != nil || len(batch) != 1 || batch[0].Task.ID != "a" || read != 0 {
		t.Fatalf("coord dialect: %+v %v (registry read %d times)", batch, err, read)
	}
	batch, err = f.ParseSeed("rotd", "tasks.jsonl", strings.NewReader(`{"id":"6.1","title":"B","status":"pending","depends_on":["5"]}`+"\n"), have, now)
	if err != nil || len(batch) != 1 || read != 1 {
		t.Fatalf("rotd dialect: %+v %v (registry read %d times)", batch, err, read)
	}
	if deps := batch[0].Task.Deps; len(deps) != 1 || deps[0] != "5.1" {
		t.Fatalf("rotd phase 5 resolved to %v, want the registry's 5.1", deps)
	}
	if _, err := f.ParseSeed("csv", "tasks.csv", strings.NewReader(""), have, now); coord.CodeOf(err) != coord.CodeUsage || !strings.Contains(err.Error(), `"csv"`) {
		t.Fatalf("unknown dialect: %v, want exit 1 naming it", err)
	}
}
