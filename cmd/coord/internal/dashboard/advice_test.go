package dashboard_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/coord"
)

// TestAdvicePanel: the page shows coord advise's number with the rates
// behind it and a plot of the number over time; state.json carries it
// as coord advise --json prints it.
func TestAdvicePanel(t *testing.T) {
	f := newFixture(t, dashboard.Options{},
		&coord.Task{ID: "a", Title: "one", PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.9}},
		&coord.Task{ID: "b", Title: "two", PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.9}},
		&coord.Task{ID: "c", Title: "three", PredictedFiles: []string{"search.go"}, PredictedConfidence: []float64{0.9}})
	if err := f.d.Build(f.ctx); err != nil {
		t.Fatal(err)
	}
	_, body := f.get("GET", "/")
	i := strings.Index(body, `id="p-advice"`)
	if i < 0 {
		t.Fatal("the page has no advice panel")
	}
	panel := body[i:]
	panel = panel[:strings.Index(panel, "</section>")]
	for _, want := range []string{"<dt>run now</dt><dd>2</dd>", "<dt>ready</dt><dd>3</dd>", "conflicts per task", "3 ready, 2 of them can run together", "<svg", "2 agents advised"} {
		if !strings.Contains(panel, want) {
			t.Errorf("the advice panel lacks %q:\n%s", want, panel)
		}
	}
	var adv coord.Advice
	if err := json.Unmarshal(f.stateOf()["advice"], &adv); err != nil || adv.Agents != 2 || adv.Ready != 3 {
		t.Fatalf("state.json advice %+v, %v", adv, err)
	}
}
