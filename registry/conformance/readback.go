package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/format"
)

// checkReadBack: no commit writes what coord cannot read back
// (docs/FORMATS.md, "Reading strictly"). A change whose result the engine's strict reader would refuse is
// refused with code 1 (coord.ErrUnreadable) before anything is written,
// and the project reads as before: a log line longer than any reader
// takes (by the log store and inside a registry commit), a kv value the
// strict reading refuses; and (checkReadBackSize) a registry grown past
// what the reader takes.
func checkReadBack(t *testing.T, e *env) {
	s, b, refused := readBackEnv(t, e)
	long := strings.Repeat("l", coord.MaxLogLine)
	refused("a log line over the bound", b.Log().Append(e.ctx, coord.Event{Time: e.clock.Now(), Agent: "a", Text: long}))
	refused("a commit whose log line is over the bound", b.Tasks().Update(e.ctx, func(tx *coord.Txn) error {
		task := tx.Task("t1")
		task.Progress, task.Dirty = 50, true
		tx.Log("a", "%s", long)
		return nil
	}))
	_, err := s.KVSet(e.ctx, "k", json.RawMessage(`{"A":1,"a":2}`), time.Hour, "a", coord.KVCond{})
	refused("a kv value with keys that differ only in case", err)
}

// checkReadBackSize: the field report: a seed batch of long lines made a
// registry larger than any reader takes, and every later command failed.
// A batch within every bound on text whose registry would be larger than
// that (64 MiB: 65 tasks of 1 MiB) is refused with code 1, nothing
// written, and the registry reads as before.
func checkReadBackSize(t *testing.T, e *env) {
	s, _, refused := readBackEnv(t, e)
	filler := strings.Repeat("n", 1<<20)
	var batch []coord.SeedLine
	for i := range 65 {
		task, err := format.ParseTaskLine("big", []byte(fmt.Sprintf(`{"id":"big%d","notes":%q}`, i, filler)))
		ok(t, "seed line", err)
		batch = append(batch, coord.SeedLine{Line: i + 1, Task: task})
	}
	_, err := s.Seed(e.ctx, app.SeedRequest{Name: "big.jsonl", Batch: batch})
	refused("a seed batch that would make the registry too large to read", err)
	if list, err := s.Tasks(e.ctx, app.ListRequest{}); err != nil || len(list) != 1 {
		t.Errorf("the registry after the refusal: %d tasks, %v", len(list), err)
	}
}

// readBackEnv is a project with one claimed task, and refused, which
// checks that an error is a refusal to write what would not read back and
// that the project's stored state is as it was.
func readBackEnv(t *testing.T, e *env) (*app.Service, coord.Backend, func(what string, err error)) {
	s := e.svc()
	b := e.open()
	e.seed(s, &coord.Task{ID: "t1"})
	e.claim(s, "a", "t1")
	// Reading the log waits for the lines of this service's commits (an
	// engine may append them in the background).
	_, err := s.LogRead(e.ctx, 1, func(string) error { return nil })
	ok(t, "log", err)
	before := e.p.Raw(t)
	unchanged := func(what string) {
		t.Helper()
		if after := e.p.Raw(t); !maps.Equal(before, after) {
			for k := range before {
				if before[k] != after[k] {
					t.Errorf("%s: %s changed", what, k)
				}
			}
			for k := range after {
				if _, ok := before[k]; !ok {
					t.Errorf("%s: %s written", what, k)
				}
			}
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		wantCode(t, what, err, coord.CodeUsage)
		if err != nil && !errors.Is(err, coord.ErrUnreadable) {
			t.Errorf("%s: %v is not a refusal to write what would not read back", what, err)
		}
		unchanged(what)
	}
	return s, b, refused
}
