package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/file"
)

func planningCommands(e *env) []*cli.Command {
	capFlag := &cli.StringFlag{Name: "capability", Usage: "this agent's capabilities, comma-separated (env COORD_AGENT_CAPS or ROTD_AGENT_CAPS)"}
	skillFlag := &cli.StringFlag{Name: "skill-level", Usage: "skill filter: '<=intermediate', '>=entry', '=expert'"}
	return []*cli.Command{
		{Name: "ready", Usage: "tasks this agent could claim now, best first; --explain says why the others are not eligible",
			Flags:  []cli.Flag{capFlag, skillFlag, &cli.BoolFlag{Name: "explain", Usage: "also list ineligible tasks with the reason"}},
			Action: e.cmdReady},
		{Name: "deps", Usage: "show the merged dependency graph (text, --json, --dot)",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "dot", Usage: "Graphviz output"}}, Action: e.cmdDeps},
		{Name: "lock-file", Usage: "lock repository paths (all or nothing; exit 3 naming the holder)", ArgsUsage: "PATH…",
			Flags: []cli.Flag{&cli.StringFlag{Name: "ttl", Usage: "expire after this duration (default: until released)"}}, Action: e.cmdLockFile},
		{Name: "unlock-file", Usage: "release path locks you hold", ArgsUsage: "PATH…", Action: e.cmdUnlockFile},
		{Name: "locks", Usage: "list path locks", Action: e.cmdLocks},
		{Name: "guard", Usage: "pre-commit hook: exit 3 if staged files are locked by another agent", Action: e.cmdGuard},
		{Name: "quota", Usage: "shared token / request counters", Subcommands: []*cli.Command{
			{Name: "add", Usage: "add usage for this agent",
				Flags: []cli.Flag{&cli.Int64Flag{Name: "tokens"}, &cli.Int64Flag{Name: "requests"}}, Action: e.cmdQuotaAdd},
			{Name: "show", Usage: "usage per agent and total for the current UTC day", Action: e.cmdQuotaShow},
		}},
		{Name: "artifact", Usage: "locked, atomic writes of ROTD artifacts under .rotd/", Subcommands: []*cli.Command{
			{Name: "append", Usage: "append one line from stdin (one JSON object for .jsonl)", ArgsUsage: "FILE", Action: e.cmdArtifact},
			{Name: "write", Usage: "replace FILE with stdin atomically (valid JSON for .json)", ArgsUsage: "FILE", Action: e.cmdArtifact},
		}},
	}
}

func (e *env) cmdReady(c *cli.Context) error {
	skill, err := coord.ParseSkillFilter(c.String("skill-level"))
	if err != nil {
		return err
	}
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	a := coord.Agent{ID: agent, Caps: e.caps(c), Skill: skill}
	type row struct {
		ID       string `json:"id"`
		Priority string `json:"priority"`
		Title    string `json:"title,omitempty"`
		Reason   string `json:"reason,omitempty"`
	}
	var ready, not []row
	err = s.Tasks().View(e.ctx, func(tx *coord.Txn) error {
		for _, t := range tx.Tasks {
			p := string(t.Priority)
			if p == "" {
				p = string(coord.Medium)
			}
			if why := tx.Ineligible(t, a); why != "" {
				not = append(not, row{t.ID, p, t.Title, why})
			} else {
				ready = append(ready, row{ID: t.ID, Priority: p, Title: t.Title})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(ready, func(i, j int) bool {
		return coord.Priority(ready[i].Priority).Rank() < coord.Priority(ready[j].Priority).Rank()
	})
	if e.json {
		out := map[string]any{"ready": nonNil(ready)}
		if c.Bool("explain") {
			out["not_ready"] = nonNil(not)
		}
		return e.printJSON(out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, r := range ready {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Priority, coord.Cell(r.Title, textWidth))
	}
	if len(ready) == 0 {
		fmt.Fprintln(tw, "no task is eligible for "+agent)
	}
	if c.Bool("explain") {
		for _, r := range not {
			fmt.Fprintf(tw, "%s\tnot eligible\t%s\n", r.ID, coord.Cell(r.Reason, reasonWidth))
		}
	}
	return tw.Flush()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (e *env) cmdDeps(c *cli.Context) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	type node struct {
		ID     string   `json:"id"`
		Status string   `json:"status"`
		Deps   []string `json:"deps"`
	}
	var nodes []node
	var unknown []string
	var cycle []string
	err = s.Tasks().View(e.ctx, func(tx *coord.Txn) error {
		graph := map[string][]string{}
		seen := map[string]bool{}
		for _, t := range tx.Tasks {
			d := tx.Deps(t)
			graph[t.ID] = d
			nodes = append(nodes, node{t.ID, string(t.Status), nonNil(d)})
		}
		for id, d := range tx.DepMap {
			if tx.Task(id) == nil {
				graph[id] = d
				nodes = append(nodes, node{id, "unknown", nonNil(d)})
			}
		}
		for _, n := range nodes {
			for _, d := range n.Deps {
				if _, ok := graph[d]; !ok && !seen[d] {
					seen[d] = true
					if tx.Archived != nil && tx.Archived(d) {
						nodes = append(nodes, node{d, "archived", []string{}})
						graph[d] = nil
						continue
					}
					unknown = append(unknown, d)
				}
			}
		}
		cycle = coord.FindCycle(graph)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	sort.Strings(unknown)
	switch {
	case e.json:
		if err := e.printJSON(map[string]any{"tasks": nonNil(nodes), "unknown": nonNil(unknown), "cycle": nonNil(cycle)}); err != nil {
			return err
		}
	case c.Bool("dot"):
		e.printf("digraph deps {\n  rankdir=LR;\n")
		for _, n := range nodes {
			e.printf("  %s [label=%s];\n", dotQuote(n.ID), dotLabel(n.ID, n.Status))
			for _, d := range n.Deps {
				e.printf("  %s -> %s;\n", dotQuote(d), dotQuote(n.ID))
			}
		}
		for _, u := range unknown {
			e.printf("  %s [style=dashed,label=%s];\n", dotQuote(u), dotLabel(u, "unknown"))
		}
		e.printf("}\n")
	default:
		for _, n := range nodes {
			d := "-"
			if len(n.Deps) > 0 {
				d = strings.Join(n.Deps, ", ")
			}
			e.printf("%s (%s) <- %s\n", n.ID, n.Status, d)
		}
		for _, u := range unknown {
			e.printf("unknown task %s (counts as not done)\n", u)
		}
	}
	if len(cycle) > 0 {
		return coord.Errorf(coord.CodeConflict, "dependency cycle %s", strings.Join(cycle, " -> ")).WithHint("edit the deps or dependency_map.json to break it")
	}
	if len(unknown) > 0 {
		return coord.Errorf(coord.CodeConflict, "%d dependency id(s) name no task: %s", len(unknown), strings.Join(unknown, ", ")).
			WithHint("seed the missing tasks or fix the deps")
	}
	return nil
}

// dotQuote quotes s as a Graphviz string: only '"' and '\\' are escaped.
// (Go's %q doubles the backslash of a "\n" line break, which Graphviz then
// shows as a literal \n.)
func dotQuote(s string) string { return `"` + dotEscape.Replace(s) + `"` }

var dotEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// dotLabel is a Graphviz label of lines, each quoted as text and joined
// by Graphviz's centred line break \n.
func dotLabel(lines ...string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = dotEscape.Replace(l)
	}
	return `"` + strings.Join(q, `\n`) + `"`
}

// repoPaths maps the PATH arguments to project paths (pathMap.RepoPath:
// relative to the caller's working directory, or absolute in any
// worktree), without duplicates. The store must be open (the root known).
func (e *env) repoPaths(c *cli.Context) ([]string, error) {
	if c.NArg() == 0 {
		return nil, strErr("%s needs at least one PATH", c.Command.Name)
	}
	m := e.repoMap()
	var out []string
	seen := map[string]bool{}
	for _, p := range c.Args().Slice() {
		cp, err := m.RepoPath(p)
		if err != nil {
			return nil, err
		}
		if !seen[cp] {
			seen[cp] = true
			out = append(out, cp)
		}
	}
	return out, nil
}

func (e *env) cmdLockFile(c *cli.Context) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	paths, err := e.repoPaths(c)
	if err != nil {
		return err
	}
	var ttl time.Duration
	if c.IsSet("ttl") {
		if ttl, err = parseDuration(c.String("ttl")); err != nil || ttl <= 0 {
			return strErr("--ttl must be a positive duration")
		}
	}
	agent, err := e.who()
	if err != nil {
		return err
	}
	// coord.Txn.LockPaths refuses a path another agent's lock covers, or
	// one inside the files of a task another agent holds.
	err = s.Tasks().Update(e.ctx, func(tx *coord.Txn) error { return tx.LockPaths(agent, paths, ttl) })
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"locked": paths, "holder": agent})
	}
	e.printf("locked %s\n", strings.Join(paths, " "))
	return nil
}

func (e *env) cmdUnlockFile(c *cli.Context) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	paths, err := e.repoPaths(c)
	if err != nil {
		return err
	}
	agent, err := e.who()
	if err != nil {
		return err
	}
	return s.Tasks().Update(e.ctx, func(tx *coord.Txn) error {
		_, err := tx.UnlockPaths(agent, paths)
		return err
	})
}

func (e *env) cmdLocks(c *cli.Context) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	var live []coord.PathLock
	if err := s.Tasks().View(e.ctx, func(tx *coord.Txn) error {
		live = tx.LivePathLocks()
		return nil
	}); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(nonNil(live))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tHOLDER\tSINCE\tEXPIRES\tTASK")
	for _, l := range live {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", coord.Cell(l.Path, textWidth), coord.Cell(l.Holder, textWidth), coord.Cell(l.Since, textWidth), dash(coord.Cell(l.Expires, textWidth)), dash(coord.Cell(l.TaskID, textWidth)))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cmdGuard checks the staged change against path locks and against the
// files patterns of tasks other agents hold. Staged paths are read from
// the caller's own worktree (git's index there) and mapped to project
// paths like every other path (pathMap.RepoPath).
func (e *env) cmdGuard(c *cli.Context) error {
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	staged, err := e.stagedPaths()
	if err != nil {
		return err
	}
	var hits []string
	err = s.Tasks().View(e.ctx, func(tx *coord.Txn) error {
		for _, h := range tx.Guard(agent, staged) {
			hits = append(hits, h.String())
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(hits) > 0 {
		return coord.Errorf(coord.CodeConflict, "guard: staged files held by another agent: %s", strings.Join(hits, ", ")).
			WithHint("unstage them or coordinate with the holder")
	}
	return nil
}

// gitTimeout bounds every git command coord runs.
const gitTimeout = 10 * time.Second

// git runs git in dir with a timeout and returns its stdout; a failure
// carries git's first line of stderr.
func (e *env) git(dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(e.ctx, gitTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if msg, _, _ := strings.Cut(strings.TrimSpace(string(ee.Stderr)), "\n"); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
	}
	return out, err
}

// stagedPaths lists the project paths of the caller's staged change:
// every path the commit would add, change or delete (renames as both
// names), from the caller's worktree, whatever its subdirectory. Paths
// outside the project (the root being a subdirectory of the repository)
// cannot be locked and are left out.
func (e *env) stagedPaths() ([]string, error) {
	out, err := e.git(e.cwd, "rev-parse", "--show-toplevel")
	if errors.Is(err, exec.ErrNotFound) {
		return nil, coord.Errorf(coord.CodeIO, "guard: %v", err).WithHint("guard reads the staged change with git: install git or put it on PATH")
	}
	if err != nil {
		return nil, coord.Errorf(coord.CodeIO, "guard: git rev-parse --show-toplevel in %s failed: %v", e.cwd, err).WithHint("run guard inside a git work tree")
	}
	top := strings.TrimSuffix(string(out), "\n")
	// --relative= (empty) names paths from the top even where the user's
	// config sets diff.relative; --no-renames lists a renamed file's old
	// name too (a locked file moved away is still a locked file changed).
	out, err = e.git(top, "diff", "--cached", "--name-only", "-z", "--no-renames", "--relative=")
	if err != nil {
		return nil, coord.Errorf(coord.CodeIO, "guard: git diff --cached in %s failed: %v", top, err).WithHint("run guard inside a git work tree")
	}
	m := e.repoMap()
	var staged []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" {
			continue
		}
		rp, err := m.RepoPath(filepath.Join(top, p))
		if err != nil {
			continue
		}
		staged = append(staged, rp)
	}
	return staged, nil
}

func (e *env) cmdQuotaAdd(c *cli.Context) error {
	tokens, requests := c.Int64("tokens"), c.Int64("requests")
	if tokens < 0 || requests < 0 || (tokens == 0 && requests == 0) {
		return strErr("quota add needs --tokens N and/or --requests N (non-negative, not both zero)")
	}
	_, agent, err := e.openAs()
	if err != nil {
		return err
	}
	q, err := e.svc.QuotaAdd(e.ctx, agent, tokens, requests)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(q)
	}
	e.printf("today: %d tokens, %d requests\n", q.TokensUsed, q.Requests)
	return nil
}

func (e *env) cmdQuotaShow(c *cli.Context) error {
	if _, err := e.open(); err != nil {
		return err
	}
	q, err := e.svc.QuotaShow(e.ctx)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(q)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DAY %s\tTOKENS\tREQUESTS\n", coord.Cell(q.LastReset[:min(10, len(q.LastReset))], textWidth))
	agents := make([]string, 0, len(q.AgentBreakdown))
	for a := range q.AgentBreakdown {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	for _, a := range agents {
		u := q.AgentBreakdown[a]
		fmt.Fprintf(tw, "%s\t%d\t%d\n", coord.Cell(a, textWidth), u.Tokens, u.Requests)
	}
	fmt.Fprintf(tw, "total\t%d\t%d\n", q.TokensUsed, q.Requests)
	if l := e.cfg.Quota; l.Tokens > 0 || l.Requests > 0 {
		fmt.Fprintf(tw, "limit\t%d\t%d\n", l.Tokens, l.Requests)
	}
	return tw.Flush()
}

func (e *env) cmdArtifact(c *cli.Context) error {
	if c.NArg() != 1 {
		return strErr("artifact %s needs FILE", c.Command.Name)
	}
	name := c.Args().First()
	if _, err := coord.ArtifactName(name); err != nil {
		return err
	}
	if _, err := e.open(); err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, file.MaxArtifact+1))
	if err != nil {
		return file.IOError(err, "")
	}
	if len(data) > file.MaxArtifact {
		return coord.Errorf(coord.CodeUsage, "stdin is larger than %d bytes", file.MaxArtifact)
	}
	if c.Command.Name == "append" {
		return e.svc.ArtifactAppend(e.ctx, name, data)
	}
	return e.svc.ArtifactWrite(e.ctx, name, data)
}
