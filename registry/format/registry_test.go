package format

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
)

// ROTD's own example registry (registry/format/testdata/rotd, MIT, see LICENSE
// there) must be read as it is, and written back without losing anything.
func TestParseROTDExample(t *testing.T) {
	data, err := os.ReadFile("testdata/rotd/active_work_registry.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("example", data)
	if err != nil {
		t.Fatalf("ROTD example refused: %v", err)
	}
	if len(f.Tasks) < 4 {
		t.Fatalf("got %d tasks, want at least 4", len(f.Tasks))
	}
	first := f.Tasks[0]
	if first.ID != "2.1" || first.Status != coord.Claimed || first.ClaimedBy != "agent-12345-frontend" ||
		first.Capability != "frontend_ts" || first.SkillLevel != coord.Intermediate || first.Priority != coord.High {
		t.Fatalf("first task decoded as %+v", first)
	}
	// Unchanged tasks are written byte for byte.
	out := mustEncode(t, f)
	for _, task := range f.Tasks {
		if !bytes.Contains(out, task.Raw) {
			t.Errorf("task %s not kept verbatim", task.ID)
		}
	}
	g, err := Parse("re-encoded", out)
	if err != nil {
		t.Fatalf("re-encoded registry refused: %v\n%s", err, out)
	}
	if !sameTasks(f.Tasks, g.Tasks) {
		t.Fatal("tasks changed across a write")
	}
}

func TestEncodeKeepsUnknownFields(t *testing.T) {
	in := `{"version":1,"owner":{"team":"x"},"tasks":[` +
		`{"id":"a","title":"A","x-note":[1,2,{"k":null}],"status":"unclaimed","epoch":0}` +
		`],"trailer":"kept"}`
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	task := f.Tasks[0]
	task.Status, task.ClaimedBy, task.Epoch, task.Dirty = coord.Claimed, "agent-1", 7, true
	f.LastEpoch = 7
	out := string(mustEncode(t, f))
	for _, want := range []string{`"owner":{"team":"x"}`, `"x-note":[1,2,{"k":null}]`, `"trailer":"kept"`,
		`"status":"claimed"`, `"claimed_by":"agent-1"`, `"epoch":7`, `"last_epoch":7`} {
		if !strings.Contains(out, want) {
			t.Errorf("encoded registry lacks %s:\n%s", want, out)
		}
	}
	// Unknown task fields keep their place before the known ones after them.
	if strings.Index(out, `"x-note"`) > strings.Index(out, `"status"`) {
		t.Errorf("member order changed:\n%s", out)
	}
	g, err := Parse("again", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if g.Tasks[0].Status != coord.Claimed || g.Tasks[0].Epoch != 7 || g.LastEpoch != 7 {
		t.Fatalf("round trip lost the change: %+v", g.Tasks[0])
	}
}

func TestParseRefuses(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", ``, "JSON object"},
		{"array", `[]`, "JSON object"},
		{"no tasks", `{"version":1}`, `no "tasks"`},
		{"duplicate top key", `{"tasks":[],"tasks":[]}`, "duplicate key"},
		{"case-variant top key", `{"tasks":[],"Tasks":[]}`, "differ only in case"},
		{"duplicate task key", `{"tasks":[{"id":"a","id":"b"}]}`, "duplicate key"},
		{"case-variant task key", `{"tasks":[{"id":"a","ID":"b"}]}`, "differ only in case"},
		{"escaped duplicate", `{"tasks":[{"id":"a","\u0069d":"b"}]}`, "duplicate key"},
		{"nested duplicate", `{"tasks":[{"id":"a","x":{"k":1,"k":2}}]}`, "duplicate key"},
		{"nested case variant", `{"tasks":[],"x":[{"Ab":1,"aB":2}]}`, "differ only in case"},
		{"kelvin sign fold", `{"tasks":[],"x":{"k":1,"\u212a":2}}`, "differ only in case"},
		{"invalid utf-8", "{\"tasks\":[{\"id\":\"a\",\"title\":\"\xff\"}]}", "UTF-8"},
		{"lone surrogate", `{"tasks":[{"id":"a","title":"\ud800"}]}`, "surrogate"},
		{"trailing data", `{"tasks":[]} {}`, "trailing data"},
		{"truncated", `{"tasks":[{"id":"a"`, ""},
		{"byte-order mark", "\xef\xbb\xbf{\"tasks\":[]}", "byte-order mark"},
		{"traversal id", `{"tasks":[{"id":"../../etc/passwd"}]}`, "task id"},
		{"bad status", `{"tasks":[{"id":"a","status":"finished"}]}`, "status"},
		{"bad priority", `{"tasks":[{"id":"a","priority":"asap"}]}`, "priority"},
		{"duplicate id", `{"tasks":[{"id":"a"},{"id":"a"}]}`, "appears twice"},
		{"future version", `{"version":2,"tasks":[]}`, "upgrade coord"},
		{"epoch not a number", `{"tasks":[{"id":"a","epoch":"1"}]}`, "epoch"},
		{"leading zero", `{"tasks":[],"n":01}`, ""},
		{"deep nesting", `{"tasks":[],"x":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`, "nesting"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("reg.json", []byte(c.in))
			if err == nil {
				t.Fatalf("accepted %q", c.in)
			}
			if !strings.HasPrefix(err.Error(), "reg.json: ") {
				t.Errorf("error does not name the file: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestParseSeedLine(t *testing.T) {
	task, err := ParseSeedLine("seed:1", []byte(`{"id":"4.2","title":"t","description":"d","status":"unclaimed","deps":["4.1"],"files":["src/**"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "4.2" || task.Status != coord.Unclaimed || task.Description != "d" || !reflect.DeepEqual(task.Deps, []string{"4.1"}) || !task.Dirty {
		t.Fatalf("decoded %+v", task)
	}
	for _, bad := range []string{``, `[]`, `{"id":"a"} x`, `{"title":"no id"}`, `{"id":"a/b"}`, `{"id":"a","id":"a"}`} {
		if _, err := ParseSeedLine("seed:3", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "seed:3") {
			t.Errorf("%q: err = %v, want an error naming seed:3", bad, err)
		} else if coord.CodeOf(err) != coord.CodeUsage {
			t.Errorf("%q: code %d, want usage", bad, coord.CodeOf(err))
		}
	}
}

// A seed line carries only the task fields of the contract: an unknown
// field is refused naming the nearest known one, a field coord owns is
// refused, and so is a status other than unclaimed. (A seed line with
// "epoch": MaxInt64 stopped every claim for good.)
func TestParseSeedLineFields(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"id":"a","titel":"x"}`, `seed:2: unknown field "titel"; the nearest known field is "title"`},
		{`{"id":"a","descripton":"x"}`, `the nearest known field is "description"`},
		{`{"id":"a","dep":["b"]}`, `unknown field "dep"; the nearest known field is "deps"`},
		{`{"id":"a","priorty":"high"}`, `the nearest known field is "priority"`},
		{`{"id":"a","skill-level":"entry"}`, `the nearest known field is "skill_level"`},
		{`{"id":"a","conflictgroup":"g"}`, `the nearest known field is "conflict_group"`},
		{`{"id":"a","CAPABILITY":"go"}`, `"CAPABILITY" is not a field; names are case-sensitive (did you mean "capability"?)`},
		{`{"id":"a","x_unknown":{"kept":true}}`, `unknown field "x_unknown"; the nearest known field is`},
		{`{"id":"a","epoch":9223372036854775807}`, `seed:2: field "epoch" is coord's to set, not a seed line's`},
		{`{"id":"a","epoch":0}`, `field "epoch" is coord's to set`},
		{`{"id":"a","status":"done"}`, `seed:2: field "status" is "done": a seeded task starts unclaimed`},
		{`{"id":"a","status":"blocked","blocked_reason":"x"}`, `field "status" is "blocked"`},
		{`{"id":"a","status":"claimed"}`, `field "status" is "claimed"`},
	} {
		_, err := ParseSeedLine("seed:2", []byte(c.in))
		if err == nil || coord.CodeOf(err) != coord.CodeUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant a usage error containing %s", c.in, err, c.want)
		}
	}
	for _, f := range coord.OwnedFields {
		in := fmt.Sprintf(`{"id":"a",%q:null}`, f)
		if _, err := ParseSeedLine("seed:2", []byte(in)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`field %q is coord's to set`, f)) {
			t.Errorf("%s: %v, want it refused as coord's", in, err)
		}
	}
}

// Every task field the registry knows is either a seed field or one coord
// owns: a field added to the registry without deciding which is caught
// here, before a seed line can set state.
func TestTaskFieldsAreSeedOrOwned(t *testing.T) {
	for _, f := range taskFieldOrder {
		seed := slices.Contains(coord.SeedFields, f)
		if seed == coord.IsOwnedField(f) {
			t.Errorf("task field %q: seed field %v, owned %v; it must be exactly one", f, seed, !seed)
		}
	}
}

func sameTasks(a, b []*coord.Task) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := *a[i], *b[i]
		x.Raw, y.Raw, x.Dirty, y.Dirty = nil, nil, false, false
		for _, t := range []*coord.Task{&x, &y} {
			if t.Priority == "" {
				t.Priority = coord.Medium // written out as the default it means
			}
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// FuzzParse: the registry parser never panics; what it accepts is strict
// JSON by the independent jsontext-based checker, and survives a write
// and re-read unchanged.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("testdata/rotd/active_work_registry.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"version":1,"last_epoch":3,"tasks":[{"id":"a","status":"claimed","claimed_by":"x","epoch":3,"files":["a/**"]}],"z":{}}`))
	f.Add([]byte(`{"tasks":[{"id":"a","x":"\u00e9\ud83d\ude00"}]}`))
	f.Add([]byte(`{"tasks":[{"id":"a","description":"d\n"},{"id":"b","description":{"x":1}}]}`))
	f.Add([]byte(`{"tasks":[],"path_locks":[{"path":"src/x","holder":"a","since":"2026-01-01T00:00:00Z","task_id":"t","expires":""}]}`))
	f.Add([]byte(`{"tasks":[{"id":"t","assigned_to":"a","assigned_at":"2026-01-01T00:00:00Z","review_started_at":null,"blocked_at":"2026-01-01T00:00:00Z"}],"agents":[{"id":"a","role":"reviewer","capabilities":["go"],"skill_level":">=entry","worktree":"/w","branch":"b","registered_at":"2026-01-01T00:00:00Z","x":[1]}]}`))
	f.Add([]byte(`{"tasks":[{"id":"t","status":"done","branch":"coord/a","base":"abcd","touched_files":["b","a"],"head":"beef","landed_commit":null,"landed_at":"2026-01-01T00:00:00Z","landing_at":"2026-01-01T00:00:00Z","conflicts":[{"with":"main","files":["a"],"since":"2026-01-01T00:00:00Z","told":true}]}]}`))
	f.Add([]byte(`{"tasks":[{"id":"t","status":"done","head":"beef","reviewed_commit":"beef","receipts":[{"tree":"abcd","cmd":"go test","exit":1,"seconds":0.5,"tail":"x\n","at":"2026-01-01T00:00:00Z","more":[1]}]}]}`))
	f.Add([]byte(`{"tasks":[{"id":"t","predicted_files":["b.go","a/x.md"],"predicted_at":"2026-01-01T00:00:00Z","y":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := Parse("fuzz", data)
		if err != nil {
			return
		}
		if err := CheckStrict("fuzz", data); err != nil && !bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
			t.Fatalf("Parse accepted what jsontext refuses (%v): %q", err, data)
		}
		for _, task := range reg.Tasks {
			task.Dirty = true // force the re-encoding path too
		}
		reg.locksRaw = nil // and for path locks
		for i := range reg.Agents {
			reg.Agents[i].Dirty = true // and for the pool
		}
		out := mustEncode(t, reg)
		again, err := Parse("re-encoded", out)
		if err != nil {
			t.Fatalf("encoding of accepted input is refused: %v\nin:  %q\nout: %q", err, data, out)
		}
		if !sameTasks(reg.Tasks, again.Tasks) || again.LastEpoch != reg.LastEpoch || !reflect.DeepEqual(reg.PathLocks, again.PathLocks) || !samePool(reg.Agents, again.Agents) {
			t.Fatalf("round trip changed the tasks\nin:  %q\nout: %q", data, out)
		}
	})
}

// FuzzScannerMatchesJSONText: the hand-written scanner accepts exactly the
// documents that jsontext (with our case-variant rule) accepts.
func FuzzScannerMatchesJSONText(f *testing.F) {
	for _, s := range []string{`{}`, `[1,-0.5e+3,"x",true,false,null]`, `{"a":{"A":1}}`, `"\ud800"`, `"\ud83d\ude00"`,
		`01`, `1.`, `-`, `{"a":1,"a":1}`, "\"\x7f\"", "\"\x1f\"", `[1,]`, ` 1 `, `{"k":1,"\u212a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &scanner{data: data, file: "fuzz"}
		ours := s.value()
		if ours == nil {
			ours = s.end()
		}
		theirs := CheckStrict("fuzz", data)
		if (ours == nil) != (theirs == nil) {
			t.Fatalf("scanner: %v\njsontext: %v\ninput: %q", ours, theirs, data)
		}
	})
}

// FuzzParseSeedLine: never panics; an accepted line is a valid task.
func FuzzParseSeedLine(f *testing.F) {
	f.Add([]byte(`{"id":"4.2","title":"t","priority":"high","deps":["4.1"],"conflict_group":"g"}`))
	f.Add([]byte(`{"id":"a","skill_level":"expert","files":["**/*.go"],"extra":{"n":[1]}}`))
	f.Add([]byte(`{"id":"a","description":"d","status":"unclaimed","capability":"go"}`))
	f.Add([]byte(`{"id":"a","epoch":9223372036854775807}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		task, err := ParseSeedLine("fuzz:1", line)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:1") {
				t.Fatalf("error does not name the line: %v", err)
			}
			return
		}
		if err := task.Check(); err != nil {
			t.Fatalf("accepted an invalid task: %v", err)
		}
		// Only a definition: no state coord owns, whatever the line said.
		for _, m := range Members(task.Raw) {
			if !slices.Contains(coord.SeedFields, m.Name) {
				t.Fatalf("accepted field %q: %q", m.Name, line)
			}
		}
		if task.Status != coord.Unclaimed || task.Epoch != 0 || task.ClaimedBy != "" || task.Progress != 0 {
			t.Fatalf("accepted state: %+v", task)
		}
	})
}

func TestTaskFieldIndex(t *testing.T) {
	for i, n := range taskFieldOrder {
		if taskFieldIndex(n) != i {
			t.Fatalf("taskFieldIndex(%q) = %d, want %d", n, taskFieldIndex(n), i)
		}
	}
	if taskFieldIndex("x") != -1 {
		t.Fatal("unknown name indexed")
	}
}

// Case clashes are found in large objects too (over 32 unknown names),
// and between known task fields and unknown names in either order.
func TestCaseClashLargeAndKnown(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tasks":[],"x":{`)
	for i := range 40 {
		fmt.Fprintf(&b, `"n%d":1,`, i)
	}
	b.WriteString(`"status":1,"Status":2}}`)
	if _, err := Parse("r", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "differ only in case") {
		t.Fatalf("large object: %v", err)
	}
	for _, in := range []string{
		`{"tasks":[{"id":"a","x-Y":1,"X-y":2}]}`,
		`{"tasks":[{"id":"a","ſtatus":1,"status":"done"}]}`,
		`{"tasks":[{"id":"a","status":"done","ſtatus":1}]}`,
	} {
		if _, err := Parse("r", []byte(in)); err == nil {
			t.Errorf("accepted %s", in)
		}
	}
}

// Numbers up to 2^63-1 are exact (no float rounding past 2^53).
func TestEpochPast2to53(t *testing.T) {
	f, err := Parse("r", []byte(`{"last_epoch":9007199254740993,"tasks":[{"id":"a","status":"claimed","claimed_by":"x","epoch":9007199254740993}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Tasks[0].Epoch != 9007199254740993 || f.LastEpoch != 9007199254740993 {
		t.Fatalf("epoch read as %d / %d", f.Tasks[0].Epoch, f.LastEpoch)
	}
}

// FuzzParseLockInfo: the lock-file parser never panics and accepts only
// strict JSON.
func FuzzParseLockInfo(f *testing.F) {
	f.Add([]byte(`{"holder":"a","since":"2026-01-01T00:00:00Z","task_id":"4.2","epoch":17,"pid":1,"host":"h"}`))
	f.Add([]byte(`{"holder":"a","holder":"b"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseLockInfo("lock", data); err == nil {
			if err := CheckStrict("lock", data); err != nil {
				t.Fatalf("accepted non-strict JSON: %q", data)
			}
		} else if !strings.HasPrefix(err.Error(), "lock") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// TestReviewNotesLegacyName: a registry written when the review notes were
// called "reject_reason" reads as it did (the value becomes review_notes;
// "review_notes" wins when a task has both), stays byte for byte while
// the task is unchanged, and a changed task is written with the new name
// in the old one's place, once.
func TestReviewNotesLegacyName(t *testing.T) {
	in := `{"version":1,"tasks":[` + "\n" +
		`{"id":"old","status":"claimed","claimed_by":"a","epoch":1,"reject_reason":"add tests","x":1},` + "\n" +
		`{"id":"both","reject_reason":"stale","review_notes":"fresh"},` + "\n" +
		`{"id":"both2","review_notes":"fresh","reject_reason":"stale"},` + "\n" +
		`{"id":"new","review_notes":"n","rejections":2,"review_alert_at":"2026-11-22T10:00:00Z"}` + "\n" +
		`]}`
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ id, notes string }{{"old", "add tests"}, {"both", "fresh"}, {"both2", "fresh"}, {"new", "n"}} {
		if got := f.Tasks[f.Index()[w.id]].ReviewNotes; got != w.notes {
			t.Errorf("%s: review notes %q, want %q", w.id, got, w.notes)
		}
	}
	if nt := f.Tasks[3]; nt.Rejections != 2 || nt.ReviewAlertAt != "2026-11-22T10:00:00Z" {
		t.Errorf("new fields: %+v", nt)
	}
	if out := string(mustEncode(t, f)); out != `{"version":1,"last_epoch":0,"tasks":[`+strings.TrimPrefix(in, `{"version":1,"tasks":[`)+"\n" {
		t.Fatalf("unchanged tasks rewritten:\n%s", out)
	}
	for _, task := range f.Tasks[:3] {
		task.Dirty = true
	}
	f.Tasks[0].ReviewNotes = "add more tests"
	out := string(mustEncode(t, f))
	for _, want := range []string{
		`{"id":"old","status":"claimed","claimed_by":"a","epoch":1,"review_notes":"add more tests","x":1,`,
		`{"id":"both","review_notes":"fresh",`,
		`{"id":"both2","review_notes":"fresh",`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("encoding lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "reject_reason") {
		t.Errorf("the old name was written back:\n%s", out)
	}
	g, err := Parse("again", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if !sameTasks(f.Tasks, g.Tasks) {
		t.Fatal("tasks changed across a write")
	}
	// the old name is a known field: a case twin or a duplicate is refused
	for _, bad := range []string{`{"tasks":[{"id":"a","Reject_reason":"x","reject_reason":"y"}]}`, `{"tasks":[{"id":"a","reject_reason":"x","reject_reason":"y"}]}`,
		`{"tasks":[{"id":"a","rejections":-1}]}`, `{"tasks":[{"id":"a","rejections":"2"}]}`} {
		if _, err := Parse("r", []byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func mustEncode(t testing.TB, f *Registry) []byte {
	t.Helper()
	out, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEncodeReadsBack: the encoder writes only what Parse reads back. A
// change no operation should make (a task field out of range, an id
// twice, a path lock or agent record that does not check) is an
// *EncodeError, and the document is left unfinished, so no caller can
// take it for a registry.
func TestEncodeReadsBack(t *testing.T) {
	in := `{"version":1,"tasks":[
{"id":"a","status":"unclaimed"},
{"id":"b","status":"unclaimed"}
]}`
	cases := []struct {
		name   string
		change func(f *Registry)
	}{
		{"progress out of range", func(f *Registry) { f.Tasks[0].Progress, f.Tasks[0].Dirty = 150, true }},
		{"bad status", func(f *Registry) { f.Tasks[1].Status, f.Tasks[1].Dirty = "finished", true }},
		{"an id twice", func(f *Registry) {
			f.Tasks = append(f.Tasks, &coord.Task{ID: "a", Status: coord.Unclaimed, Dirty: true})
			f.index["a"] = 2 // as coord.Txn.Add leaves it
		}},
		{"an id twice, index stale", func(f *Registry) {
			f.Tasks = append(f.Tasks[:0:0], f.Tasks[1], &coord.Task{ID: "b", Status: coord.Unclaimed, Dirty: true})
		}},
		{"a bad path lock", func(f *Registry) { f.PathLocks = []coord.PathLock{{Path: "../x", Holder: "a"}} }},
		{"a path locked twice", func(f *Registry) {
			f.PathLocks = []coord.PathLock{{Path: "x", Holder: "a"}, {Path: "x", Holder: "b"}}
		}},
		{"a bad agent", func(f *Registry) { f.Agents = []coord.PoolAgent{{ID: "no good", Role: coord.Implementer}} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse("r", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			c.change(f)
			var buf bytes.Buffer
			err = f.EncodeTo(&buf)
			var ee *EncodeError
			if !errors.As(err, &ee) {
				t.Fatalf("encoded (%v):\n%s", err, buf.String())
			}
			if _, perr := Parse("r", buf.Bytes()); perr == nil {
				t.Fatalf("the refused encoding parses:\n%s", buf.String())
			}
			if _, err := f.Encode(); !errors.As(err, &ee) {
				t.Fatalf("Encode: %v", err)
			}
		})
	}
	// What reads back is written: a new task, a new lock, a new agent.
	f, _ := Parse("r", []byte(in))
	f.Tasks = append(f.Tasks, &coord.Task{ID: "c", Status: coord.Claimed, ClaimedBy: "x", Epoch: 1, Dirty: true})
	f.index["c"] = 2
	f.PathLocks = []coord.PathLock{{Path: "src/x.go", Holder: "x", Since: "2026-01-01T00:00:00Z"}}
	f.Agents = []coord.PoolAgent{{ID: "x", Role: coord.Implementer}}
	out := mustEncode(t, f)
	if g, err := Parse("r", out); err != nil || len(g.Tasks) != 3 || len(g.PathLocks) != 1 || len(g.Agents) != 1 {
		t.Fatalf("read back: %v\n%s", err, out)
	}
}

// The fields of where a task's work lives (docs/GIT.md) read and write
// back; touched_files is kept sorted, each path once, however a hand
// wrote it; a registry without them reads as before.
func TestWorkFields(t *testing.T) {
	in := `{"version":1,"tasks":[
{"id":"a","status":"done","claimed_by":"x","epoch":1,"branch":"coord/x","base":"abcd1234","touched_files":["z.txt","go.mod","z.txt"],"head":"beef0123","landed_commit":null,"landed_at":null,"conflicts":[{"with":"main","files":["go.mod"],"since":"2026-01-01T00:00:00Z","told":true,"later":1},{"with":"b","files":[]}]},
{"id":"b","status":"unclaimed"}
]}`
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	a := f.Tasks[0]
	want := coord.Task{ID: "a", Status: coord.Done, ClaimedBy: "x", Epoch: 1, Branch: "coord/x", Base: "abcd1234",
		TouchedFiles: []string{"go.mod", "z.txt"}, Head: "beef0123",
		Conflicts: []coord.Conflict{{With: "main", Files: []string{"go.mod"}, Since: "2026-01-01T00:00:00Z", Told: true}, {With: "b", Files: nil}}}
	got := *a
	got.Raw = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v\nwant %+v", got, want)
	}
	b := f.Tasks[1]
	b.Branch, b.Base, b.TouchedFiles, b.Head, b.Dirty = "main", "0123abcd", []string{"README.md"}, "", true
	b.LandedCommit, b.LandedAt = "0123abcd", "2026-01-02T00:00:00Z"
	a.LandingAt = "2026-01-02T00:00:01Z"
	b.Conflicts = []coord.Conflict{{With: "a", Files: []string{"README.md"}, Since: "2026-01-02T00:00:00Z"}}
	a.Dirty = true
	out := mustEncode(t, f)
	if !strings.Contains(string(out), `"touched_files":["go.mod","z.txt"]`) ||
		!strings.Contains(string(out), `"conflicts":[{"with":"a","files":["README.md"],"since":"2026-01-02T00:00:00Z"}]`) ||
		!strings.Contains(string(out), `"landing_at":"2026-01-02T00:00:01Z"`) {
		t.Fatalf("encoded:\n%s", out)
	}
	again, err := Parse("again", out)
	if err != nil || !sameTasks(f.Tasks, again.Tasks) {
		t.Fatalf("round trip: %v\n%s", err, out)
	}
	for _, bad := range []string{
		`{"tasks":[{"id":"a","touched_files":["../x"]}]}`,
		`{"tasks":[{"id":"a","touched_files":"x"}]}`,
		`{"tasks":[{"id":"a","base":"HEAD"}]}`,
		`{"tasks":[{"id":"a","branch":"a..b"}]}`,
		`{"tasks":[{"id":"a","conflicts":{}}]}`,
		`{"tasks":[{"id":"a","conflicts":[{"files":["x"]}]}]}`,
		`{"tasks":[{"id":"a","conflicts":[{"with":"main","told":"yes"}]}]}`,
		`{"tasks":[{"id":"a","conflicts":[{"with":"main","With":"b"}]}]}`,
		`{"tasks":[{"id":"a","landing_at":"soon"}]}`,
		`{"tasks":[{"id":"a","landing_at":1}]}`,
	} {
		if _, err := Parse("r", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "r: ") {
			t.Errorf("%s: %v, want an error naming the file", bad, err)
		}
	}
}

// Receipts and the reviewed commit (docs/GIT.md) read and write back,
// unknown task fields kept beside them; a bad receipt is refused naming
// the file.
func TestReceiptFields(t *testing.T) {
	in := `{"version":1,"tasks":[
{"id":"a","status":"done","claimed_by":"x","epoch":1,"head":"beef0123","reviewer_id":"r","reviewed_commit":"beef0123","x-later":{"k":[1]},
 "receipts":[{"tree":"0123abcd","cmd":"go test ./...","exit":1,"seconds":2.5,"tail":"FAIL\n","at":"2026-01-01T00:00:00Z","later":true},
             {"tree":"0123abce","cmd":"go test ./...","exit":0,"seconds":0,"tail":"","at":"2026-01-01T00:01:00Z"}]},
{"id":"b","status":"claimed","claimed_by":"y","epoch":2}
]}`
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	a := f.Tasks[0]
	want := []coord.Receipt{
		{Tree: "0123abcd", Cmd: "go test ./...", Exit: 1, Seconds: 2.5, Tail: "FAIL\n", At: "2026-01-01T00:00:00Z"},
		{Tree: "0123abce", Cmd: "go test ./...", Exit: 0, Seconds: 0, Tail: "", At: "2026-01-01T00:01:00Z"},
	}
	if !reflect.DeepEqual(a.Receipts, want) || a.ReviewedCommit != "beef0123" {
		t.Fatalf("read %+v, %q", a.Receipts, a.ReviewedCommit)
	}
	b := f.Tasks[1]
	b.Receipts = []coord.Receipt{coord.NewReceipt("fedcba98", "make check", 2, 1.23456, "é\n", "2026-01-02T00:00:00Z")}
	b.Dirty, a.Dirty = true, true
	out := mustEncode(t, f)
	for _, s := range []string{`"x-later":{"k":[1]}`, `"reviewed_commit":"beef0123"`,
		`"receipts":[{"tree":"fedcba98","cmd":"make check","exit":2,"seconds":1.235,"tail":"é\n","at":"2026-01-02T00:00:00Z"}]`} {
		if !strings.Contains(string(out), s) {
			t.Fatalf("encoded lacks %s:\n%s", s, out)
		}
	}
	again, err := Parse("again", out)
	if err != nil || !sameTasks(f.Tasks, again.Tasks) {
		t.Fatalf("round trip: %v\n%s", err, out)
	}
	for _, bad := range []string{
		`{"tasks":[{"id":"a","receipts":{}}]}`,
		`{"tasks":[{"id":"a","receipts":[{"tree":"HEAD","cmd":"x","exit":0,"seconds":1,"tail":"","at":"2026-01-01T00:00:00Z"}]}]}`,
		`{"tasks":[{"id":"a","receipts":[{"tree":"abcd","cmd":"","exit":0,"seconds":1,"tail":"","at":"2026-01-01T00:00:00Z"}]}]}`,
		`{"tasks":[{"id":"a","receipts":[{"tree":"abcd","cmd":"x","exit":256,"seconds":1,"tail":"","at":"2026-01-01T00:00:00Z"}]}]}`,
		`{"tasks":[{"id":"a","receipts":[{"tree":"abcd","cmd":"x","exit":0,"seconds":-1,"tail":"","at":"2026-01-01T00:00:00Z"}]}]}`,
		`{"tasks":[{"id":"a","receipts":[{"tree":"abcd","cmd":"x","exit":0,"seconds":"1","tail":"","at":"2026-01-01T00:00:00Z"}]}]}`,
		`{"tasks":[{"id":"a","receipts":[{"tree":"abcd","cmd":"x","exit":0,"seconds":1,"tail":"","at":"yesterday"}]}]}`,
		`{"tasks":[{"id":"a","receipts":[{"tree":"abcd","Tree":"abcd"}]}]}`,
		`{"tasks":[{"id":"a","reviewed_commit":"HEAD"}]}`,
	} {
		if _, err := Parse("r", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "r: ") {
			t.Errorf("%s: %v, want an error naming the file", bad, err)
		}
	}
}

// predicted_files and predicted_at (docs/PLANNING.md) read and write back in
// their order (best first, not sorted), next to a field coord does not
// know; bad ones are refused naming the file.
func TestPredictedFields(t *testing.T) {
	in := `{"version":1,"tasks":[{"id":"a","status":"unclaimed","predicted_files":["z.go","a.go"],"predicted_at":"2026-01-01T00:00:00Z","later_field":{"k":[1]}}]}`
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	a := f.Tasks[0]
	if !slices.Equal(a.PredictedFiles, []string{"z.go", "a.go"}) || a.PredictedAt != "2026-01-01T00:00:00Z" {
		t.Fatalf("read %+v", a)
	}
	a.PredictedFiles, a.Dirty = []string{"b.go"}, true
	out := mustEncode(t, f)
	if !strings.Contains(string(out), `"predicted_files":["b.go"],"predicted_at":"2026-01-01T00:00:00Z"`) || !strings.Contains(string(out), `"later_field":{"k":[1]}`) {
		t.Fatalf("encoded:\n%s", out)
	}
	for _, bad := range []string{
		`{"tasks":[{"id":"a","predicted_files":["/x"]}]}`,
		`{"tasks":[{"id":"a","predicted_files":"x"}]}`,
		`{"tasks":[{"id":"a","predicted_at":"soon"}]}`,
		`{"tasks":[{"id":"a","Predicted_files":["x"]}]}`,
	} {
		if _, err := Parse("r", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "r: ") {
			t.Errorf("%s: %v, want an error naming the file", bad, err)
		}
	}
}
