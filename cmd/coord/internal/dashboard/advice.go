package dashboard

import (
	"fmt"
	"time"

	"github.com/rotd/coordination/coord"
)

// The advice panel: how many agents to run now (coord advise: the
// state's Advice) with the rates behind it, and the advised number over
// the hours this dashboard has watched, sampled at each build (kept in
// memory: a restarted dashboard starts a new plot).

// adviceSlots and adviceSlot shape the plot: 48 half hours.
const (
	adviceSlots = 48
	adviceSlot  = 30 * time.Minute
)

type adviceView struct {
	Agents, Ready int
	Why           string
	PerHour       string
	PerTask       string
	Window        string
	Plot          *plot // nil before the first sample
}

// adviceSeries is the advised numbers seen, oldest first, a sample at
// most a minute apart unless the number changed, the last day kept.
type adviceSeries struct {
	at []time.Time
	n  []int
}

func (s *adviceSeries) add(at time.Time, n int) {
	if k := len(s.at); k > 0 && s.n[k-1] == n && at.Sub(s.at[k-1]) < time.Minute {
		return
	}
	s.at, s.n = append(s.at, at), append(s.n, n)
	cut := 0
	for cut < len(s.at) && at.Sub(s.at[cut]) > adviceSlots*adviceSlot {
		cut++
	}
	s.at, s.n = s.at[cut:], s.n[cut:]
}

// slots is the largest number advised in each half hour of the last
// day ending at now, -1 where nothing was seen.
func (s *adviceSeries) slots(now time.Time) []int {
	out := make([]int, adviceSlots)
	for i := range out {
		out[i] = -1
	}
	start := now.Add(-adviceSlots * adviceSlot)
	for i, at := range s.at {
		if !at.After(start) || at.After(now) {
			continue
		}
		k := min(int(at.Sub(start)/adviceSlot), adviceSlots-1)
		out[k] = max(out[k], s.n[i])
	}
	return out
}

func adviceOf(a coord.Advice, slots []int) adviceView {
	return adviceView{Agents: a.Agents, Ready: a.Ready, Why: a.Why,
		PerHour: fmt.Sprintf("%.2f", a.Rates.TasksPerHour), PerTask: fmt.Sprintf("%.2f", a.Rates.ConflictsPerTask),
		Window: fmt.Sprintf("%.4gh", a.Rates.Hours), Plot: advicePlot(slots)}
}

// advicePlot lays out one bar per half hour seen.
func advicePlot(slots []int) *plot {
	p := plot{W: plotW, H: plotH, Base: plotH - plotBottom, MaxY: plotTop, LeftTick: fmt.Sprintf("%dh ago", len(slots)/2)}
	seen := 0
	for _, v := range slots {
		p.Max = max(p.Max, v)
		if v >= 0 {
			seen++
		}
	}
	if seen == 0 {
		return nil
	}
	p.Label = fmt.Sprintf("agents advised per half hour over the last %d hours: at most %d", len(slots)/2, p.Max)
	slot := plotW / len(slots)
	gap := max(1, slot/5)
	height := p.Base - plotTop
	for i, v := range slots {
		if v < 0 {
			continue
		}
		h := 2
		if p.Max > 0 {
			h = max(2, v*height/p.Max)
		}
		ago := float64(len(slots)-i) / 2
		p.Bars = append(p.Bars, bar{X: i*slot + gap/2, Y: p.Base - h, W: slot - gap, H: h,
			Title: fmt.Sprintf("%d agents advised %.4gh ago", v, ago)})
	}
	return &p
}
