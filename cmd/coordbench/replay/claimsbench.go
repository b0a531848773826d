package replay

import (
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// ClaimFigures are one history's replay under write claims for one
// number of agents: first come, first served without claims, with
// claims recorded only (warn) and enforced (exclusive).
type ClaimFigures struct {
	History   string
	Agents    int
	Tasks     int
	FCFS      Result
	Warn      Result
	Exclusive Result
}

// BenchClaims replays the newest opt.Tasks commits of each history as
// work for each number of agents, first come, first served (no files
// declared: what write claims meet without a planner), with and without
// write claims.
func BenchClaims(opt BenchOptions) ([]ClaimFigures, error) {
	if len(opt.Histories) == 0 {
		opt.Histories = Histories
	}
	if len(opt.Agents) == 0 {
		opt.Agents = []int{4, 8}
	}
	if opt.Tasks == 0 {
		opt.Tasks = 200
	}
	var out []ClaimFigures
	for _, h := range opt.Histories {
		cs, err := LoadFile(filepath.Join(opt.Dir, h+".jsonl.gz"))
		if err != nil {
			return nil, err
		}
		end := len(cs) - opt.Skip*opt.Tasks
		if end-opt.Tasks < 0 {
			return nil, fmt.Errorf("%s: %d commits: too few for %d tasks", h, len(cs), opt.Tasks)
		}
		work := Works(cs[end-opt.Tasks : end])
		for _, n := range opt.Agents {
			f := ClaimFigures{History: h, Agents: n, Tasks: len(work)}
			for _, r := range []struct {
				res *Result
				opt Options
			}{
				{&f.FCFS, Options{Agents: n}},
				{&f.Warn, Options{Agents: n, WriteClaims: true, ClaimsWarn: true}},
				{&f.Exclusive, Options{Agents: n, WriteClaims: true}},
			} {
				if *r.res, err = Simulate(work, nil, r.opt); err != nil {
					return nil, fmt.Errorf("%s, %d agents: %w", h, n, err)
				}
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// PrintClaims writes the figures as one markdown table.
func PrintClaims(w io.Writer, fs []ClaimFigures) {
	fmt.Fprintf(w, "| history | agents | conflicts FCFS | conflicts, claims warn | conflicts, claims exclusive | refused edits | of which the changes meet | wait total | mean wait | longest wait | hand-backs (work lost) | stale writes | makespan FCFS | makespan exclusive |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, f := range fs {
		e := f.Exclusive
		mean := time.Duration(0)
		if e.Refused > 0 {
			mean = e.Waited / time.Duration(e.Refused)
		}
		fmt.Fprintf(w, "| %s (%d tasks) | %d | %d | %d | %d | %d | %d | %.1f h | %.0f min | %.1f h | %d (%.1f h) | %d | %.1f h | %.1f h (%.2fx) |\n",
			f.History, f.Tasks, f.Agents, f.FCFS.Conflicts, f.Warn.Conflicts, e.Conflicts, e.Refused, e.RefusedMeet,
			e.Waited.Hours(), mean.Minutes(), e.MaxWait.Hours(), e.HandBacks, e.Lost.Hours(), e.StaleMeets,
			f.FCFS.Makespan.Hours(), e.Makespan.Hours(), ratio(e.Makespan.Hours(), f.FCFS.Makespan.Hours()))
	}
}
