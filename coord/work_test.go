package coord

import (
	"slices"
	"testing"
	"time"
)

func TestInFlight(t *testing.T) {
	cases := []struct {
		name string
		task Task
		want bool
	}{
		{"unclaimed", Task{Status: Unclaimed}, false},
		{"claimed", Task{Status: Claimed, ClaimedBy: "a"}, true},
		{"blocked with owner", Task{Status: Blocked, ClaimedBy: "a"}, true},
		{"blocked, owner swept", Task{Status: Blocked}, false},
		{"review", Task{Status: Review, ClaimedBy: "a"}, true},
		{"done without head", Task{Status: Done, ClaimedBy: "a"}, false},
		{"done with head", Task{Status: Done, ClaimedBy: "a", Head: "abcd"}, true},
		{"done and landed", Task{Status: Done, ClaimedBy: "a", Head: "abcd", LandedAt: "2026-01-01T00:00:00Z"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.task.TouchedFiles = []string{"go.mod"}
			if got := c.task.InFlight(); got != c.want {
				t.Fatalf("InFlight = %v, want %v", got, c.want)
			}
			if got := len(c.task.WriteClaims()) > 0; got != c.want {
				t.Fatalf("WriteClaims = %v, want claims %v", c.task.WriteClaims(), c.want)
			}
		})
	}
}

func TestTouch(t *testing.T) {
	task := &Task{}
	if !task.Touch([]string{"b", "a"}) || !task.Dirty {
		t.Fatal("new paths not added")
	}
	task.Dirty = false
	if task.Touch([]string{"a", "b"}) || task.Dirty {
		t.Fatal("known paths counted as new")
	}
	task.Touch([]string{"c", "a/x"})
	if want := []string{"a", "a/x", "b", "c"}; !slices.Equal(task.TouchedFiles, want) {
		t.Fatalf("touched %v, want %v", task.TouchedFiles, want)
	}
}

func TestValidBranch(t *testing.T) {
	for _, ok := range []string{"main", "coord/alice", "feature/x-1", "release-1.2", "a@b"} {
		if err := ValidBranch(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "@", "-x", "a/", "a.", "a..b", "a@{1}", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`,
		"a//b", ".a", "a/.b", "a.lock", "a/b.lock/c", "a\x01", string(make([]byte, 256))} {
		if err := ValidBranch(bad); err == nil || CodeOf(err) != CodeUsage {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

func TestValidCommit(t *testing.T) {
	for s, want := range map[string]bool{"abcd": true, "0123456789abcdef0123456789abcdef01234567": true,
		"abc": false, "ABCD": false, "abcg": false, "": false, string(make([]byte, 65)): false} {
		if ValidCommit(s) != want {
			t.Errorf("ValidCommit(%q) = %v", s, !want)
		}
	}
}

func TestCheckWork(t *testing.T) {
	base := Task{ID: "t", Status: Claimed, ClaimedBy: "a"}
	good := base
	good.Branch, good.Base, good.Head = "coord/a", "abcd1234", "beef"
	good.TouchedFiles = []string{"go.mod", "src/x.go"}
	good.Conflicts = []Conflict{{With: "main", Files: []string{"go.mod"}}}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Task){
		"bad branch":        func(t *Task) { t.Branch = "a..b" },
		"bad base":          func(t *Task) { t.Base = "main" },
		"bad head":          func(t *Task) { t.Head = "xyz1" },
		"bad landed commit": func(t *Task) { t.LandedCommit = "HEAD" },
		"unclean touched":   func(t *Task) { t.TouchedFiles = []string{"a/../b"} },
		"absolute touched":  func(t *Task) { t.TouchedFiles = []string{"/etc/passwd"} },
		"conflict no with":  func(t *Task) { t.Conflicts = []Conflict{{Files: []string{"x"}}} },
		"conflict bad file": func(t *Task) { t.Conflicts = []Conflict{{With: "main", Files: []string{""}}} },
	} {
		bad := base
		change(&bad)
		if err := bad.Check(); err == nil || CodeOf(err) != CodeUsage {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}

// A task handed back or swept keeps nothing that claims a path; a new
// claim goes on from the branch and base the work lives on.
func TestClaimsFreedWithTheOwner(t *testing.T) {
	tx := &Txn{Now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	task := &Task{ID: "t", Status: Unclaimed}
	tx.Add(task)
	got, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "t"})
	if err != nil || got != task {
		t.Fatal(got, err)
	}
	task.Branch, task.Base, task.Head = "coord/a", "abcd", "beef"
	task.TouchedFiles = []string{"go.mod"}
	task.Conflicts = []Conflict{{With: "main", Files: []string{"go.mod"}}}
	if _, err := tx.HandBack("a", "t", task.Epoch, "session ended", Requeue); err != nil {
		t.Fatal(err)
	}
	if task.InFlight() || task.TouchedFiles != nil || task.Head != "" || task.Conflicts != nil || task.Branch != "coord/a" {
		t.Fatalf("after hand-back: %+v", task)
	}
	task.TouchedFiles, task.LandedAt = []string{"x"}, "2026-01-01T00:00:00Z"
	if _, err := tx.Claim(Agent{ID: "b"}, ClaimOptions{TaskID: "t"}); err != nil {
		t.Fatal(err)
	}
	if task.TouchedFiles != nil || task.Branch != "coord/a" || task.Base != "abcd" || task.LandedAt != "" {
		t.Fatalf("after a new claim: %+v", task)
	}
}
