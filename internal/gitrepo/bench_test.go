package gitrepo

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// inFlight16 makes a repository with 16 branches in flight from main,
// each changing one line of a shared file (eight shared files, two
// branches each: some on the same line, conflicting, some on other
// hunks) and a file of its own, and returns the directory and the pairs
// `coord conflicts` asks: each branch with the target, and every two
// branches (16 + 120).
func inFlight16(b testing.TB) (dir string, tips []string, pairs [][2]string) {
	dir = newRepo(b)
	for f := 0; f < 8; f++ {
		writeT(b, dir, fmt.Sprintf("shared%d.txt", f), lines(60, nil))
	}
	// A tree of a middling project: 2,000 files in 40 directories.
	for f := 0; f < 2000; f++ {
		writeT(b, dir, fmt.Sprintf("pkg%02d/file%04d.go", f%40, f), lines(30+f%50, map[int]string{1: fmt.Sprintf("// file %d", f)}))
	}
	gitT(b, dir, "add", ".")
	gitT(b, dir, "commit", "-qm", "shared files")
	main := gitT(b, dir, "rev-parse", "main")
	for i := 0; i < 16; i++ {
		// Branches 2k and 2k+1 share shared<k>.txt: on one line for
		// even k (a conflict), on lines 10 and 50 for odd k (clean).
		line := 10
		if i%2 == 1 && (i/2)%2 == 1 {
			line = 50
		}
		tips = append(tips, branch(b, dir, fmt.Sprintf("agent%d", i), func() {
			writeT(b, dir, fmt.Sprintf("shared%d.txt", i/2), lines(60, map[int]string{line: fmt.Sprintf("agent %d", i)}))
			writeT(b, dir, fmt.Sprintf("own%d.txt", i), strings.Repeat("x\n", i+1))
		}))
	}
	for i := range tips {
		pairs = append(pairs, [2]string{main, tips[i]})
	}
	for i := range tips {
		for j := i + 1; j < len(tips); j++ {
			pairs = append(pairs, [2]string{tips[i], tips[j]})
		}
	}
	return dir, tips, pairs
}

// BenchmarkMergeTrees16 measures `coord conflicts` at 16 branches in
// flight (a tree of 2,000 files): every pair merged (one git process for the batch, or one per
// pair), and the incremental round after one branch moved (the 16 pairs
// it is in merged, the 120 others from the cache).
func BenchmarkMergeTrees16(b *testing.B) {
	needGit(b)
	ctx := context.Background()
	dir, tips, pairs := inFlight16(b)
	conflicts := 0
	if rs, err := New(dir).MergeTrees(ctx, pairs, nil); err != nil {
		b.Fatal(err)
	} else {
		for _, r := range rs {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
			if r.Conflict {
				conflicts++
			}
		}
	}
	if conflicts != 4 {
		b.Fatalf("%d of %d pairs conflict, want 4", conflicts, len(pairs))
	}
	b.Run("Full", func(b *testing.B) {
		for b.Loop() {
			if _, err := New(dir).MergeTrees(ctx, pairs, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("FullOnePerPair", func(b *testing.B) {
		for b.Loop() {
			for _, p := range pairs {
				if r := New(dir).mergeOne(ctx, p); r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
	})
	n := 0 // every move a new commit, across -count runs too
	b.Run("OneMoved", func(b *testing.B) {
		common, err := New(dir).CommonDir(ctx)
		if err != nil {
			b.Fatal(err)
		}
		c, _ := LoadMergeCache(common, nil)
		if _, err := New(dir).MergeTrees(ctx, pairs, c); err != nil {
			b.Fatal(err)
		}
		if err := c.Save(ctx); err != nil {
			b.Fatal(err)
		}
		// Branch 0 moves: a new commit on it each round (made outside
		// the timer), so its 16 pairs are new and the others cached.
		for b.Loop() {
			b.StopTimer()
			n++
			wt := b.TempDir()
			gitT(b, dir, "worktree", "add", "-q", "--detach", wt, tips[0])
			writeT(b, wt, fmt.Sprintf("own0-%d.txt", n), "more\n")
			gitT(b, wt, "add", ".")
			gitT(b, wt, "commit", "-qm", "moves")
			moved := gitT(b, wt, "rev-parse", "HEAD")
			gitT(b, dir, "worktree", "remove", "--force", wt)
			ps := make([][2]string, len(pairs))
			for i, p := range pairs {
				ps[i] = p
				for k := range p {
					if p[k] == tips[0] {
						ps[i][k] = moved
					}
				}
			}
			b.StartTimer()
			c, _ := LoadMergeCache(common, nil)
			rs, err := New(dir).MergeTrees(ctx, ps, c)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Save(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			merged := 0
			for _, r := range rs {
				if !r.Cached {
					merged++
				}
			}
			if merged != 16 {
				b.Fatalf("%d pairs merged after one branch moved, want 16", merged)
			}
			b.StartTimer()
		}
	})
	b.Run("NoneMoved", func(b *testing.B) {
		common, _ := New(dir).CommonDir(ctx)
		for b.Loop() {
			c, _ := LoadMergeCache(common, nil)
			if _, err := New(dir).MergeTrees(ctx, pairs, c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
