package dashboard

import "fmt"

// plot is the throughput bar chart, drawn by the template as inline SVG
// (no script, no library): one bar per hour, oldest on the left.
type plot struct {
	W, H     int // the viewBox
	Base     int // the y of the baseline
	Bars     []bar
	Max      int
	MaxY     int // the y of the max gridline
	Label    string
	LeftTick string
}

type bar struct {
	X, Y, W, H int
	Title      string
}

const (
	plotW, plotH = 480, 120
	plotTop      = 14 // room for the max label
	plotBottom   = 18 // room for the axis labels
)

// barPlot lays out one bar per count.
func barPlot(perHour []int) plot {
	p := plot{W: plotW, H: plotH, Base: plotH - plotBottom, MaxY: plotTop}
	n := len(perHour)
	p.LeftTick = fmt.Sprintf("%dh ago", n)
	if n == 0 {
		return p
	}
	for _, c := range perHour {
		p.Max = max(p.Max, c)
	}
	done := 0
	for _, c := range perHour {
		done += c
	}
	p.Label = fmt.Sprintf("tasks done per hour over the last %d hours: %d in all, at most %d in one hour", n, done, p.Max)
	slot := plotW / n
	gap := max(1, slot/5)
	height := p.Base - plotTop
	for i, c := range perHour {
		h := 0
		if p.Max > 0 {
			h = c * height / p.Max
		}
		if c > 0 && h < 2 {
			h = 2 // a single task stays visible
		}
		ago := n - i
		title := fmt.Sprintf("%d done between %dh and %dh ago", c, ago, ago-1)
		if ago == 1 {
			title = fmt.Sprintf("%d done in the last hour", c)
		}
		p.Bars = append(p.Bars, bar{X: i*slot + gap/2, Y: p.Base - h, W: slot - gap, H: h, Title: title})
	}
	return p
}
