//go:build !race

// Many server processes at once: the race detector cannot see across
// processes and slows each about tenfold, so this is built only without
// it, and make test's procs pass runs it (Makefile).

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rotd/coordination/coord"
)

// TestRace8Processes: 8 server processes for 8 agents race for 80 tasks
// through the SDK's client over stdio; every task is claimed exactly
// once and ends done.
func TestRace8Processes(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	p := seeded(t, tasks(80))
	var mu sync.Mutex
	claims := map[string][]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(agent string) {
			defer wg.Done()
			cs, _, err := startServer(t, p.Root, agent, nil)
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "claim"})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("%s: claim: %v %v", agent, err, res)
					return
				}
				var got struct {
					ID, Status string
				}
				b, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(b, &got)
				if got.Status == "no_eligible_task" || got.Status == "drained" {
					return
				}
				mu.Lock()
				claims[got.ID] = append(claims[got.ID], agent)
				mu.Unlock()
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "release", Arguments: map[string]any{"task": got.ID, "summary": "x"}})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("%s: release %s: %v %v", agent, got.ID, err, res)
					return
				}
			}
		}(fmt.Sprintf("agent-%d", i))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(claims) != 80 {
		t.Errorf("%d tasks claimed, want 80", len(claims))
	}
	for id, by := range claims {
		if len(by) != 1 {
			t.Errorf("task %s claimed %d times: %v", id, len(by), by)
		}
	}
	ts, _ := p.Service.Snapshot(context.Background())
	for _, task := range ts {
		if task.Status != coord.Done {
			t.Errorf("task %s is %s", task.ID, task.Status)
		}
	}
}
