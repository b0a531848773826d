package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// pageHead is what the document's start shows: the title's tail, and, on a
// page that may act, the token its actions send and who they act as.
type pageHead struct {
	Title, Token, User string
}

// head is the head of a page titled title. Every request that gets a
// page carried the token (guard), so handing it back tells it nothing
// new; the page's script needs it for the Authorization header of its
// writes, which take it from nowhere else.
func (s *Server) head(title string) pageHead {
	if !s.actions() {
		return pageHead{Title: title}
	}
	return pageHead{Title: title, Token: s.opt.Token, User: s.opt.User}
}

// servePage renders the page around the current snapshot's panels.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	snap := s.current()
	p := make(map[string]template.HTML, len(snap.panels))
	for id, h := range snap.panels {
		p[id] = h
	}
	var b bytes.Buffer
	if err := tmpl().ExecuteTemplate(&b, "page", struct {
		V    *view
		P    map[string]template.HTML
		Head pageHead
	}{snap.view, p, s.head(snap.view.Where)}); err != nil {
		http.Error(w, "500 cannot render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// serveState is /api/state.json: the current snapshot's state, encoded
// (and gzipped, for a client that accepts it) once per snapshot.
func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	snap := s.current()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Vary", "Accept-Encoding")
	body := snap.stateJSON()
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = snap.stateGzip()
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") {
			return !strings.HasSuffix(strings.ReplaceAll(q, " ", ""), "q=0")
		}
	}
	return false
}

// frame is one server-sent event: the panels that changed, by element id,
// and whether the page is live: Live is false while the backend cannot be
// read (the panels then show the last state read), Why says why.
type frame struct {
	Seq    uint64                   `json:"seq"`
	Sent   int64                    `json:"sent"` // Unix milliseconds, when the server wrote it
	Live   bool                     `json:"live"`
	Why    string                   `json:"why,omitempty"`
	Panels map[string]template.HTML `json:"panels"`
}

// serveEvents streams the panels: all of them at once (a page that
// reconnects is whole again), then those that changed after each change,
// each event saying whether the backend could be read. Between changes a
// ping event every pingEvery lets the page tell a quiet stream from a
// dead one. The client's buffer is one snapshot: a client slower than the
// changes skips to the newest; a write that does not finish within
// writeWait ends the stream (the browser reconnects).
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	c := &client{next: make(chan *snapshot, 1)}
	s.mu.Lock()
	if len(s.clients) >= maxClients {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "5")
		http.Error(w, "503 too many open event streams", http.StatusServiceUnavailable)
		return
	}
	s.clients[c] = struct{}{}
	last := s.cur
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.clients, c)
		s.mu.Unlock()
	}()

	rc.SetReadDeadline(time.Time{}) // the stream outlives the server's ReadTimeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("X-Accel-Buffering", "no")
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(writeWait))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	send := func(snap *snapshot, panels map[string]template.HTML, retry bool) bool {
		var b bytes.Buffer
		if retry {
			b.WriteString("retry: 2000\n")
		}
		fmt.Fprintf(&b, "id: %d\nevent: panels\ndata: ", snap.seq)
		enc := json.NewEncoder(&b) // one line: the HTML's newlines are escaped
		enc.SetEscapeHTML(false)
		f := frame{Seq: snap.seq, Sent: time.Now().UnixMilli(), Live: snap.view.Err == "", Why: snap.view.Err, Panels: panels}
		if enc.Encode(f) != nil {
			return false
		}
		b.WriteString("\n") // Encode ended the data line; a blank line ends the event
		return write(b.Bytes())
	}
	w.WriteHeader(http.StatusOK)
	if !send(last, last.changed(nil), true) {
		return
	}
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case snap := <-c.next:
			if snap.seq <= last.seq {
				continue
			}
			panels := snap.changed(last)
			last = snap
			if len(panels) > 0 && !send(snap, panels, false) {
				return
			}
		case <-ping.C:
			if !write(fmt.Appendf(nil, "event: ping\ndata: {\"sent\":%d}\n\n", time.Now().UnixMilli())) {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// pageSize is how many tasks one /tasks page lists.
const pageSize = 200

// lists are the task lists /tasks pages through.
var lists = []string{"ready", "waiting", "blocked", "review", "claimed", "unclaimed", "done", "all"}

type listRow struct {
	ID, Status, Priority, Title, Extra string
}

// serveTasks is /tasks?list=NAME&page=N: one page of one list, from the
// current snapshot. It is not live (reload for a newer one).
func (s *Server) serveTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("list")
	if name == "" {
		name = "all"
	}
	known := false
	for _, l := range lists {
		known = known || l == name
	}
	if !known {
		http.Error(w, fmt.Sprintf("400 unknown list %q: use one of %s", coord.Clip(name, 40), strings.Join(lists, ", ")), http.StatusBadRequest)
		return
	}
	page := 1
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			http.Error(w, fmt.Sprintf("400 page %q is not a page number (1, 2, …)", coord.Clip(p, 40)), http.StatusBadRequest)
			return
		}
		page = n
	}
	snap := s.current()
	st, v := snap.state, snap.view
	now, _ := coord.ParseTime(st.Now)
	var rows []*coord.Task
	extra := map[*coord.Task]string{}
	head := "owner"
	switch name {
	case "ready":
		rows, head = st.Ready, "needs"
		for _, t := range rows {
			extra[t] = queued(t, "").Needs
		}
	case "waiting":
		head = "why it waits"
		for _, wt := range st.Waiting {
			rows = append(rows, wt.Task)
			extra[wt.Task] = wt.Why
		}
	case "blocked":
		head = "reason · owner · age"
		rows = oldest(byStatus(st.Tasks, coord.Blocked), blockedSince)
		for _, t := range rows {
			b := blockedRow(t, now)
			extra[t] = strings.Trim(b.Reason+" · "+b.Owner+" · "+b.Age, " ·")
		}
	case "review":
		head = "by · waiting"
		rows = oldest(byStatus(st.Tasks, coord.Review), reviewSince)
		for _, t := range rows {
			b := reviewRow(t, now)
			extra[t] = b.Owner + " · " + b.Age
		}
	case "claimed", "unclaimed", "done":
		rows = byStatus(st.Tasks, coord.Status(name))
	default:
		rows = st.Tasks
	}
	if name != "ready" && name != "waiting" && name != "blocked" && name != "review" {
		for _, t := range rows {
			switch {
			case t.ClaimedBy != "" && t.Status == coord.Claimed:
				extra[t] = fmt.Sprintf("%s · %d%%", t.ClaimedBy, t.Progress)
			case t.ClaimedBy != "":
				extra[t] = t.ClaimedBy
			case t.AssignedTo != "":
				extra[t] = "assigned to " + t.AssignedTo
			}
		}
	}
	n := len(rows)
	from := min((page-1)*pageSize, n)
	to := min(from+pageSize, n)
	data := struct {
		V           *view
		Head        pageHead
		Title, List string
		Lists       []string
		Rows        []listRow
		N, From, To int
		Prev, Next  int
		Extra       string
	}{V: v, List: name, Lists: lists, N: n, From: from + 1, To: to, Extra: head}
	if n == 0 {
		data.From = 0
	}
	data.Title = map[string]string{"ready": "Ready to claim", "waiting": "Waiting", "blocked": "Blocked", "review": "In review",
		"claimed": "Claimed", "unclaimed": "Unclaimed", "done": "Done", "all": "Every task"}[name]
	data.Head = pageHead{Title: data.Title} // a list acts on nothing: no token
	for _, t := range rows[from:to] {
		data.Rows = append(data.Rows, listRow{ID: t.ID, Status: string(t.Status), Priority: priority(t), Title: coord.OneLine(t.Title), Extra: extra[t]})
	}
	if page > 1 {
		data.Prev = page - 1
	}
	if to < n {
		data.Next = page + 1
	}
	var b bytes.Buffer
	if err := tmpl().ExecuteTemplate(&b, "tasks", data); err != nil {
		http.Error(w, "500 cannot render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}
