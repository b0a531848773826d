package format

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
)

// A registry without "path_locks" (an older coord's) is written back
// without one until a path lock is taken; then the member follows
// "tasks", and stays (empty) once the last lock goes.
func TestPathLocksWrittenOnlyWhenNeeded(t *testing.T) {
	in := `{"version":1,"last_epoch":0,"tasks":[` + "\n" + `{"id":"a"}` + "\n" + `],"x":1}` + "\n"
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if f.HasPathLocks() || len(f.PathLocks) != 0 {
		t.Fatalf("no member, yet HasPathLocks %v, %v", f.HasPathLocks(), f.PathLocks)
	}
	if out := string(mustEncode(t, f)); out != in {
		t.Fatalf("unchanged registry rewritten:\n%s\nwant\n%s", out, in)
	}
	f.PathLocks = []coord.PathLock{{Path: "src/x", Holder: "a", Since: "2026-11-22T10:00:00Z", TaskID: "a"}}
	out := string(mustEncode(t, f))
	want := `"tasks":[` + "\n" + `{"id":"a"}` + "\n" + `],"path_locks":[` + "\n" +
		`{"path":"src/x","holder":"a","since":"2026-11-22T10:00:00Z","task_id":"a"}` + "\n" + `],"x":1}`
	if !strings.Contains(out, want) {
		t.Fatalf("path lock not written after tasks:\n%s", out)
	}
	g, err := Parse("again", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if !g.HasPathLocks() || !reflect.DeepEqual(g.PathLocks, f.PathLocks) {
		t.Fatalf("read back %v (member %v)", g.PathLocks, g.HasPathLocks())
	}
	g.PathLocks = nil
	if out := string(mustEncode(t, g)); !strings.Contains(out, `],"path_locks":[],"x":1}`) {
		t.Fatalf("an emptied member was dropped:\n%s", out)
	}
}

// Path locks keep their place and, while unchanged, their bytes (unknown
// members included); a changed one is re-encoded.
func TestPathLocksKeptInPlace(t *testing.T) {
	in := `{"path_locks":[` + "\n" +
		`{"holder":"a","path":"src/x","since":"2026-11-22T10:00:00Z","x-note":[1]},` + "\n" +
		`{"path":"docs/*.md","holder":"b","since":"2026-11-22T10:00:00Z","expires":"2026-11-22T11:00:00Z"}` + "\n" +
		`],"version":1,"last_epoch":0,"tasks":[]}` + "\n"
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.PathLocks) != 2 || f.PathLocks[1].Expires != "2026-11-22T11:00:00Z" || f.PathLocks[0].Holder != "a" {
		t.Fatalf("decoded %+v", f.PathLocks)
	}
	if out := string(mustEncode(t, f)); out != in {
		t.Fatalf("unchanged path locks rewritten:\n%s\nwant\n%s", out, in)
	}
	f.PathLocks[1].Holder = "c"
	out := string(mustEncode(t, f))
	if !strings.HasPrefix(out, `{"path_locks":[`+"\n"+`{"holder":"a","path":"src/x","since":"2026-11-22T10:00:00Z","x-note":[1]},`+"\n"+`{"path":"docs/*.md","holder":"c",`) {
		t.Fatalf("changed lock:\n%s", out)
	}
}

func TestParsePathLocksRefuses(t *testing.T) {
	lock := func(s string) string { return `{"tasks":[],"path_locks":[` + s + `]}` }
	cases := []struct{ name, in, want string }{
		{"not an array", `{"tasks":[],"path_locks":{}}`, `"path_locks" must be an array`},
		{"not an object", lock(`"src/x"`), "path lock 1 must be an object"},
		{"no path", lock(`{"holder":"a","since":"x"}`), "clean repository path"},
		{"path leaves the repository", lock(`{"path":"../x","holder":"a"}`), "clean repository path"},
		{"path not clean", lock(`{"path":"src//x/","holder":"a"}`), "clean repository path"},
		{"bad holder", lock(`{"path":"src/x","holder":"a.b"}`), "holder"},
		{"bad task", lock(`{"path":"src/x","holder":"a","task_id":"../t"}`), "task_id"},
		{"path twice", lock(`{"path":"src/x","holder":"a"},{"path":"src/x","holder":"b"}`), "locked twice"},
		{"case twin", lock(`{"path":"src/x","holder":"a","Holder":"b"}`), "differ only in case"},
		{"case-variant field", lock(`{"Path":"src/x","holder":"a"}`), "names are case-sensitive"},
		{"case-variant member", `{"tasks":[],"Path_locks":[]}`, "names are case-sensitive"},
		{"path a number", lock(`{"path":1,"holder":"a"}`), "must be a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("reg.json", []byte(c.in))
			if err == nil || !strings.HasPrefix(err.Error(), "reg.json: ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse(%s) = %v, want an error naming reg.json and %q", c.in, err, c.want)
			}
		})
	}
	if f, err := Parse("r", []byte(`{"tasks":[],"path_locks":null}`)); err != nil || !f.HasPathLocks() || len(f.PathLocks) != 0 {
		t.Fatalf("null path_locks: %v, %v", f, err)
	}
}

func TestPathLockFile(t *testing.T) {
	l := coord.PathLock{Path: "src/editor", Holder: "a", Since: "2026-11-22T10:00:00Z", TaskID: "4.2", Expires: "2026-11-22T11:00:00Z"}
	got, err := ParsePathLock("f", EncodePathLock(l))
	if err != nil || got != l {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{`{"path":`, `{"path":"a","path":"b","holder":"x"}`, `{"path":"/abs","holder":"x"}`, `[]`} {
		if _, err := ParsePathLock("file_locks/x.lock", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "file_locks/x.lock: ") {
			t.Errorf("%s: %v, want an error naming the file", bad, err)
		}
	}
}
