package replay

import (
	"fmt"
	"io"
	"math"
	"time"
)

// The targets: conflicts against first come, first served and makespan
// against the oracle, as a mean over the runs and for the worst run, and
// the time of one plan (200 tasks over up to 3,000 commits).
const (
	TargetConflicts      = 0.25
	TargetMakespan       = 1.10
	TargetWorstConflicts = 0.5
	TargetWorstMakespan  = 1.3
	TargetPlanTime       = 1 * time.Second
)

// ratio is a/b, 0 when b is 0 and a is 0 (no conflicts either way).
func ratio(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return a / b
}

// Summary is the figures of merit over a set of runs for one policy.
type Summary struct {
	Conflicts, Makespan           float64 // means of the ratios
	WorstConflicts, WorstMakespan float64
}

// Summarise computes the means and the worst runs of a policy's ratios.
func Summarise(fs []Figures, pick func(*Figures) Result) Summary {
	var s Summary
	for i := range fs {
		r := pick(&fs[i])
		c := ratio(float64(r.Conflicts), float64(fs[i].FCFS.Conflicts))
		m := ratio(r.Makespan.Hours(), fs[i].Oracle.Makespan.Hours())
		s.Conflicts += c
		s.Makespan += m
		s.WorstConflicts = math.Max(s.WorstConflicts, c)
		s.WorstMakespan = math.Max(s.WorstMakespan, m)
	}
	if n := float64(len(fs)); n > 0 {
		s.Conflicts /= n
		s.Makespan /= n
	}
	return s
}

// Met reports whether a summary meets the targets.
func (s Summary) Met() bool {
	return s.Conflicts <= TargetConflicts && s.Makespan <= TargetMakespan &&
		s.WorstConflicts <= TargetWorstConflicts && s.WorstMakespan <= TargetWorstMakespan
}

func (s Summary) String() string {
	met := "targets met"
	if !s.Met() {
		met = "targets NOT met"
	}
	return fmt.Sprintf("conflicts %.2fx FCFS (worst run %.2fx), makespan %.2fx oracle (worst %.2fx): %s",
		s.Conflicts, s.WorstConflicts, s.Makespan, s.WorstMakespan, met)
}

// Print writes the figures as markdown tables, one per history, and the
// summary over all runs.
func Print(w io.Writer, fs []Figures, replan int) {
	last := ""
	for i := range fs {
		f := &fs[i]
		if f.History != last {
			last = f.History
			fmt.Fprintf(w, "\n### %s: %d tasks after %d commits; plan %.2f s, recall %.0f%%, precision %.0f%%\n\n",
				f.History, f.Tasks, f.Commits, f.PlanTime.Seconds(), 100*f.Recall, 100*f.Prec)
			fmt.Fprintf(w, "| agents | conflicts FCFS | naive | plan once | re-plan | oracle | ratio naive | ratio once | ratio re-plan | makespan FCFS / oracle | makespan naive | once | re-plan | slowest re-plan |\n")
			fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		}
		fc := float64(f.FCFS.Conflicts)
		om := f.Oracle.Makespan.Hours()
		rp, rr, rm, rt := "-", "-", "-", "-"
		if replan > 0 {
			rp = fmt.Sprint(f.Replan.Conflicts)
			rr = fmt.Sprintf("%.2fx", ratio(float64(f.Replan.Conflicts), fc))
			rm = fmt.Sprintf("%.2fx", ratio(f.Replan.Makespan.Hours(), om))
			rt = fmt.Sprintf("%.2f s", f.ReplanMax.Seconds())
		}
		fmt.Fprintf(w, "| %d | %d | %d | %d | %s | %d | %.2fx | %.2fx | %s | %.1f h / %.1f h | %.2fx | %.2fx | %s | %s |\n",
			f.Agents, f.FCFS.Conflicts, f.Naive.Conflicts, f.Once.Conflicts, rp, f.Oracle.Conflicts,
			ratio(float64(f.Naive.Conflicts), fc), ratio(float64(f.Once.Conflicts), fc), rr,
			f.FCFS.Makespan.Hours(), om, ratio(f.Naive.Makespan.Hours(), om), ratio(f.Once.Makespan.Hours(), om), rm, rt)
	}
	fmt.Fprintf(w, "\nnaive (two files per task): %s\n", Summarise(fs, func(f *Figures) Result { return f.Naive }))
	fmt.Fprintf(w, "planned once at seeding:    %s\n", Summarise(fs, func(f *Figures) Result { return f.Once }))
	if replan > 0 {
		fmt.Fprintf(w, "re-planned every %d landings: %s\n", replan, Summarise(fs, func(f *Figures) Result { return f.Replan }))
	}
	var slowest time.Duration
	for _, f := range fs {
		slowest = max(slowest, f.PlanTime, f.ReplanMax)
	}
	fmt.Fprintf(w, "slowest plan: %.2f s (target %v)\n", slowest.Seconds(), TargetPlanTime)
}
