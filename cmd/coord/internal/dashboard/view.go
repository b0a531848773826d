package dashboard

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// view is one snapshot digested for people: what the templates render.
// Every list is cut to the first rows (Options.Rows) with its full count
// beside it; /tasks pages through the rest.
type view struct {
	Where   string
	Now     string // "12:03:04 UTC"
	NowFull string
	Err     string // the last read failed: the state shown is older
	Counts  []count
	Total   int

	Alerts     []alertRow
	AlertsMore int
	Doctor     string // when doctor last ran, or why not
	AllClear   string // what "no alerts" rests on (when there are none)

	StaleAfter string // "15m": the silence after which an agent is stale
	StaleFrom  string // where that comes from, for people

	Agents []agentRow
	Alive  int
	Pool   bool // some agent is registered (push scheduling): role and inbox columns

	Ready, Waiting, Blocked, Review []taskRow
	ReadyN, WaitingN                int
	BlockedN, ReviewN               int

	Conflicts     []conflictRow
	ConflictsN    int
	ConflictsMore int

	Landing     []landingRow
	LandingN    int
	LandingMore int

	Locks  []lockRow
	Leases []leaseRow
	Log    []logRow

	Thru   thru
	Advice adviceView

	Links links
	// Actions: the page may act (a token and Options.Acts): buttons
	// beside the tasks each action applies to.
	Actions bool
}

type count struct {
	Status string
	N      int
}

type alertRow struct {
	Kind, Word, Text string
	// Tasks are the tasks a stale agent holds (stale_holder), each with
	// the buttons that take it back.
	Tasks []string
}

type agentRow struct {
	ID    string
	Alive bool
	State string // "alive" or "stale"
	Beat  string // "12s ago", "no heartbeat"
	// Silent is how long it has been silent against the silence that
	// makes it stale ("silent 4m of 15m"); SilentS and StaleS the same in
	// seconds (a meter), Heard false when it never beat.
	Silent          string
	SilentS, StaleS int64
	Heard           bool
	// Low and High are where the meter turns amber (half of stale_after:
	// a holder's own keeper fences its task there) and red.
	Low, High int64
	Status    string // the heartbeat's: working, idle, blocked
	Role      string
	Where     string // worktree · branch
	Inbox     int
	InboxIDs  string
	Held      []heldRow
	Attn      bool // stale and still holding work
}

type heldRow struct {
	ID, Title, Status string
	Progress          int
	Since             string // age of the claim
	Reviewing         bool
	Holder            string // the agent whose card shows it
	Notes             string // what a reviewer last said (a rejected task's review notes)
	Conflicts         string // what its work conflicts with ("": nothing found)
}

// conflictRow is one pair of a conflict in flight.
// landingRow is one task of the landing queue.
type landingRow struct {
	Task, Owner string
	State       string // checking, waiting, sent back
	Since       string // how long ago it started being checked, or was finished
	Why         string
}

type conflictRow struct {
	Task, Owner     string
	With, WithOwner string
	Target          bool // With is the target branch
	Files           string
	Since           string // how long ago it was first found
}

type taskRow struct {
	ID, Title, Priority string
	Needs               string // capability / skill level
	Reason              string
	Owner               string
	Age                 string
	Reviewer            string
	Notes               string // what a reviewer last said
	Rejections          int
}

type lockRow struct {
	Path, Holder, Task, Left string
	Expiring                 bool
}

type leaseRow struct {
	Name, Holder, Left string
	Epoch              int64
	Expiring           bool
}

type logRow struct {
	Time, Full, Agent, Msg, Kind string
}

type thru struct {
	LastHour  int
	Done      int
	Median    string
	Hours     int
	Plot      plot
	Empty     bool
	Since     string
	PeakLabel string
	Means     string // what counts as done, and what waits in review
}

// links are the page's links, with the token when the server has one
// (every viewer was let in with it).
type links struct {
	token string
}

// List is the /tasks link for one list.
func (l links) List(name string) string {
	v := url.Values{"list": {name}}
	if l.token != "" {
		v.Set("token", l.token)
	}
	return "tasks?" + v.Encode()
}

// Page is the /tasks link for one page of a list.
func (l links) Page(name string, page int) string {
	v := url.Values{"list": {name}, "page": {fmt.Sprint(page)}}
	if l.token != "" {
		v.Set("token", l.token)
	}
	return "tasks?" + v.Encode()
}

// Task is the link to one task's page.
func (l links) Task(id string) string {
	v := url.Values{"id": {id}}
	if l.token != "" {
		v.Set("token", l.token)
	}
	return "task?" + v.Encode()
}

// Home is the link back to the page.
func (l links) Home() string {
	if l.token == "" {
		return "./"
	}
	return "./?" + url.Values{"token": {l.token}}.Encode()
}

// State is the link to the JSON state.
func (l links) State() string {
	if l.token == "" {
		return "api/state.json"
	}
	return "api/state.json?" + url.Values{"token": {l.token}}.Encode()
}

// digest builds the view of one state. now is the state's clock.
func digest(st *app.State, doc doctorResult, o renderOptions) *view {
	rows := o.rows
	now, err := coord.ParseTime(st.Now)
	if err != nil {
		now = time.Now()
	}
	v := &view{
		Where:      coord.OneLine(st.Where),
		Now:        now.UTC().Format("15:04:05") + " UTC",
		NowFull:    st.Now,
		Err:        o.readErr,
		Links:      links{o.token},
		Actions:    o.actions,
		StaleAfter: span(time.Duration(st.StaleAfter) * time.Second),
		StaleFrom:  "the project's stale_after",
	}
	if o.ownTimeout {
		v.StaleFrom = "this dashboard's --timeout"
	}
	for _, s := range coord.Statuses {
		n := st.Counts[string(s)]
		v.Counts = append(v.Counts, count{string(s), n})
		v.Total += n
	}
	byID := make(map[string]*coord.Task, len(st.Tasks))
	for _, t := range st.Tasks {
		byID[t.ID] = t
	}

	// Alerts: the backend that cannot be read, the snapshot's, then
	// doctor's. Any kind renders (alertWord names the ones it knows).
	alerts := make([]alertRow, 0, len(st.Alerts)+len(doc.problems)+1)
	if o.readErr != "" {
		alerts = append(alerts, alertRow{Kind: "backend", Word: "not live",
			Text: "cannot read the project: " + o.readErr + "; the page shows it as of " + v.Now})
	}
	held := make(map[string][]string, len(st.Agents))
	for _, a := range st.Agents {
		held[a.Agent] = a.Tasks
	}
	for _, a := range st.Alerts {
		r := alertRow{Kind: a.Kind, Word: alertWord(a.Kind), Text: a.Text}
		if a.Kind == "stale_holder" {
			r.Tasks = held[a.Agent]
		}
		alerts = append(alerts, r)
	}
	for _, p := range doc.problems {
		alerts = append(alerts, alertRow{Kind: "doctor", Word: "doctor", Text: coord.OneLine(p.What)})
	}
	if doc.err != "" {
		alerts = append(alerts, alertRow{Kind: "doctor", Word: "doctor", Text: "doctor could not run: " + doc.err})
	}
	v.Alerts, v.AlertsMore = cut(alerts, rows)
	switch {
	case doc.off:
		v.Doctor = "doctor checks off"
		v.AllClear = "No alerts: no stale agent holds work (doctor checks are off)."
	case doc.err != "":
		v.Doctor = "doctor could not run: " + doc.err
	case doc.at.IsZero():
		v.Doctor = "doctor has not run yet"
		v.AllClear = "No alerts: no stale agent holds work; doctor has not run yet."
	default:
		v.Doctor = "doctor checked " + ago(now.Sub(doc.at))
		v.AllClear = "No alerts: no stale agent holds work, and doctor (checked " + ago(now.Sub(doc.at)) + ") found nothing."
	}

	// Agents, by id: a page left open keeps its rows in place.
	agents := append([]coord.AgentView(nil), st.Agents...)
	sort.Slice(agents, func(i, j int) bool { return agents[i].Agent < agents[j].Agent })
	for _, a := range agents {
		r := agentRow{ID: a.Agent, Alive: a.Alive, State: "stale", Status: a.Status, Role: a.Role, Inbox: len(a.Inbox)}
		if a.Alive {
			r.State = "alive"
			v.Alive++
		}
		r.Beat = "no heartbeat"
		r.StaleS, r.Low, r.High = st.StaleAfter, st.StaleAfter/2, st.StaleAfter*9/10
		if a.AgeS != nil {
			r.Beat = "beat " + ago(time.Duration(*a.AgeS)*time.Second)
			r.Heard, r.SilentS = true, *a.AgeS
			r.Silent = "silent " + span(time.Duration(*a.AgeS)*time.Second) + " of " + v.StaleAfter
		}
		r.Where = strings.Trim(coord.OneLine(a.Worktree)+" · "+coord.OneLine(a.Branch), " ·")
		r.InboxIDs = strings.Join(a.Inbox, ", ")
		v.Pool = v.Pool || a.Role != ""
		for _, id := range a.Tasks {
			h := heldRow{ID: id, Holder: a.Agent}
			if t := byID[id]; t != nil {
				h.Title, h.Status, h.Progress = coord.OneLine(t.Title), string(t.Status), t.Progress
				h.Notes = coord.OneLine(t.ReviewNotes)
				if at, err := coord.ParseTime(t.ClaimedAt); err == nil {
					h.Since = ago(now.Sub(at))
				}
				var with []string
				for _, c := range t.Conflicts {
					with = append(with, c.With+": "+coord.FilesPhrase(c.Files, 3))
				}
				h.Conflicts = coord.OneLine(strings.Join(with, "; "))
			}
			r.Held = append(r.Held, h)
		}
		for _, id := range a.Reviewing {
			h := heldRow{ID: id, Status: "review", Reviewing: true}
			if t := byID[id]; t != nil {
				h.Title = coord.OneLine(t.Title)
			}
			r.Held = append(r.Held, h)
		}
		r.Attn = !a.Alive && (len(a.Tasks) > 0 || len(a.Reviewing) > 0 || len(a.Inbox) > 0)
		v.Agents = append(v.Agents, r)
	}

	// The queue: ready in claim order, then why the next ones wait.
	v.ReadyN, v.WaitingN = len(st.Ready), len(st.Waiting)
	for _, t := range first(st.Ready, rows) {
		v.Ready = append(v.Ready, queued(t, ""))
	}
	for _, w := range first(st.Waiting, rows) {
		v.Waiting = append(v.Waiting, queued(w.Task, w.Why))
	}

	// Blocked and in review, oldest first: what has waited longest.
	blocked, review := byStatus(st.Tasks, coord.Blocked), byStatus(st.Tasks, coord.Review)
	v.BlockedN, v.ReviewN = len(blocked), len(review)
	for _, t := range first(oldest(blocked, blockedSince), rows) {
		v.Blocked = append(v.Blocked, blockedRow(t, now))
	}
	for _, t := range first(oldest(review, reviewSince), rows) {
		v.Review = append(v.Review, reviewRow(t, now))
	}

	// Conflicts in flight, a pair once, in registry order.
	v.ConflictsN = len(st.Conflicts)
	v.ConflictsMore = max(0, v.ConflictsN-rows)
	for _, c := range first(st.Conflicts, rows) {
		r := conflictRow{Task: c.Task, With: c.With, Files: coord.OneLine(coord.FilesPhrase(c.Files, 5))}
		if t := byID[c.Task]; t != nil {
			r.Owner = t.ClaimedBy
			for _, x := range t.Conflicts {
				if x.With == c.With {
					if at, err := coord.ParseTime(x.Since); err == nil {
						r.Since = ago(now.Sub(at))
					}
				}
			}
		}
		if o := byID[c.With]; o != nil {
			r.WithOwner = o.ClaimedBy
		} else {
			r.Target = true
		}
		v.Conflicts = append(v.Conflicts, r)
	}

	// The landing queue: what the lander checks, what waits, what went
	// back and why.
	v.LandingN = len(st.Landing)
	v.LandingMore = max(0, v.LandingN-rows)
	for _, l := range first(st.Landing, rows) {
		r := landingRow{Task: l.Task, Owner: l.Owner, State: l.State, Why: coord.OneLine(l.Why)}
		if l.State == coord.LandSentBack {
			r.State = "sent back"
		}
		if at, err := coord.ParseTime(l.Since); err == nil {
			r.Since = ago(now.Sub(at))
		}
		v.Landing = append(v.Landing, r)
	}

	for _, l := range st.Locks {
		r := lockRow{Path: coord.OneLine(l.Path), Holder: l.Holder, Task: l.TaskID, Left: "until released"}
		if l.Expires != "" {
			if at, err := coord.ParseTime(l.Expires); err == nil {
				r.Left, r.Expiring = left(at.Sub(now))
			}
		}
		v.Locks = append(v.Locks, r)
	}
	for _, l := range st.Leases {
		r := leaseRow{Name: coord.OneLine(l.Name), Holder: l.Holder, Epoch: l.Epoch}
		r.Left, r.Expiring = left(l.Expires().Sub(now))
		v.Leases = append(v.Leases, r)
	}

	// The log, newest first.
	for i := len(st.Log) - 1; i >= 0; i-- {
		e, ok := coord.ParseLogLine(st.Log[i])
		if !ok {
			continue
		}
		r := logRow{Full: e.Timestamp, Agent: e.AgentID, Msg: e.Message, Kind: logKind(e.EventType)}
		r.Time = e.Timestamp
		if at, err := coord.ParseTime(e.Timestamp); err == nil {
			r.Time = at.UTC().Format("15:04:05")
			if now.Sub(at) > 20*time.Hour {
				r.Time = at.UTC().Format("Jan 2 15:04")
			}
		}
		v.Log = append(v.Log, r)
	}

	th := st.Throughput
	v.Thru = thru{Done: th.Done, Hours: len(th.PerHour), Median: "–", Empty: th.Done == 0}
	if n := len(th.PerHour); n > 0 {
		v.Thru.LastHour = th.PerHour[n-1]
	}
	if th.MedianClaimToDone != nil {
		v.Thru.Median = span(time.Duration(*th.MedianClaimToDone) * time.Second)
	}
	v.Thru.Plot = barPlot(th.PerHour)
	v.Advice = adviceOf(st.Advice, o.advised)
	if st.ReviewGate {
		v.Thru.Means = "Done means approved by a reviewer (the review gate is on), counted when its agent released it"
	} else {
		v.Thru.Means = "Done means released by its agent (the review gate is off)"
	}
	switch {
	case th.Review == 1:
		v.Thru.Means += "; 1 task released in this window waits in review and is not counted."
	case th.Review > 1:
		v.Thru.Means += fmt.Sprintf("; %d tasks released in this window wait in review and are not counted.", th.Review)
	default:
		v.Thru.Means += "."
	}
	return v
}

func alertWord(kind string) string {
	switch kind {
	case "stale_holder":
		return "stale holder"
	case "ownerless_blocked":
		return "no owner"
	case "no_live_agent":
		return "no agent"
	case "no_reviewer":
		return "no reviewer"
	}
	return strings.ReplaceAll(kind, "_", " ")
}

func logKind(t string) string {
	switch t {
	case "task_claimed":
		return "claim"
	case "task_completed", "task_approved":
		return "done"
	case "task_blocked", "lock_stale", "warning", "error":
		return "warn"
	case "task_review":
		return "review"
	case "task_released": // a supervisor's requeue
		return "warn"
	}
	return "other"
}

func queued(t *coord.Task, why string) taskRow {
	r := taskRow{ID: t.ID, Title: coord.OneLine(t.Title), Priority: priority(t), Reason: why}
	var needs []string
	if t.Capability != "" {
		needs = append(needs, coord.OneLine(t.Capability))
	}
	if t.SkillLevel != "" {
		needs = append(needs, string(t.SkillLevel))
	}
	r.Needs = strings.Join(needs, " · ")
	return r
}

func blockedRow(t *coord.Task, now time.Time) taskRow {
	r := taskRow{ID: t.ID, Title: coord.OneLine(t.Title), Priority: priority(t), Reason: coord.OneLine(t.BlockedReason), Owner: t.ClaimedBy, Age: "–"}
	if at, ok := blockedSince(t); ok {
		r.Age = ago(now.Sub(at))
	}
	return r
}

func reviewRow(t *coord.Task, now time.Time) taskRow {
	r := taskRow{ID: t.ID, Title: coord.OneLine(t.Title), Priority: priority(t), Owner: t.ClaimedBy, Reviewer: t.AssignedTo, Age: "–",
		Notes: coord.OneLine(t.ReviewNotes), Rejections: t.Rejections}
	if at, ok := reviewSince(t); ok {
		r.Age = ago(now.Sub(at))
	}
	if t.AssignedTo != "" && t.ReviewStartedAt == "" {
		r.Reviewer += " (not started)"
	}
	return r
}

func priority(t *coord.Task) string {
	if t.Priority == "" {
		return string(coord.Medium)
	}
	return string(t.Priority)
}

func byStatus(tasks []*coord.Task, s coord.Status) []*coord.Task {
	var out []*coord.Task
	for _, t := range tasks {
		if t.Status == s {
			out = append(out, t)
		}
	}
	return out
}

func blockedSince(t *coord.Task) (time.Time, bool) {
	at, err := coord.ParseTime(t.BlockedAt)
	return at, err == nil
}

func reviewSince(t *coord.Task) (time.Time, bool) {
	at, err := coord.ParseTime(t.CompletedAt)
	return at, err == nil
}

// oldest orders tasks by the instant since returns, oldest first; tasks
// without one come last, in registry order.
func oldest(ts []*coord.Task, since func(*coord.Task) (time.Time, bool)) []*coord.Task {
	type keyed struct {
		t  *coord.Task
		at time.Time
		ok bool
	}
	ks := make([]keyed, len(ts))
	for i, t := range ts {
		at, ok := since(t)
		ks[i] = keyed{t, at, ok}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		if ks[i].ok != ks[j].ok {
			return ks[i].ok
		}
		return ks[i].ok && ks[i].at.Before(ks[j].at)
	})
	out := make([]*coord.Task, len(ks))
	for i, k := range ks {
		out[i] = k.t
	}
	return out
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func cut[T any](s []T, n int) ([]T, int) {
	if len(s) > n {
		return s[:n], len(s) - n
	}
	return s, 0
}

// ago renders an age for people: "12s ago", "4m ago", "2h 05m ago".
func ago(d time.Duration) string {
	if d < time.Second {
		return "just now"
	}
	return span(d) + " ago"
}

// span renders a duration coarsely: 12s, 4m, 2h 05m, 3d 4h.
func span(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd %dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// left renders the time left before an expiry; expiring is true under a
// minute (and when expired: it is about to be dropped).
func left(d time.Duration) (string, bool) {
	if d <= 0 {
		return "expired", true
	}
	return span(d) + " left", d < time.Minute
}
