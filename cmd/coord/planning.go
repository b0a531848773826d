package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/cmd/coord/mcpserver"
	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
	"github.com/rotd/coord/registry/workspace"
)

func planningCommands(e *env) []*cli.Command {
	capFlag := &cli.StringFlag{Name: "capability", Usage: "this agent's capabilities, comma-separated (env COORD_AGENT_CAPS or ROTD_AGENT_CAPS)"}
	skillFlag := &cli.StringFlag{Name: "skill-level", Usage: "skill filter: '<=intermediate', '>=entry', '=expert'"}
	return []*cli.Command{
		{Name: "ready", Usage: "tasks this agent could claim now, best first; --explain says why the others are not eligible",
			Flags:  []cli.Flag{capFlag, skillFlag, &cli.BoolFlag{Name: "explain", Usage: "also list ineligible tasks with the reason"}, limitFlag()},
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
	if _, err := coord.ParseSkillFilter(c.String("skill-level")); err != nil {
		return err
	}
	limit, err := limitOf(c)
	if err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	a, err := e.caller(c)
	if err != nil {
		return err
	}
	ready, not, err := s.Ready(e.ctx, a)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(mcpserver.ReadyJSON(ready, not, c.Bool("explain"), limit))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	rows, more := app.Limit(ready, limit)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Priority, coord.Cell(r.Title, textWidth))
	}
	if len(ready) == 0 {
		fmt.Fprintln(tw, "no task is eligible for "+a.ID)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	e.printMore(more, "ready")
	if c.Bool("explain") {
		rows, more := app.Limit(not, limit)
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\tnot eligible\t%s\n", r.ID, coord.Cell(r.Reason, reasonWidth))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		e.printMore(more, "not eligible")
	}
	return nil
}

// limitFlag is --limit, of ls and ready.
func limitFlag() cli.Flag {
	return &cli.IntFlag{Name: "limit", Value: app.ListLimit, Usage: "print at most N rows of each list, and how many more there are (0: every row)"}
}

// limitOf is --limit: app.ListLimit unless given; 0 means every row.
func limitOf(c *cli.Context) (int, error) {
	n := c.Int("limit")
	return n, app.CheckLimit("--limit", n)
}

// printMore ends a list cut by --limit with how many rows it left out
// (nothing when none was).
func (e *env) printMore(more int, what string) {
	if more > 0 {
		e.printf("… %s more %s; --limit 0 shows every one\n", grouped(more), what)
	}
}

// grouped renders n with thousands separators: 9,950.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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
	g, err := s.Deps(e.ctx)
	if err != nil {
		return err
	}
	nodes, unknown, cycle := g.Tasks, g.Unknown, g.Cycle
	switch {
	case e.json:
		if err := e.printJSON(g); err != nil {
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

// repoPaths maps the PATH arguments to repository paths
// (workspace.Paths.RepoPath: relative to the caller's working directory,
// or absolute in any worktree). The application must be open (the root
// known).
func (e *env) repoPaths(c *cli.Context) ([]string, error) {
	if c.NArg() == 0 {
		return nil, strErr("%s needs at least one PATH", c.Command.Name)
	}
	m := e.paths()
	var out []string
	for _, p := range c.Args().Slice() {
		cp, err := m.RepoPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
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
	ttl, err := durFlag(c, "ttl", 0)
	if err != nil {
		return err
	}
	agent, err := e.who()
	if err != nil {
		return err
	}
	locked, err := s.LockPaths(e.ctx, agent, paths, ttl)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"locked": locked, "holder": agent})
	}
	e.printf("locked %s\n", strings.Join(locked, " "))
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
	_, err = s.UnlockPaths(e.ctx, agent, paths)
	return err
}

func (e *env) cmdLocks(c *cli.Context) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	live, err := s.PathLocks(e.ctx)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(live)
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

// cmdGuard checks the staged change (read from the caller's own worktree
// and mapped to repository paths) against other agents' path locks and
// the files of the tasks they hold (app.Service.Guard).
func (e *env) cmdGuard(c *cli.Context) error {
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	staged, err := workspace.Staged(e.ctx, e.cwd, e.paths())
	if err != nil {
		return err
	}
	hits, err := s.Guard(e.ctx, agent, staged)
	if err != nil {
		return err
	}
	if len(hits) > 0 {
		var what []string
		for _, h := range hits {
			what = append(what, h.String())
		}
		return coord.Errorf(coord.CodeConflict, "guard: staged files held by another agent: %s", strings.Join(what, ", ")).
			WithHint("unstage them or coordinate with the holder")
	}
	return nil
}

func (e *env) cmdQuotaAdd(c *cli.Context) error {
	tokens, requests := c.Int64("tokens"), c.Int64("requests")
	if tokens < 0 || requests < 0 || (tokens == 0 && requests == 0) {
		return strErr("quota add needs --tokens N and/or --requests N (non-negative, not both zero)")
	}
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	q, err := s.QuotaAdd(e.ctx, agent, tokens, requests)
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
	s, err := e.open()
	if err != nil {
		return err
	}
	q, err := s.QuotaShow(e.ctx)
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
	s, err := e.open()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, coord.MaxArtifact+1))
	if err != nil {
		return e.readErr("stdin", err)
	}
	if len(data) > coord.MaxArtifact {
		return coord.Errorf(coord.CodeUsage, "stdin is larger than %d bytes", coord.MaxArtifact)
	}
	if c.Command.Name == "append" {
		return s.ArtifactAppend(e.ctx, name, data)
	}
	return s.ArtifactWrite(e.ctx, name, data)
}
