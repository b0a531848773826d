package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/coord/plan"
	"github.com/rotd/coordination/internal/gitrepo"
)

// Planning: `coord plan` predicts the paths each task not yet claimed
// will touch, each with its probability, and records them as its
// predicted_files and predicted_confidence. The model is package
// coord/plan, the git reading package gitrepo, the use case
// app.Service.Plan; this file parses, wires and prints.

func planCommand(e *env) *cli.Command {
	return &cli.Command{Name: "plan", Usage: "predict the paths each unclaimed task will touch (from the git history and finished tasks) and record them as its predicted_files",
		ArgsUsage: "[ID…]",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "task", Usage: "plan this task (repeatable; default: every unclaimed task)"},
			&cli.BoolFlag{Name: "explain", Usage: "say why each path was chosen, for the tasks named (--explain ID) or all"},
		},
		Action: e.cmdPlan}
}

func (e *env) cmdPlan(_ context.Context, c *cli.Command) error {
	// coord plan 4.2 plans 4.2, as --task 4.2 does; with --explain, the
	// tasks named are explained, planned with their batch.
	explain := c.Bool("explain")
	req := app.PlanRequest{Tasks: c.StringSlice("task")}
	if explain {
		req.Include = c.Args().Slice()
	} else {
		req.Tasks = append(req.Tasks, c.Args().Slice()...)
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	res, err := s.Plan(e.ctx, req)
	if err != nil {
		return err
	}
	if res.Warning != "" {
		fmt.Fprintf(e.stderr, "coord: warning: %s\n", coord.OneLine(res.Warning))
	}
	if res.NoHistory {
		fmt.Fprintf(e.stderr, "coord: no git repository with commits at %s: nothing predicted\n", e.root)
		if e.json {
			return e.printJSON(map[string][]string{})
		}
		return nil
	}
	show := res.Predictions
	if explain && c.NArg() > 0 {
		show = nil
		for _, p := range res.Predictions {
			for _, id := range c.Args().Slice() {
				if p.Task == id {
					show = append(show, p)
				}
			}
		}
	}
	if e.json {
		if explain {
			out := map[string]explainedTask{}
			for _, p := range show {
				x := explainedTask{Paths: explained(p), Declared: p.Declared}
				if w, ok := res.Decisions[p.Task]; ok {
					x.Decision = &w
				}
				out[p.Task] = x
			}
			return e.printJSON(out)
		}
		out := map[string][]string{}
		for _, p := range show {
			out[p.Task] = nonNilStrings(p.Files())
		}
		return e.printJSON(out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, p := range show {
		if !explain {
			var shown []string
			for _, f := range p.Files() {
				shown = append(shown, coord.PathCell(f, textWidth))
			}
			paths := strings.Join(shown, " ")
			if paths == "" {
				paths = "(nothing predicted)"
			}
			fmt.Fprintf(tw, "%s\t%s\n", p.Task, paths)
			continue
		}
		switch {
		case p.Declared:
			fmt.Fprintf(tw, "%s\t(its declared files replace predictions)\t\t\n", p.Task)
		case len(p.Paths) == 0:
			fmt.Fprintf(tw, "%s\t(nothing predicted)\t\t\n", p.Task)
		}
		for i, x := range p.Paths {
			id := p.Task
			if i > 0 {
				id = ""
			}
			fmt.Fprintf(tw, "%s\t%s\tp %.2f\t%s\n", id, coord.PathCell(x.Path, textWidth), x.P, coord.OneLine(strings.Join(x.Why, "; ")))
		}
		if w, ok := res.Decisions[p.Task]; ok && w.Path != "" {
			fmt.Fprintf(tw, "\tdecision\t\t%s\n", decision(w))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	from := fmt.Sprintf("%s (%d read now) and %s", count(res.Commits, "commit"), res.Read, count(res.Finished, "finished task"))
	if res.Named > 0 {
		from = fmt.Sprintf("%s (%d read now), %s and %s the tasks name (found in %s)", count(res.Commits, "commit"), res.Read,
			count(res.Finished, "finished task"), count(res.Named, "identifier"), count(res.Holding, "file"))
	}
	e.printf("planned %s from %s in %s\n", count(len(res.Predictions), "task"), from, res.Took.Round(time.Millisecond))
	return nil
}

// explainedTask is one task as plan --explain --json prints it: its
// paths, whether declared files replace them, and the decision on them
// against the work in flight (unclaimed tasks only).
type explainedTask struct {
	Paths    []explainedPath `json:"paths"`
	Declared bool            `json:"declared,omitempty"`
	Decision *coord.Weighed  `json:"decision,omitempty"`
}

// explainedPath is one predicted path with its score, probability and
// reasons.
type explainedPath struct {
	Path  string   `json:"path"`
	Score float64  `json:"score"`
	P     float64  `json:"p"`
	Why   []string `json:"why"`
}

func explained(p plan.Prediction) []explainedPath {
	out := make([]explainedPath, len(p.Paths))
	for i, x := range p.Paths {
		out[i] = explainedPath{x.Path, x.Score, x.P, nonNilStrings(x.Why)}
	}
	return out
}

// decision says what the weighing decides for a task now.
func decision(w coord.Weighed) string {
	if w.Waits {
		return "waits: " + w.String()
	}
	return "ready: " + w.String()
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newProjectHistory is the project's git history as the planner asks
// for it (app.History): the repository of the project root (the main
// worktree when the caller stands in a linked one), wherever the command
// runs (a planner naming the project with --root from elsewhere plans
// from the project's history, not from its own directory's), its index
// kept in the common git directory; paths mapped to project paths when
// the project lies below the repository's top. Making it runs nothing;
// a root in no repository says so at Load.
func newProjectHistory(root string, paths func() *workspace.Paths) app.History {
	src := &gitrepo.Source{Dir: root}
	if top, _ := gitrepo.GitTop(root); top != root {
		src.Map = func(top string, list []string) []string { return paths().FromGit(top, list) }
	}
	return src
}

// count says n things: "1 task", "3 tasks".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
