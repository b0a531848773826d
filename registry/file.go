package registry

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/rotd/coord/coord"
)

// FormatVersion is the registry format this coord writes and reads.
const FormatVersion = 1

// member is one raw object member.
type member struct {
	name string
	raw  []byte
}

// File is a parsed registry: the tasks (decoded fields plus their raw
// bytes) and the other top-level members, in file order.
type File struct {
	Tasks     []*coord.Task
	LastEpoch int64 // top-level "last_epoch": the highest epoch ever issued

	top      []member // top-level members except tasks/last_epoch
	tasksAt  int      // index in top before which "tasks" was found
	hasEpoch bool
}

// known task fields in the order a fresh task is written.
var taskFieldOrder = []string{
	"id", "title", "status", "priority", "deps", "capability", "skill_level",
	"files", "conflict_group", "claimed_by", "claimed_at", "completed_at",
	"epoch", "progress", "blocked_reason", "reviewer_id", "reject_reason",
}

// Parse reads a registry strictly. file names it in errors.
func Parse(file string, data []byte) (*File, error) {
	d, err := newDecoder(file, data)
	if err != nil {
		return nil, err
	}
	f := &File{tasksAt: -1}
	if err := d.expect('{', "the registry"); err != nil {
		return nil, err
	}
	var keys keySet
	sawTasks := false
	for {
		name, ok, err := d.name()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if c := keys.add(name); c != "" {
			return nil, d.errf("top-level keys %q and %q differ only in case", c, name)
		}
		switch name {
		case "tasks":
			sawTasks = true
			f.tasksAt = len(f.top)
			if err := f.parseTasks(d); err != nil {
				return nil, err
			}
		case "version":
			v, err := d.integer(`"version"`, false)
			if err != nil {
				return nil, err
			}
			if v != FormatVersion {
				return nil, d.errf(`"version" is %d; this coord reads version %d (upgrade coord)`, v, FormatVersion)
			}
			f.top = append(f.top, member{name, []byte(strconv.FormatInt(v, 10))})
		case "last_epoch":
			if f.LastEpoch, err = d.integer(`"last_epoch"`, false); err != nil {
				return nil, err
			}
			f.hasEpoch = true
		default:
			raw, err := d.raw()
			if err != nil {
				return nil, err
			}
			f.top = append(f.top, member{name, raw})
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	if !sawTasks {
		return nil, d.errf(`has no "tasks" array`)
	}
	return f, nil
}

func (f *File) parseTasks(d *decoder) error {
	if d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return d.fail(err)
	}
	if err := d.expect('[', `"tasks"`); err != nil {
		return err
	}
	seen := make(map[string]int)
	var keys keySet
	for d.PeekKind() != ']' {
		if d.PeekKind() != '{' {
			return d.errf("task %d must be an object", len(f.Tasks)+1)
		}
		start := d.InputOffset()
		t, err := parseTask(d, &keys, len(f.Tasks)+1)
		if err != nil {
			return err
		}
		end := d.InputOffset()
		raw := bytes.TrimLeft(d.data[start:end], " \t\r\n,")
		if prev, dup := seen[t.ID]; dup {
			return d.errf("task id %q appears twice (tasks %d and %d)", t.ID, prev, len(f.Tasks)+1)
		}
		seen[t.ID] = len(f.Tasks) + 1
		t.Raw = raw
		f.Tasks = append(f.Tasks, t)
	}
	_, err := d.ReadToken()
	return d.fail(err)
}

// parseTask decodes one task object's known fields, skipping (but
// validating) the rest.
func parseTask(d *decoder, keys *keySet, n int) (*coord.Task, error) {
	if _, err := d.ReadToken(); err != nil {
		return nil, d.fail(err)
	}
	keys.reset()
	t := &coord.Task{}
	hasID, hasStatus := false, false
	for {
		name, ok, err := d.name()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if c := keys.add(name); c != "" {
			return nil, d.errf("task %d: keys %q and %q differ only in case", n, c, name)
		}
		if err := decodeTaskField(d, t, name, n); err != nil {
			return nil, err
		}
		hasID = hasID || name == "id"
		hasStatus = hasStatus || name == "status"
	}
	if !hasID {
		return nil, d.errf(`task %d has no "id"`, n)
	}
	if !hasStatus {
		t.Status = coord.Unclaimed
	}
	if err := t.Check(); err != nil {
		return nil, d.errf("%v", err)
	}
	return t, nil
}

func decodeTaskField(d *decoder, t *coord.Task, name string, n int) error {
	// Labels are built only on error: this runs for every field of
	// every task on every read.
	what := func() string { return name }
	var err error
	var s string
	var i int64
	switch name {
	case "id":
		t.ID, err = d.str(what(), false)
	case "title":
		t.Title, err = d.str(what(), true)
	case "status":
		s, err = d.str(what(), false)
		t.Status = coord.Status(s)
	case "priority":
		s, err = d.str(what(), true)
		t.Priority = coord.Priority(s)
	case "deps":
		t.Deps, err = d.strs(what())
	case "capability":
		t.Capability, err = d.str(what(), true)
	case "skill_level":
		s, err = d.str(what(), true)
		t.SkillLevel = coord.SkillLevel(s)
	case "files":
		t.Files, err = d.strs(what())
	case "conflict_group":
		t.ConflictGroup, err = d.str(what(), true)
	case "claimed_by":
		t.ClaimedBy, err = d.str(what(), true)
	case "claimed_at":
		t.ClaimedAt, err = d.str(what(), true)
	case "completed_at":
		t.CompletedAt, err = d.str(what(), true)
	case "epoch":
		t.Epoch, err = d.integer(what(), true)
	case "progress":
		i, err = d.integer(what(), true)
		if err == nil && i > 100 {
			err = d.errf("%s must be 0..100, found %d", name, i)
		}
		t.Progress = int(i)
	case "blocked_reason":
		t.BlockedReason, err = d.str(what(), true)
	case "reviewer_id":
		t.ReviewerID, err = d.str(what(), true)
	case "reject_reason":
		t.RejectReason, err = d.str(what(), true)
	default:
		err = d.fail(d.SkipValue())
	}
	if pe, ok := err.(*ParseError); ok {
		pe.Msg = "task " + strconv.Itoa(n) + " " + pe.Msg
	}
	return err
}

// Encode renders the registry: unchanged tasks byte for byte, changed
// and new ones re-encoded with their unknown fields kept in place. One task
// per line keeps the file diff-friendly.
func (f *File) Encode() []byte {
	size := 64
	for _, t := range f.Tasks {
		if t.Raw != nil && !t.Dirty {
			size += len(t.Raw) + 2
		} else {
			size += len(t.Raw) + 320
		}
	}
	for _, m := range f.top {
		size += len(m.name) + len(m.raw) + 4
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	writeTasks := func() {
		sep()
		b = append(b, `"last_epoch":`...)
		b = strconv.AppendInt(b, f.LastEpoch, 10)
		b = append(b, `,"tasks":[`...)
		for i, t := range f.Tasks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
			if t.Raw != nil && !t.Dirty {
				b = append(b, t.Raw...)
			} else {
				b = appendTask(b, t, t.Raw)
			}
		}
		if len(f.Tasks) > 0 {
			b = append(b, '\n')
		}
		b = append(b, ']')
	}
	for i, m := range f.top {
		if i == f.tasksAt {
			writeTasks()
		}
		sep()
		b = strconv.AppendQuote(b, m.name)
		b = append(b, ':')
		b = append(b, m.raw...)
	}
	if f.tasksAt < 0 || f.tasksAt >= len(f.top) {
		writeTasks()
	}
	b = append(b, "}\n"...)
	return b
}

// NewFile returns an empty registry in the current format.
func NewFile() *File {
	return &File{top: []member{{"version", []byte(strconv.Itoa(FormatVersion))}}, tasksAt: 1}
}

// appendTask encodes t, keeping raw's members in their order (known ones
// replaced by t's values, unknown ones verbatim) and adding known fields
// raw lacks.
func appendTask(b []byte, t *coord.Task, raw []byte) []byte {
	b = append(b, '{')
	written := make(map[string]bool, len(taskFieldOrder))
	n := 0
	if raw != nil {
		for _, m := range members(raw) {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = appendString(b, m.name)
			b = append(b, ':')
			if isKnown(m.name) {
				b = appendField(b, t, m.name, true)
				written[m.name] = true
			} else {
				b = append(b, m.raw...)
			}
		}
	}
	for _, name := range taskFieldOrder {
		if written[name] || !wantField(t, name) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendString(b, name)
		b = append(b, ':')
		b = appendField(b, t, name, false)
	}
	return append(b, '}')
}

func isKnown(name string) bool {
	for _, k := range taskFieldOrder {
		if k == name {
			return true
		}
	}
	return false
}

// wantField says whether a known field absent from the original is added.
func wantField(t *coord.Task, name string) bool {
	switch name {
	case "title":
		return t.Title != ""
	case "deps":
		return len(t.Deps) > 0
	case "files":
		return len(t.Files) > 0
	case "capability":
		return t.Capability != ""
	case "skill_level":
		return t.SkillLevel != ""
	case "conflict_group":
		return t.ConflictGroup != ""
	case "reject_reason":
		return t.RejectReason != ""
	}
	return true
}

func appendField(b []byte, t *coord.Task, name string, present bool) []byte {
	nullable := func(s string) []byte {
		if s == "" {
			return append(b, "null"...)
		}
		return appendString(b, s)
	}
	switch name {
	case "id":
		return appendString(b, t.ID)
	case "title":
		return appendString(b, t.Title)
	case "status":
		return appendString(b, string(t.Status))
	case "priority":
		p := t.Priority
		if p == "" {
			p = coord.Medium
		}
		return appendString(b, string(p))
	case "deps":
		return appendStrings(b, t.Deps)
	case "files":
		return appendStrings(b, t.Files)
	case "capability":
		return nullable(t.Capability)
	case "skill_level":
		return nullable(string(t.SkillLevel))
	case "conflict_group":
		return nullable(t.ConflictGroup)
	case "claimed_by":
		return nullable(t.ClaimedBy)
	case "claimed_at":
		return nullable(t.ClaimedAt)
	case "completed_at":
		return nullable(t.CompletedAt)
	case "epoch":
		return strconv.AppendInt(b, t.Epoch, 10)
	case "progress":
		return strconv.AppendInt(b, int64(t.Progress), 10)
	case "blocked_reason":
		return nullable(t.BlockedReason)
	case "reviewer_id":
		return nullable(t.ReviewerID)
	case "reject_reason":
		return nullable(t.RejectReason)
	}
	return append(b, "null"...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string (valid UTF-8 is guaranteed by
// the strict reader and by OneLine for text we produce).
func appendString(b []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(b, s) // invalid UTF-8 becomes U+FFFD
	return out
}

// members splits a raw (already validated) object into its members.
func members(raw []byte) []member {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := d.ReadToken(); err != nil {
		return nil
	}
	var out []member
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return out
		}
		name := tok.String()
		v, err := d.ReadValue()
		if err != nil {
			return out
		}
		out = append(out, member{name, bytes.Clone(v)})
	}
	return out
}

// TaskJSON returns a task as it stands in the registry: its original
// bytes if unchanged, else its new encoding.
func TaskJSON(t *coord.Task) []byte {
	if t.Raw != nil && !t.Dirty {
		return t.Raw
	}
	return appendTask(nil, t, t.Raw)
}
