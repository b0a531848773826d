package app_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/check"
)

// trainLander is a fakeLander safe for a train's checks running at
// once: its check fails on a commit that holds a broken head (as a test
// suite fails on any tree holding the broken work), takes a random
// moment, and records the commits it passed.
type trainLander struct {
	mu     sync.Mutex
	f      *fakeLander
	broken map[string]bool
	passed map[string]bool
	checks int
	rng    *rand.Rand
}

func (l *trainLander) lock() func() { l.mu.Lock(); return l.mu.Unlock }

func (l *trainLander) Head(ctx context.Context, ref string) (string, error) {
	defer l.lock()()
	return l.f.Head(ctx, ref)
}
func (l *trainLander) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	defer l.lock()()
	return l.f.IsAncestor(ctx, a, b)
}
func (l *trainLander) OnFirstParents(ctx context.Context, tip, head string) (bool, error) {
	defer l.lock()()
	return l.f.OnFirstParents(ctx, tip, head)
}
func (l *trainLander) Contains(ctx context.Context, into, commit string) (bool, error) {
	defer l.lock()()
	return l.f.Contains(ctx, into, commit)
}
func (l *trainLander) Merge(ctx context.Context, target, head string) (app.LandMerge, error) {
	defer l.lock()()
	return l.f.Merge(ctx, target, head)
}
func (l *trainLander) CommitMerge(ctx context.Context, tree string, parents []string, msg string) (string, error) {
	defer l.lock()()
	return l.f.CommitMerge(ctx, tree, parents, msg)
}
func (l *trainLander) MoveTarget(ctx context.Context, branch, new, old, reason string) error {
	defer l.lock()()
	return l.f.MoveTarget(ctx, branch, new, old, reason)
}
func (l *trainLander) Checkout(ctx context.Context, name, commit string) (string, error) {
	return "/nowhere/" + name, nil
}
func (l *trainLander) RemoveCheckout(context.Context, string) error { return nil }
func (l *trainLander) CleanCheckouts(context.Context) (int, error)  { return 0, nil }

func (l *trainLander) Check(ctx context.Context, dir, cmd string, env []string, timeout time.Duration) (check.Result, error) {
	commit := ""
	for _, e := range env {
		if c, ok := strings.CutPrefix(e, "COORD_LAND_COMMIT="); ok {
			commit = c
		}
	}
	l.mu.Lock()
	l.checks++
	d := time.Duration(l.rng.IntN(3000)) * time.Microsecond
	bad := false
	for h := range l.broken {
		ok, _ := l.f.IsAncestor(ctx, h, commit)
		bad = bad || ok
	}
	l.mu.Unlock()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return check.Result{Exit: -1}, ctx.Err()
	}
	if bad {
		return check.Result{Exit: 1, Tail: "FAIL: broken"}, nil
	}
	l.mu.Lock()
	l.passed[commit] = true
	l.mu.Unlock()
	return check.Result{}, nil
}

// TestLand_Train: eight tasks, three checks at once, the fourth task
// broken (a check fails on any commit holding it): it goes back, every
// other lands, in order, each landing a commit the check passed on that
// does not hold the broken work; the target's first parents are the
// landings, one per task. Checks end in a random order.
func TestLand_Train(t *testing.T) {
	for round := range 5 {
		f := newFakeLander()
		heads := map[string]string{}
		for i := range 8 {
			heads[fmt.Sprintf("t%d", i)] = f.commit("0000")
		}
		l := &trainLander{f: f, broken: map[string]bool{heads["t3"]: true}, passed: map[string]bool{},
			rng: rand.New(rand.NewPCG(uint64(round), 1))}
		p := landProject(t, "", heads)
		res, err := p.Service.Land(context.Background(), l, app.LandRequest{Agent: "lander", Check: "go test", Parallel: 3})
		if err != nil {
			t.Fatal(err)
		}
		var landed []string
		for _, r := range res {
			switch {
			case r.Outcome == app.Landed:
				landed = append(landed, r.Task)
			case r.Task != "t3" || r.Outcome != app.SentBack || !strings.Contains(r.Why, "FAIL: broken"):
				t.Fatalf("round %d: %+v", round, r)
			}
		}
		if got := strings.Join(landed, " "); got != "t0 t1 t2 t4 t5 t6 t7" {
			t.Fatalf("round %d: landed %s", round, got)
		}
		// main's first parents, newest first: each a landing the check
		// passed on, its second parent the task's head
		var chain []string
		for c := f.tip; c != "0000"; c = f.parents[c][0] {
			if !l.passed[c] {
				t.Fatalf("round %d: the landing %s was never checked", round, c)
			}
			chain = append(chain, c)
		}
		if len(chain) != 7 {
			t.Fatalf("round %d: %d landings on the target", round, len(chain))
		}
		if l.checks < 8 {
			t.Fatalf("round %d: %d checks", round, l.checks)
		}
		if tk := taskOf(t, p.Service, "t7"); tk.LandingAt != "" || tk.LandingOn != nil {
			t.Fatalf("t7 still marked as being checked: %q %v", tk.LandingAt, tk.LandingOn)
		}
	}
}
