package rotd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/go-json-experiment/json/jsontext"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// ParseTasks maps ROTD's planner output (tasks.jsonl, in its own dialect)
// onto seed lines by these rules (also in docs/FORMATS.md):
//
//	status   pending -> unclaimed; complete -> done (completed_at from
//	         "completed", else now); blocked -> blocked ("blocked in ROTD");
//	         in_progress -> blocked without owner, reason "in progress in
//	         ROTD when imported" (nobody holds it here; any agent may
//	         unblock it, which makes it claimable)
//	priority urgent/high/medium/low as they are; deferred -> low; absent ->
//	         medium
//	depends_on each entry names a task (when one has that id, in the batch
//	         or the registry) or else a phase: the task depends on every
//	         task of that phase (a task's phase is its "phase" field, else
//	         the part of its id before the first dot). A phase with no tasks
//	         anywhere cannot be waited on by id, so a pending task naming
//	         one is imported blocked, its reason naming the phase.
//
// ROTD's own values are kept beside (rotd_status, rotd_priority) and every
// other field (phase, tests, created, priority_score, …) is kept as is,
// but for the fields coord owns (coord.OwnedFields: a claim, an epoch, a
// review …), which refuse the line: the mapping alone sets coord's state.
// Anything else (another status or priority, an id coord cannot hold) is
// refused with the line number, and nothing is
// written. registryPhase gives the ids of registry tasks in a phase.
func ParseTasks(file string, r io.Reader, registryPhase func(phase string) []string, registryHas func(id string) bool, now time.Time) ([]coord.SeedLine, error) {
	type line struct {
		n       int
		members []format.Member
		id      string
		phase   string
		obj     map[string]json.RawMessage
	}
	var lines []line
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if len(raw) > format.MaxSeedLine {
			return nil, coord.Errorf(coord.CodeUsage, "%s: line %d: longer than %d bytes", file, n, format.MaxSeedLine)
		}
		if t := bytes.TrimSpace(raw); len(t) > 0 {
			where := fmt.Sprintf("%s: line %d", file, n)
			if cerr := format.CheckStrict(where, t); cerr != nil {
				return nil, coord.Errorf(coord.CodeUsage, "%v", cerr)
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(t, &obj) != nil {
				return nil, coord.Errorf(coord.CodeUsage, "%s: a ROTD task line must be one JSON object", where)
			}
			var id, phase string
			json.Unmarshal(obj["id"], &id)
			json.Unmarshal(obj["phase"], &phase)
			if phase == "" {
				phase, _, _ = strings.Cut(id, ".")
			}
			lines = append(lines, line{n: n, members: format.Members(t), id: id, phase: phase, obj: obj})
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readError(file, err)
		}
	}
	batchPhase := map[string][]string{}
	batchIDs := map[string]bool{}
	for _, l := range lines {
		batchPhase[l.phase] = append(batchPhase[l.phase], l.id)
		batchIDs[l.id] = true
	}
	var out []coord.SeedLine
	for _, l := range lines {
		where := fmt.Sprintf("%s: line %d", file, l.n)
		fail := func(format string, args ...any) ([]coord.SeedLine, error) {
			return nil, coord.Errorf(coord.CodeUsage, "%s: task %q: %s", where, l.id, fmt.Sprintf(format, args...))
		}
		// What coord records about a task's life comes from the mapping
		// below, never from the line: no import claims a task or moves
		// the epoch counter.
		for _, m := range l.members {
			if coord.IsOwnedField(m.Name) {
				e := coord.OwnedFieldError(m.Name)
				e.Msg = where + ": " + e.Msg
				return nil, e
			}
		}
		var status, priority, completed string
		json.Unmarshal(l.obj["status"], &status)
		json.Unmarshal(l.obj["priority"], &priority)
		json.Unmarshal(l.obj["completed"], &completed)
		set := map[string]any{}
		switch status {
		case "pending":
			set["status"] = "unclaimed"
		case "complete":
			set["status"] = "done"
			set["progress"] = 100
			if _, err := coord.ParseTime(completed); err == nil {
				set["completed_at"] = completed
			} else {
				set["completed_at"] = coord.FormatTime(now)
			}
		case "blocked":
			set["status"], set["blocked_reason"] = "blocked", "blocked in ROTD"
		case "in_progress":
			set["status"], set["blocked_reason"] = "blocked", "in progress in ROTD when imported; unblock to make it claimable"
		default:
			return fail("status %q is not one of pending, in_progress, complete, blocked", status)
		}
		switch priority {
		case "urgent", "high", "medium", "low":
		case "":
			set["priority"] = "medium"
		case "deferred":
			set["priority"] = "low"
		default:
			return fail("priority %q is not one of urgent, high, medium, low, deferred", priority)
		}
		if set["status"] != status {
			set["rotd_status"] = status
		}
		if p, ok := set["priority"]; ok && priority != "" && p != priority {
			set["rotd_priority"] = priority
		}
		var phases []string
		if raw, ok := l.obj["depends_on"]; ok && json.Unmarshal(raw, &phases) != nil {
			return fail(`"depends_on" must be a list of phase names`)
		}
		if len(phases) > 0 {
			deps := map[string]bool{}
			var missing []string
			for _, p := range phases {
				var ids []string
				if batchIDs[p] || registryHas(p) {
					ids = []string{p} // ROTD sometimes names a task, not a phase
				} else {
					ids = append(append([]string(nil), batchPhase[p]...), registryPhase(p)...)
				}
				if len(ids) == 0 {
					missing = append(missing, p)
				}
				for _, id := range ids {
					if id != l.id {
						deps[id] = true
					}
				}
			}
			var existing []string
			json.Unmarshal(l.obj["deps"], &existing)
			for _, d := range existing {
				deps[d] = true
			}
			list := make([]string, 0, len(deps))
			for d := range deps {
				list = append(list, d)
			}
			sort.Strings(list)
			set["deps"] = list
			if len(missing) > 0 && set["status"] == "unclaimed" {
				set["status"] = "blocked"
				set["rotd_status"] = status
				set["blocked_reason"] = "waits for ROTD phase " + strings.Join(missing, ", ") + ", which has no tasks here; unblock when it is done"
			}
		}
		// Rebuild the object: members in their order with mapped values,
		// then the added ones.
		var b bytes.Buffer
		b.WriteByte('{')
		first := true
		put := func(name string, raw []byte) {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.Write(jsonQuote(name))
			b.WriteByte(':')
			b.Write(raw)
		}
		for _, m := range l.members {
			if v, ok := set[m.Name]; ok {
				enc, _ := json.Marshal(v)
				put(m.Name, enc)
				delete(set, m.Name)
				continue
			}
			put(m.Name, m.Raw)
		}
		names := make([]string, 0, len(set))
		for k := range set {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			enc, _ := json.Marshal(set[k])
			put(k, enc)
		}
		b.WriteByte('}')
		t, err := format.ParseTaskLine(where, b.Bytes())
		if err != nil {
			return nil, err
		}
		out = append(out, coord.SeedLine{Line: l.n, Task: t})
	}
	return out, nil
}

// TaskPhase is a registry task's ROTD phase: its "phase" member, else the
// part of its id before the first dot.
func TaskPhase(t *coord.Task) string {
	for _, m := range format.Members(t.Raw) {
		if m.Name == "phase" {
			var p string
			if json.Unmarshal(m.Raw, &p) == nil && p != "" {
				return p
			}
		}
	}
	p, _, _ := strings.Cut(t.ID, ".")
	return p
}

// jsonQuote is s as a JSON string (invalid UTF-8 becomes U+FFFD).
func jsonQuote(s string) []byte {
	out, _ := jsontext.AppendQuote(nil, s)
	return out
}

// readError is a failure of the reader: a coded error (the caller's
// reader ended by a signal: interrupted) as it is, anything else I/O.
func readError(file string, err error) error {
	var ce *coord.Error
	if errors.As(err, &ce) {
		return err
	}
	return coord.Wrap(coord.CodeIO, err, "cannot read %s", file)
}
