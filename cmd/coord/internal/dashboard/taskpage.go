package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// /task?id=ID: one task opened, for a person deciding about it: why it
// waits, what a reviewer last said, its fields (those of later features
// as the registry holds them: predicted files, branch, …), the receipts
// of its checks, the log lines that name it, and, on a page that may act,
// the actions that apply to it. It is not live (reload for a newer one;
// an action reloads it).

// taskLogLines is how far back (in log lines) the task page looks for
// the lines that name the task; taskLogShown how many of them it shows,
// newest first.
const (
	taskLogLines = 5000
	taskLogShown = 200
)

type taskPage struct {
	ID, Title, Status  string
	Why, BlockedReason string
	Notes, Description string
	Rejections         int
	Fields             []field
	Acts               []actButton
	Receipts           []receiptRow
	Log                []logRow
	LogNote            string
}

type field struct{ Name, Value, Link string }

type actButton struct {
	Act, Label, Holder string
	Held               bool
}

type receiptRow struct {
	Cmd, Exit, Detail, Tail string
	Passed                  bool
}

// fieldsShown are the registry's members the page shows in its own way
// (the rest are listed as they are).
var fieldsShown = map[string]bool{"id": true, "title": true, "description": true, "status": true, "priority": true, "blocked_reason": true,
	"review_notes": true, "rejections": true, "receipts": true, "deps": true, "dirty": true}

func (s *Server) serveTask(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if err := coord.ValidTaskID(id); err != nil {
		http.Error(w, "400 "+coord.OneLine(err.Error()), http.StatusBadRequest)
		return
	}
	snap := s.current()
	st, v := snap.state, snap.view
	var t *coord.Task
	byID := make(map[string]*coord.Task, len(st.Tasks))
	for _, x := range st.Tasks {
		byID[x.ID] = x
		if x.ID == id {
			t = x
		}
	}
	if t == nil {
		http.Error(w, fmt.Sprintf("404 no task %q in the registry (an archived task is not shown)", id), http.StatusNotFound)
		return
	}
	p := taskPage{ID: t.ID, Title: coord.OneLine(t.Title), Status: string(t.Status), BlockedReason: coord.OneLine(t.BlockedReason),
		Notes: coord.OneLine(t.ReviewNotes), Rejections: t.Rejections, Description: t.Description}
	for _, wt := range st.Waiting {
		if wt.Task == t {
			p.Why = wt.Why
		}
	}
	add := func(name, value, link string) {
		if value != "" {
			p.Fields = append(p.Fields, field{name, value, link})
		}
	}
	add("priority", priority(t), "")
	for _, d := range t.Deps {
		status := "not in the registry"
		if dt := byID[d]; dt != nil {
			status = string(dt.Status)
		}
		add("depends on", d+" ("+status+")", v.Links.Task(d))
	}
	// The rest as the registry holds it: coord's fields and those of
	// later features alike, in the registry's order.
	raw := s.opt.TaskJSON(t)
	for _, m := range members(raw) {
		empty := m.value == "null" || m.value == "" || m.value == "[]" || m.value == "{}" ||
			m.value == "0" && (m.name == "progress" || m.name == "epoch")
		if fieldsShown[m.name] || empty {
			continue
		}
		add(strings.ReplaceAll(m.name, "_", " "), m.value, "")
	}
	p.Receipts = receipts(raw)

	switch {
	case t.Status == coord.Claimed || t.Status == coord.Blocked:
		p.Acts = append(p.Acts, actButton{Act: "requeue", Label: "requeue"}, actButton{Act: "assign", Label: "reassign", Held: true})
		if t.Status == coord.Blocked {
			p.Acts = append(p.Acts, actButton{Act: "unblock", Label: "unblock", Holder: t.ClaimedBy})
		}
	case t.Status == coord.Unclaimed:
		p.Acts = append(p.Acts, actButton{Act: "assign", Label: "assign"})
	case t.Status == coord.Review:
		p.Acts = append(p.Acts, actButton{Act: "approve", Label: "approve"}, actButton{Act: "reject", Label: "reject"},
			actButton{Act: "assign", Label: "route to a reviewer"})
	}

	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	var lines []string
	_, err := s.opt.Reader.LogRead(ctx, taskLogLines, func(l string) error {
		if e, ok := coord.ParseLogLine(l); ok && coord.NamesTask(e.Message, id) {
			lines = append(lines, l)
		}
		return nil
	})
	p.LogNote = fmt.Sprintf("The lines that name it, newest first, from the last %d lines of the log (UTC).", taskLogLines)
	if err != nil {
		p.LogNote = "the log could not be read: " + coord.OneLine(err.Error())
	}
	for i := len(lines) - 1; i >= 0 && len(p.Log) < taskLogShown; i-- {
		e, _ := coord.ParseLogLine(lines[i])
		row := logRow{Time: e.Timestamp, Full: e.Timestamp, Agent: e.AgentID, Msg: e.Message, Kind: logKind(e.EventType)}
		if at, err := coord.ParseTime(e.Timestamp); err == nil {
			row.Time = at.UTC().Format("Jan 2 15:04:05")
		}
		p.Log = append(p.Log, row)
	}

	agents := make([]string, 0, len(st.Agents))
	for _, a := range st.Agents {
		agents = append(agents, a.Agent)
	}
	sort.Strings(agents)
	var b bytes.Buffer
	if err := tmpl().ExecuteTemplate(&b, "task", struct {
		V      *view
		Head   pageHead
		T      taskPage
		Agents []string
	}{v, s.head("task " + t.ID), p, agents}); err != nil {
		http.Error(w, "500 cannot render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

type member struct{ name, value string }

// members lists a JSON object's members in order, each value as compact
// JSON text (a string without its quotes), sanitised for one line.
func members(raw []byte) []member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		text := string(v)
		var str string
		if json.Unmarshal(v, &str) == nil {
			text = str
		} else {
			var c bytes.Buffer
			if json.Compact(&c, v) == nil {
				text = c.String()
			}
		}
		out = append(out, member{name, coord.Clip(coord.OneLine(text), 400)})
	}
	return out
}

// receipts reads the task's receipts (docs/GIT.md, "receipts" as the
// registry holds them; none before that feature), newest first.
func receipts(raw []byte) []receiptRow {
	var doc struct {
		Receipts []map[string]any `json:"receipts"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	var out []receiptRow
	for i := len(doc.Receipts) - 1; i >= 0; i-- {
		rc := doc.Receipts[i]
		str := func(k string) string {
			switch x := rc[k].(type) {
			case string:
				return coord.OneLine(x)
			case float64:
				return strconv.FormatFloat(x, 'f', -1, 64)
			case bool:
				return strconv.FormatBool(x)
			}
			return ""
		}
		row := receiptRow{Cmd: str("cmd"), Exit: str("exit"), Passed: str("exit") == "0"}
		var detail []string
		for _, k := range []string{"tree", "seconds", "at"} {
			if x := str(k); x != "" {
				detail = append(detail, k+" "+x)
			}
		}
		row.Detail = strings.Join(detail, " · ")
		if tail, ok := rc["tail"].(string); ok {
			lines := strings.Split(coord.Clip(tail, 4000), "\n")
			for i, l := range lines {
				lines[i] = coord.OneLine(l)
			}
			row.Tail = strings.Join(lines, "\n")
		}
		out = append(out, row)
	}
	return out
}
