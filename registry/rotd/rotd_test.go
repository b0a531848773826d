package rotd

import (
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// The mapping of the README's table, one row each, on ROTD's own example
// lines and a few of ours.
func TestParseTasks(t *testing.T) {
	in := `{"id":"1.1","title":"a","status":"complete","completed":"2026-11-20T10:00:00Z","priority":"high","phase":"1"}
{"id":"1.2","title":"b","status":"pending","priority":"deferred","tests":["x"]}
{"id":"2.1","title":"c","status":"pending","depends_on":["1"]}
{"id":"2.2","title":"d","status":"in_progress","depends_on":["1.1"]}
{"id":"2.3","title":"e","status":"pending","depends_on":["9"]}
{"id":"2.4","title":"f","status":"blocked"}
`
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	got, err := ParseTasks("tasks.jsonl", strings.NewReader(in), func(string) []string { return nil }, func(string) bool { return false }, now)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*coord.Task{}
	for _, s := range got {
		byID[s.Task.ID] = s.Task
	}
	check := func(id string, st coord.Status, pri coord.Priority, deps string, reason string) {
		t.Helper()
		task := byID[id]
		if task == nil || task.Status != st || task.Priority != pri || strings.Join(task.Deps, ",") != deps || !strings.Contains(task.BlockedReason, reason) {
			t.Errorf("%s: %+v", id, task)
		}
	}
	check("1.1", coord.Done, coord.High, "", "")
	check("1.2", coord.Unclaimed, coord.Low, "", "")
	check("2.1", coord.Unclaimed, coord.Medium, "1.1,1.2", "")
	check("2.2", coord.Blocked, coord.Medium, "1.1", "in progress in ROTD")
	check("2.3", coord.Blocked, coord.Medium, "", "waits for ROTD phase 9")
	check("2.4", coord.Blocked, coord.Medium, "", "blocked in ROTD")
	if byID["1.1"].CompletedAt != "2026-11-20T10:00:00Z" || byID["1.1"].Progress != 100 {
		t.Errorf("completed task: %+v", byID["1.1"])
	}
	if raw := string(byID["1.2"].Raw); !strings.Contains(raw, `"tests":["x"]`) || !strings.Contains(raw, `"rotd_priority":"deferred"`) {
		t.Errorf("ROTD's own fields not kept: %s", raw)
	}
	if p := TaskPhase(byID["1.1"]); p != "1" {
		t.Errorf("phase %q", p)
	}
	for _, bad := range []string{`{"id":"1.1","status":"started"}`, `{"id":"1.1","status":"pending","priority":"p0"}`, `{"id":"a/b","status":"pending"}`, `[1]`} {
		if _, err := ParseTasks("t.jsonl", strings.NewReader(bad+"\n"), func(string) []string { return nil }, func(string) bool { return false }, now); coord.CodeOf(err) != coord.CodeUsage || !strings.Contains(err.Error(), "t.jsonl: line 1") {
			t.Errorf("%s: %v, want exit 1 naming the line", bad, err)
		}
	}
}

// ROTD's other fields are kept, but a field coord owns is refused: only
// the mapping sets coord's state (a line's "epoch" could push the fencing
// counter to where no claim can be issued).
func TestParseTasksRefusesOwnedFields(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	none := func(string) []string { return nil }
	no := func(string) bool { return false }
	for _, f := range coord.OwnedFields {
		in := `{"id":"1.1","title":"a","status":"pending","` + f + `":9223372036854775807}` + "\n"
		_, err := ParseTasks("t.jsonl", strings.NewReader(in), none, no, now)
		if coord.CodeOf(err) != coord.CodeUsage || !strings.Contains(err.Error(), `t.jsonl: line 1: field "`+f+`" is coord's to set`) {
			t.Errorf("%s: %v, want exit 1 naming the line and the field", f, err)
		}
	}
	got, err := ParseTasks("t.jsonl", strings.NewReader(`{"id":"1.1","title":"a","status":"pending","my_tool":{"x":1},"phase":"1"}`+"\n"), none, no, now)
	if err != nil || !strings.Contains(string(got[0].Task.Raw), `"my_tool":{"x":1}`) {
		t.Fatalf("other fields: %v, %v", got, err)
	}
}
