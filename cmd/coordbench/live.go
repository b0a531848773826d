package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainLive runs procs agents ("d0", "d1", …) side by side, each one
// long-lived 'coord mcp' process (argv names the binary and the project;
// "--agent ID mcp" is added) that opens the project once and claims
// through its claim tool until it answers with no task, as an agent's
// MCP session does. It checks that exactly n were claimed and returns
// claims per second, the processes' start not counted.
func drainLive(n, procs int, argv []string) (float64, error) {
	ctx := context.Background()
	claimers := make([]claimer, procs)
	for p := range claimers {
		args := append(append([]string{}, argv[1:]...), "--agent", "d"+strconv.Itoa(p), "mcp")
		client := mcp.NewClient(&mcp.Implementation{Name: "coordbench", Version: "v0"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], args...)}, nil)
		if err != nil {
			return 0, fmt.Errorf("drain: starting %s %s: %v", argv[0], strings.Join(args, " "), err)
		}
		defer cs.Close()
		claimers[p] = func() ([]byte, float64, error) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "claim"})
			if err != nil {
				return nil, 0, err
			}
			var text []byte
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					text = append(text, t.Text...)
				}
			}
			if res.IsError {
				return text, 0, fmt.Errorf("claim: %s", text)
			}
			return text, 0, nil
		}
	}
	rate, _, err := drainBy(n, claimers)
	return rate, err
}
