package coord

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// inFlight makes a transaction with tasks 1..4: 1 and 2 claimed (alice,
// bob), 3 done with a head not landed (carol), 4 unclaimed.
func inFlight() *Txn {
	tx := &Txn{Now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	tx.Add(&Task{ID: "1", Status: Claimed, ClaimedBy: "alice", Branch: "coord/alice"})
	tx.Add(&Task{ID: "2", Status: Claimed, ClaimedBy: "bob", Branch: "coord/bob"})
	tx.Add(&Task{ID: "3", Status: Done, ClaimedBy: "carol", Branch: "coord/carol", Head: "abcd1234"})
	tx.Add(&Task{ID: "4", Status: Unclaimed})
	return tx
}

func judgeAll(tx *Txn, ids ...string) map[string]string {
	m := map[string]string{}
	for _, id := range ids {
		m[id] = WorkKey(tx.Task(id))
	}
	return m
}

func TestRecordConflicts(t *testing.T) {
	t.Run("NewPairsOnBothSidesLoggedOnce", func(t *testing.T) {
		tx := inFlight()
		found := []ConflictPair{
			{Task: "1", With: "main", Files: []string{"z.txt"}},
			{Task: "2", With: "1", Files: []string{"b", "a", "a"}},
			{Task: "1", With: "2", Files: []string{"a", "b"}}, // the same pair, other way round
		}
		fresh := tx.RecordConflicts(judgeAll(tx, "1", "2", "3"), found, "main", CoordinatorID)
		if len(fresh) != 2 {
			t.Fatalf("new pairs %+v", fresh)
		}
		want1 := []Conflict{{With: "2", Files: []string{"a", "b"}, Since: "2030-01-01T12:00:00Z"}, {With: "main", Files: []string{"z.txt"}, Since: "2030-01-01T12:00:00Z"}}
		if got := tx.Task("1").Conflicts; !reflect.DeepEqual(got, want1) {
			t.Errorf("task 1: %+v", got)
		}
		if got := tx.Task("2").Conflicts; len(got) != 1 || got[0].With != "1" || !tx.Task("2").Dirty {
			t.Errorf("task 2: %+v", got)
		}
		if len(tx.Task("3").Conflicts) != 0 || tx.Task("3").Dirty {
			t.Errorf("task 3 changed: %+v", tx.Task("3").Conflicts)
		}
		if len(tx.Events) != 2 {
			t.Fatalf("events %+v", tx.Events)
		}
		if got := tx.Events[0].Text; got != "conflict: task 1 (alice) and main (the target branch) change z.txt" {
			t.Errorf("log line %q", got)
		}
		if got := tx.Events[1].Text; got != "conflict: task 2 (bob) and task 1 (alice) change a and b" {
			t.Errorf("log line %q", got)
		}
		// Found again an hour later, once told: nothing new, Since and
		// Told kept, nothing dirty.
		tx.Task("1").Conflicts[0].Told = true
		for _, x := range tx.Tasks {
			x.Dirty = false
		}
		tx.Events = nil
		tx.Now = tx.Now.Add(time.Hour)
		if fresh := tx.RecordConflicts(judgeAll(tx, "1", "2", "3"), found, "main", CoordinatorID); len(fresh) != 0 || len(tx.Events) != 0 {
			t.Errorf("found again: new %+v, events %+v", fresh, tx.Events)
		}
		if got := tx.Task("1").Conflicts; got[0].Since != "2030-01-01T12:00:00Z" || !got[0].Told || tx.Task("1").Dirty {
			t.Errorf("found again: %+v", got)
		}
		// The files change: the pair is the same (not new, still told).
		found[1].Files = []string{"c"}
		found = found[:2]
		tx.RecordConflicts(judgeAll(tx, "1", "2", "3"), found, "main", CoordinatorID)
		if got := tx.Task("1").Conflicts[0]; !got.Told || !reflect.DeepEqual(got.Files, []string{"c"}) || len(tx.Events) != 0 {
			t.Errorf("other files: %+v, events %+v", got, tx.Events)
		}
		// Resolved: a scan that finds nothing drops both.
		tx.RecordConflicts(judgeAll(tx, "1", "2", "3"), nil, "main", CoordinatorID)
		if len(tx.Task("1").Conflicts) != 0 || len(tx.Task("2").Conflicts) != 0 {
			t.Errorf("resolved: %+v, %+v", tx.Task("1").Conflicts, tx.Task("2").Conflicts)
		}
	})
	t.Run("UnjudgedKept", func(t *testing.T) {
		// A caller whose repository lacks task 3's work judges 1 and 2
		// only: 1's conflict with 3 (found by another caller) stays.
		tx := inFlight()
		tx.Task("1").Conflicts = []Conflict{{With: "3", Files: []string{"x"}, Since: "2029-12-31T00:00:00Z", Told: true}, {With: "2", Files: []string{"y"}}}
		tx.Task("3").Conflicts = []Conflict{{With: "1", Files: []string{"x"}}, {With: "main", Files: []string{"w"}}}
		tx.RecordConflicts(judgeAll(tx, "1", "2"), nil, "main", CoordinatorID)
		if got := tx.Task("1").Conflicts; len(got) != 1 || got[0].With != "3" || !got[0].Told {
			t.Errorf("task 1: %+v", got)
		}
		if got := tx.Task("3").Conflicts; len(got) != 2 {
			t.Errorf("task 3 (not judged): %+v", got)
		}
	})
	t.Run("RacedTaskNotRecorded", func(t *testing.T) {
		// Task 2 was released between the merge and the record: its
		// work is another commit now; nothing is recorded for it.
		tx := inFlight()
		judged := judgeAll(tx, "1", "2")
		tx.Task("2").Status, tx.Task("2").Head = Done, "ffff0000"
		fresh := tx.RecordConflicts(judged, []ConflictPair{{Task: "2", With: "main", Files: []string{"f"}}, {Task: "1", With: "2", Files: []string{"f"}}}, "main", CoordinatorID)
		if len(fresh) != 0 || len(tx.Task("2").Conflicts) != 0 || len(tx.Task("1").Conflicts) != 0 {
			t.Errorf("raced: %+v, %+v, %+v", fresh, tx.Task("1").Conflicts, tx.Task("2").Conflicts)
		}
	})
	t.Run("NotInFlightCleared", func(t *testing.T) {
		tx := inFlight()
		tx.Task("4").Conflicts = []Conflict{{With: "main", Files: []string{"f"}}}
		tx.Task("1").Conflicts = []Conflict{{With: "4", Files: []string{"f"}}}
		tx.RecordConflicts(map[string]string{}, nil, "main", CoordinatorID)
		if len(tx.Task("4").Conflicts) != 0 || !tx.Task("4").Dirty {
			t.Errorf("a task not in flight kept %+v", tx.Task("4").Conflicts)
		}
		if len(tx.Task("1").Conflicts) != 0 {
			t.Errorf("a conflict with a task not in flight kept: %+v", tx.Task("1").Conflicts)
		}
	})
}

func TestTxnConflicts(t *testing.T) {
	tx := inFlight()
	tx.RecordConflicts(judgeAll(tx, "1", "2", "3"), []ConflictPair{
		{Task: "3", With: "1", Files: []string{"x"}},
		{Task: "2", With: "main", Files: []string{"y"}},
	}, "main", CoordinatorID)
	want := []ConflictPair{{Task: "1", With: "3", Files: []string{"x"}}, {Task: "2", With: "main", Files: []string{"y"}}}
	if got := tx.Conflicts(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestTell(t *testing.T) {
	tx := inFlight()
	tx.RecordConflicts(judgeAll(tx, "1", "2", "3"), []ConflictPair{
		{Task: "1", With: "2", Files: []string{"z.txt"}},
		{Task: "3", With: "main", Files: []string{"a", "b", "c", "d"}},
	}, "main", CoordinatorID)
	if got := tx.Untold("alice"); len(got) != 1 || got[0].String() != "coord: your change to z.txt (task 1) now conflicts with task 2 (bob); coordinate or rebase" {
		t.Errorf("alice: %+v", got)
	}
	got := tx.Tell("carol")
	if len(got) != 1 || got[0].String() != "coord: your change to a, b, c and 1 more files (task 3) now conflicts with main; merge main into your branch (or rebase on it) and resolve" {
		t.Errorf("carol: %+v", got)
	}
	if !tx.Task("3").Conflicts[0].Told || tx.Task("1").Conflicts[0].Told {
		t.Errorf("told marks: %+v %+v", tx.Task("3").Conflicts, tx.Task("1").Conflicts)
	}
	if again := tx.Tell("carol"); len(again) != 0 {
		t.Errorf("told twice: %+v", again)
	}
	if got := tx.Tell("dave"); got != nil {
		t.Errorf("dave: %+v", got)
	}
}

func TestFilesPhrase(t *testing.T) {
	for _, c := range []struct {
		files []string
		want  string
	}{
		{nil, "no file"},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a and b"},
		{[]string{"a", "b", "c"}, "a, b and c"},
		{strings.Split("a b c d e f", " "), "a, b, c and 3 more files"},
		// a file name is text from the repository: no escape sequence,
		// newline or bidi override reaches a terminal through it
		{[]string{"e\x1b[31mvil.go", "two\nlines.go"}, "e [31mvil.go and two lines.go"},
		{[]string{"a", "b", "c", "\u202ed.go"}, "a, b, c and 1 more files"},
		{[]string{"x", "\u202ey\u0085.go"}, "x and y .go"},
	} {
		if got := FilesPhrase(c.files, 3); got != c.want {
			t.Errorf("%q: %q, want %q", c.files, got, c.want)
		}
	}
}
