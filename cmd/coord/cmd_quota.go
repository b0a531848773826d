package main

import (
	"context"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func quotaCommand(e *env) *cli.Command {
	return &cli.Command{Name: "quota", Usage: "shared token / request counters", Commands: []*cli.Command{
		{Name: "add", Usage: "add usage for this agent",
			Flags: []cli.Flag{&cli.Int64Flag{Name: "tokens", Usage: "tokens used", HideDefault: true}, &cli.Int64Flag{Name: "requests", Usage: "requests made", HideDefault: true}}, Action: e.cmdQuotaAdd},
		{Name: "show", Usage: "usage per agent and total for the current UTC day", Action: e.cmdQuotaShow},
	}}
}

func (e *env) cmdQuotaAdd(_ context.Context, c *cli.Command) error {
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

func (e *env) cmdQuotaShow(_ context.Context, c *cli.Command) error {
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
