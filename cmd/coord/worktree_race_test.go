//go:build !race

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rotd/coordination/registry/backend/backendtest"
)

// TestWorktreeAddRace: several coord processes add a worktree for one
// agent at once, each at its own path. One wins; the losers are refused
// and touch nothing of the winner's: its branch exists, at the target,
// and its worktree stands on it (a loser's clean-up once deleted the
// branch the winner had just made, 3 rounds in 5).
func TestWorktreeAddRace(t *testing.T) {
	t.Parallel()
	backendtest.NeedGit(t)
	for round := 0; round < 5; round++ {
		base := t.TempDir()
		repo := filepath.Join(base, "repo")
		env := append(append(cleanEnv(), backendtest.GitEnv...), "HOME="+base)
		os.MkdirAll(repo, 0o755)
		backendtest.Git(t, repo, "init", "-q", "-b", "main")
		backendtest.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
		runCoord(t, repo, env, "", "init")
		const n = 5
		var wg sync.WaitGroup
		codes := make([]int, n)
		errs := make([]string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				cmd := exec.Command("coord", "worktree", "add", "alice", "--path", filepath.Join(base, fmt.Sprintf("wt%d", i)))
				cmd.Dir, cmd.Env = repo, env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				cmd.Run()
				codes[i], errs[i] = cmd.ProcessState.ExitCode(), stderr.String()
			}(i)
		}
		wg.Wait()
		winner := -1
		for i, c := range codes {
			switch {
			case c == 0 && winner >= 0:
				t.Fatalf("round %d: two adds won (%d and %d)", round, winner, i)
			case c == 0:
				winner = i
			case c != 3:
				t.Fatalf("round %d: add %d exited %d: %s", round, i, c, errs[i])
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no add won: %v", round, errs)
		}
		wt := filepath.Join(base, fmt.Sprintf("wt%d", winner))
		if got := backendtest.Git(t, wt, "symbolic-ref", "HEAD"); got != "refs/heads/coord/alice" {
			t.Fatalf("round %d: the winner's worktree is on %q", round, got)
		}
		if tip, main := backendtest.Git(t, repo, "rev-parse", "refs/heads/coord/alice"), backendtest.Git(t, repo, "rev-parse", "main"); tip != main {
			t.Fatalf("round %d: coord/alice at %s, main at %s", round, tip, main)
		}
		if list := backendtest.Git(t, repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 2 {
			t.Fatalf("round %d: worktrees:\n%s", round, list)
		}
	}
}
