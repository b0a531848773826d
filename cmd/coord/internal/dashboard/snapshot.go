package dashboard

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"html/template"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

//go:embed assets
var assets embed.FS

// tmpl is the page's templates, parsed on first use: every coord process
// links the dashboard, and only 'coord dashboard' renders it.
var tmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").ParseFS(assets, "assets/*.html"))
})

// panelIDs are the page's live parts, in page order: each is one
// template and one element id, swapped whole when it changes.
var panelIDs = []string{"summary", "alerts", "agents", "thru", "advice", "queue", "blocked", "review", "conflicts", "landing", "locks", "log"}

// snapshot is the state after one change, digested and rendered once and
// shared by every client: the page and every event are cut from it.
type snapshot struct {
	seq    uint64
	state  *app.State
	view   *view
	doctor doctorResult
	panels map[string]template.HTML // by id (without the "p-" prefix)

	taskJSON func(*coord.Task) []byte

	jsonOnce sync.Once
	json     []byte
	gzOnce   sync.Once
	gz       []byte
}

// doctorResult is the last doctor check.
type doctorResult struct {
	at       time.Time
	problems []coord.Problem
	err      string
	off      bool
}

// renderOptions are what a render needs besides the state.
type renderOptions struct {
	rows       int
	token      string
	actions    bool   // the page may act: buttons beside the tasks
	readErr    string // why the backend cannot be read now ("" when it can)
	ownTimeout bool   // stale after the dashboard's --timeout, not stale_after
	advised    []int  // the advised number per half hour (adviceSeries.slots)
}

// render builds the view and the panels of a state. While the backend
// cannot be read, doctor's last result is not shown: the check cannot
// run, and what it found before may no longer hold.
func render(seq uint64, st *app.State, doc doctorResult, o renderOptions, taskJSON func(*coord.Task) []byte) (*snapshot, error) {
	if o.readErr != "" && !doc.off {
		doc = doctorResult{at: doc.at, err: errUnreadable}
	}
	s := &snapshot{seq: seq, state: st, doctor: doc, taskJSON: taskJSON, panels: make(map[string]template.HTML, len(panelIDs))}
	s.view = digest(st, doc, o)
	var b strings.Builder
	for _, id := range panelIDs {
		b.Reset()
		if err := tmpl().ExecuteTemplate(&b, "p-"+id, s.view); err != nil {
			return nil, err
		}
		s.panels[id] = template.HTML(strings.TrimSpace(b.String()))
	}
	return s, nil
}

// changed lists the panels of s that differ from those of old (all of
// them when old is nil), keyed by element id.
func (s *snapshot) changed(old *snapshot) map[string]template.HTML {
	out := map[string]template.HTML{}
	for _, id := range panelIDs {
		if old == nil || old.panels[id] != s.panels[id] {
			out["p-"+id] = s.panels[id]
		}
	}
	return out
}

// same reports whether s shows exactly what old shows.
func (s *snapshot) same(old *snapshot) bool {
	return old != nil && len(s.changed(old)) == 0
}

// stateJSON is /api/state.json, encoded on first use: every member in
// the shape of the matching --json output (agents: `agents --json`,
// tasks: `ls --json`, locks: `locks --json`, leases: `lease list
// --json`, log: `log --json`), and the overview the page shows.
func (s *snapshot) stateJSON() []byte {
	s.jsonOnce.Do(func() { s.json = s.encode() })
	return s.json
}

// stateGzip is stateJSON gzipped, once.
func (s *snapshot) stateGzip() []byte {
	s.gzOnce.Do(func() {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		w.Write(s.stateJSON())
		w.Close()
		s.gz = b.Bytes()
	})
	return s.gz
}

type waitingJSON struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

type queueJSON struct {
	Ready   []string      `json:"ready"`
	Waiting []waitingJSON `json:"waiting"`
}

type doctorJSON struct {
	CheckedAt *string         `json:"checked_at"`
	Problems  []coord.Problem `json:"problems"`
	Error     string          `json:"error,omitempty"`
}

func (s *snapshot) encode() []byte {
	st := s.state
	var b bytes.Buffer
	b.Grow(256 * (len(st.Tasks) + 16))
	member := func(name string, v any) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		enc, _ := json.Marshal(name)
		b.Write(enc)
		b.WriteByte(':')
		enc, err := json.Marshal(v)
		if err != nil {
			enc = []byte("null")
		}
		b.Write(enc)
	}
	b.WriteByte('{')
	member("where", st.Where)
	member("now", st.Now)
	member("counts", st.Counts)
	member("agents", st.Agents)
	b.WriteString(`,"tasks":[`)
	for i, t := range st.Tasks {
		if i > 0 {
			b.WriteByte(',')
		}
		line := s.taskJSON(t)
		if bytes.IndexByte(line, '\n') >= 0 {
			var c bytes.Buffer
			if json.Compact(&c, line) == nil {
				line = c.Bytes()
			}
		}
		b.Write(line)
	}
	b.WriteByte(']')
	member("locks", st.Locks)
	member("leases", st.Leases)
	member("conflicts", st.Conflicts)
	member("landing", st.Landing)
	log := make([]coord.LogEntry, 0, len(st.Log))
	for _, l := range st.Log {
		if e, ok := coord.ParseLogLine(l); ok {
			log = append(log, e)
		}
	}
	member("log", log)
	q := queueJSON{Ready: make([]string, len(st.Ready)), Waiting: make([]waitingJSON, len(st.Waiting))}
	for i, t := range st.Ready {
		q.Ready[i] = t.ID
	}
	for i, w := range st.Waiting {
		q.Waiting[i] = waitingJSON{w.Task.ID, w.Why}
	}
	member("queue", q)
	member("throughput", st.Throughput)
	member("advice", st.Advice)
	member("stale_after_seconds", st.StaleAfter)
	member("review_gate", st.ReviewGate)
	var alerts []coord.Alert
	if s.view.Err != "" {
		alerts = append(alerts, coord.Alert{Kind: "backend", Text: s.view.Err})
	}
	alerts = append(alerts, st.Alerts...)
	for _, p := range s.doctor.problems {
		alerts = append(alerts, coord.Alert{Kind: "doctor", Text: coord.OneLine(p.What)})
	}
	if alerts == nil {
		alerts = []coord.Alert{}
	}
	member("alerts", alerts)
	d := doctorJSON{Problems: append([]coord.Problem{}, s.doctor.problems...), Error: s.doctor.err}
	if !s.doctor.at.IsZero() {
		at := coord.FormatTime(s.doctor.at)
		d.CheckedAt = &at
	}
	member("doctor", d)
	member("live", s.view.Err == "")
	if s.view.Err != "" {
		member("error", s.view.Err)
	}
	b.WriteString("}\n")
	return b.Bytes()
}
