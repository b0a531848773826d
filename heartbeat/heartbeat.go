package heartbeat

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/fsops"
)

// DirName is the heartbeat directory inside the coordination tree.
const DirName = "heartbeat"

// Info is a heartbeat file's content (ROTD heartbeat.schema.json).
type Info struct {
	AgentID      string   `json:"agent_id"`
	LastBeat     string   `json:"last_beat"`
	PID          int      `json:"pid"`
	Hostname     string   `json:"hostname,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	SkillLevel   string   `json:"skill_level,omitempty"`
	CurrentTask  *string  `json:"current_task"`
	Status       string   `json:"status"`
}

// Agent statuses written to heartbeat files.
const (
	Idle    = "idle"
	Working = "working"
	Blocked = "blocked"
)

// Dir is the heartbeat directory of one tree.
type Dir struct {
	Tree  *fsops.Tree
	Clock coord.Clock
}

func fileName(agent string) string { return DirName + "/" + agent + ".beat" }

// Beat marks agent alive now. With info, the content is rewritten if the
// status, task or capabilities changed (or the file is missing or
// unreadable); otherwise only the mtime moves. Without info, a missing file
// is created idle.
func (d *Dir) Beat(agent string, info *Info) error {
	if err := coord.ValidAgentID(agent); err != nil {
		return err
	}
	now := d.Clock()
	name := fileName(agent)
	old, err := d.Read(agent)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !isParse(err) {
		return err
	}
	if info == nil && exists {
		return d.Tree.Chtimes(name, now)
	}
	if info == nil {
		info = &Info{Status: Idle}
	}
	if exists && sameState(old, info) {
		return d.Tree.Chtimes(name, now)
	}
	info.AgentID = agent
	info.LastBeat = coord.FormatTime(now)
	if info.PID == 0 {
		info.PID = os.Getppid()
	}
	if info.Hostname == "" {
		info.Hostname, _ = os.Hostname()
	}
	b, _ := json.Marshal(info)
	if err := d.Tree.MkdirAll(DirName, 0o755); err != nil {
		return err
	}
	// Content is advisory (the mtime is the liveness): atomic, not durable.
	if err := d.Tree.ReplaceFile(name, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return d.Tree.Chtimes(name, now)
}

func sameState(a, b *Info) bool {
	if a.Status != b.Status || (a.CurrentTask == nil) != (b.CurrentTask == nil) {
		return false
	}
	if a.CurrentTask != nil && *a.CurrentTask != *b.CurrentTask {
		return false
	}
	if b.Capabilities != nil && strings.Join(a.Capabilities, ",") != strings.Join(b.Capabilities, ",") {
		return false
	}
	return b.SkillLevel == "" || a.SkillLevel == b.SkillLevel
}

type parseErr struct{ error }

func isParse(err error) bool { _, ok := err.(parseErr); return ok }

// Read returns an agent's heartbeat content.
func (d *Dir) Read(agent string) (*Info, error) {
	data, err := d.Tree.ReadFile(fileName(agent), 1<<16)
	if err != nil {
		return nil, err
	}
	var in Info
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, parseErr{err}
	}
	return &in, nil
}

// MTime returns the mtime of agent's heartbeat; ok is false if it has none.
func (d *Dir) MTime(agent string) (mtime time.Time, ok bool, err error) {
	fi, err := d.Tree.Lstat(fileName(agent))
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	if !fi.Mode().IsRegular() {
		return time.Time{}, false, nil
	}
	return fi.ModTime(), true, nil
}

// MTimes returns the heartbeat mtimes of several agents in one pass over
// the directory (agents without a regular heartbeat file are absent).
func (d *Dir) MTimes(agents []string) (map[string]time.Time, error) {
	names := make([]string, 0, len(agents))
	for _, a := range agents {
		names = append(names, a+".beat")
	}
	infos, err := d.Tree.LstatAll(DirName, names)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(agents))
	for _, a := range agents {
		if fi := infos[a+".beat"]; fi != nil && fi.Mode().IsRegular() {
			out[a] = fi.ModTime()
		}
	}
	return out, nil
}

// ClampFuture moves a heartbeat mtime that lies in the future back to now,
// so that it ages from now on. It reports whether it did.
func (d *Dir) ClampFuture(agent string, now time.Time) (bool, error) {
	mt, ok, err := d.MTime(agent)
	if err != nil || !ok || !mt.After(now) {
		return false, err
	}
	return true, d.Tree.Chtimes(fileName(agent), now)
}

// Beat file listing entry.
type Entry struct {
	Agent string
	MTime time.Time
	Info  *Info // nil if unreadable
}

// List returns every agent with a heartbeat file, sorted by agent id.
func (d *Dir) List() ([]Entry, error) {
	ents, err := d.Tree.ReadDir(DirName)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, e := range ents {
		agent, ok := strings.CutSuffix(e.Name(), ".beat")
		if !ok || coord.ValidAgentID(agent) != nil || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		en := Entry{Agent: agent, MTime: fi.ModTime()}
		en.Info, _ = d.Read(agent)
		out = append(out, en)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out, nil
}

// Age is how long ago an agent last beat, seen from now; a future mtime
// counts as now (age 0).
func Age(mtime, now time.Time) time.Duration {
	if mtime.After(now) {
		return 0
	}
	return now.Sub(mtime)
}
