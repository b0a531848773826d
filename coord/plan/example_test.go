package plan_test

import (
	"fmt"
	"time"

	"github.com/rotd/coordination/coord/plan"
)

func ExampleModel_Plan() {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var history []plan.Commit
	for i, c := range []struct {
		subject string
		paths   []string
	}{
		{"printer: fix column width", []string{"printer/width.go", "printer/width_test.go"}},
		{"printer: wrap long lines", []string{"printer/width.go", "printer/width_test.go"}},
		{"searcher: faster scan", []string{"searcher/scan.go"}},
		{"docs: explain --wrap", []string{"docs/usage.md"}},
	} {
		cm := plan.Commit{Hash: fmt.Sprint(i), Time: t0.Add(time.Duration(i) * time.Hour), Subject: c.subject}
		for _, p := range c.paths {
			cm.Changes = append(cm.Changes, plan.Change{Status: 'M', Path: p})
		}
		history = append(history, cm)
	}
	tree := []string{"docs/usage.md", "printer/width.go", "printer/width_test.go", "searcher/scan.go"}
	m := plan.NewModel(plan.Input{Commits: history, Tree: tree}, plan.DefaultParams)
	for _, p := range m.Plan([]plan.Task{{ID: "7", Title: "printer: trim trailing spaces"}}) {
		for _, x := range p.Paths {
			fmt.Printf("%s (%s)\n", x.Path, x.Why[0])
		}
	}
	// Output:
	// printer/width.go (2 changes like 'printer: wrap long lines' touched it)
	// printer/width_test.go (2 changes like 'printer: wrap long lines' touched it)
}
