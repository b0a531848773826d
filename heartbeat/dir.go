package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

// DirName is the heartbeat directory inside the coordination tree.
const DirName = "heartbeat"

// Dir is the heartbeat directory of one tree. It implements
// coord.BeatStore; its errors are the file system's (*fs.PathError,
// *fsops.KindError), for the engine to map.
type Dir struct {
	Tree  *fsops.Tree
	Clock coord.Clock
}

var _ coord.BeatStore = (*Dir)(nil)

// FileName is agent's heartbeat file, relative to the tree.
func FileName(agent string) string { return DirName + "/" + agent + ".beat" }

// Beat marks agent alive now. With info, the content is rewritten if the
// status, task, capabilities or skill level changed (or the file is
// missing or unreadable); otherwise only the mtime moves. Without info, a
// missing file is created idle.
func (d *Dir) Beat(ctx context.Context, agent string, info *coord.BeatInfo) error {
	if err := coord.ValidAgentID(agent); err != nil {
		return err
	}
	now := d.Clock()
	name := FileName(agent)
	old, err := d.Read(agent)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !isParse(err) {
		return err
	}
	if info == nil && exists {
		return d.Tree.Chtimes(name, now)
	}
	if info == nil {
		info = &coord.BeatInfo{Status: coord.AgentIdle}
	}
	if exists && sameState(old, info) {
		return d.Tree.Chtimes(name, now)
	}
	in := *info
	in.AgentID = agent
	in.LastBeat = coord.FormatTime(now)
	if in.PID == 0 {
		in.PID = os.Getppid()
	}
	if in.Hostname == "" {
		in.Hostname, _ = os.Hostname()
	}
	b, _ := json.Marshal(in)
	if err := d.Tree.MkdirAll(DirName, 0o755); err != nil {
		return err
	}
	// Content is advisory (the mtime is the liveness): atomic, not durable.
	if err := d.Tree.ReplaceFile(name, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return d.Tree.Chtimes(name, now)
}

func sameState(a, b *coord.BeatInfo) bool {
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
func (d *Dir) Read(agent string) (*coord.BeatInfo, error) {
	data, err := d.Tree.ReadFile(FileName(agent), 1<<16)
	if err != nil {
		return nil, err
	}
	var in coord.BeatInfo
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, parseErr{err}
	}
	return &in, nil
}

// MTime returns the mtime of agent's heartbeat as it is on disk (not
// clamped); ok is false if it has none.
func (d *Dir) MTime(agent string) (mtime time.Time, ok bool, err error) {
	fi, err := d.Tree.Lstat(FileName(agent))
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

// LastSeen returns the heartbeat mtimes of the given agents, read in one
// pass over the directory (an agent without a regular heartbeat file is
// absent), and the Dir's now. An mtime in the future is clamped to now,
// on disk too (the file's mtime is set to now), so that it ages from now
// on.
func (d *Dir) LastSeen(ctx context.Context, agents []string) (map[string]time.Time, time.Time, error) {
	now := d.Clock()
	names := make([]string, 0, len(agents))
	for _, a := range agents {
		names = append(names, a+".beat")
	}
	infos, err := d.Tree.LstatAll(DirName, names)
	if err != nil {
		return nil, now, err
	}
	out := make(map[string]time.Time, len(agents))
	for _, a := range agents {
		fi := infos[a+".beat"]
		if fi == nil || !fi.Mode().IsRegular() {
			continue
		}
		at := fi.ModTime()
		if at.After(now) {
			// A missing file by now (the agent left) is no error: it is
			// simply not seen at all.
			if err := d.Tree.Chtimes(FileName(a), now); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, now, err
			}
			at = now
		}
		out[a] = at
	}
	return out, now, nil
}

// SeenAll is LastSeen for every agent with a regular heartbeat file.
func (d *Dir) SeenAll(ctx context.Context) (map[string]time.Time, time.Time, error) {
	ents, err := d.Tree.ReadDir(DirName)
	if err != nil {
		return nil, d.Clock(), err
	}
	var agents []string
	for _, e := range ents {
		agent, ok := strings.CutSuffix(e.Name(), ".beat")
		if ok && coord.ValidAgentID(agent) == nil && e.Type().IsRegular() {
			agents = append(agents, agent)
		}
	}
	return d.LastSeen(ctx, agents)
}

// List returns every agent with a heartbeat file, sorted by agent id,
// with its mtime as it is (a list is a read: coord.Age counts one in the
// future as now) and its description (nil if unreadable), and the Dir's
// now.
func (d *Dir) List(ctx context.Context) ([]coord.Beat, time.Time, error) {
	now := d.Clock()
	ents, err := d.Tree.ReadDir(DirName)
	if err != nil {
		return nil, now, err
	}
	var out []coord.Beat
	for _, e := range ents {
		agent, ok := strings.CutSuffix(e.Name(), ".beat")
		if !ok || coord.ValidAgentID(agent) != nil || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		b := coord.Beat{Agent: agent, At: fi.ModTime()}
		b.Info, _ = d.Read(agent)
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out, now, nil
}
