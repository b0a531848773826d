package backend

import (
	"encoding/json"
	"io"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
	"github.com/rotd/coordination/registry/rotd"
)

// Formats is the file formats of docs/FORMATS.md as the application reads
// them (app.Formats): registry/format's strict readers and writers, and
// registry/rotd's importer of ROTD's planner tasks. Front ends give it to
// app.New (app.Options.Formats) and pass the application bytes.
type Formats struct{}

// ParseSeed reads a seed batch: dialect "" or "coord" is coord's JSON
// Lines (format.ParseSeed), "rotd" ROTD's tasks.jsonl (rotd.ParseTasks),
// whose phase dependencies resolve against the batch and have.
func (Formats) ParseSeed(dialect, name string, r io.Reader, have func() ([]*coord.Task, error), now time.Time) ([]coord.SeedLine, error) {
	switch dialect {
	case "", "coord":
		return format.ParseSeed(name, r)
	case "rotd":
		tasks, err := have()
		if err != nil {
			return nil, err
		}
		phases := map[string][]string{}
		ids := map[string]bool{}
		for _, t := range tasks {
			ids[t.ID] = true
			p := rotd.TaskPhase(t)
			phases[p] = append(phases[p], t.ID)
		}
		return rotd.ParseTasks(name, r, func(p string) []string { return phases[p] }, func(id string) bool { return ids[id] }, now)
	}
	return nil, coord.Errorf(coord.CodeUsage, "seed format %q is not coord or rotd", dialect)
}

// TaskJSON is t as the registry holds it, on one line (format.TaskLine).
func (Formats) TaskJSON(t *coord.Task) []byte {
	b, err := format.TaskLine(t)
	if err != nil {
		return format.TaskJSON(t)
	}
	return b
}

// Settings is format.Settings.
func (Formats) Settings(where string, doc []byte) ([]coord.Setting, error) {
	return format.Settings(where, doc)
}

// SettingKey is format.SettingKey.
func (Formats) SettingKey(key string) error { return format.SettingKey(key) }

// SettingValue is format.SettingValue.
func (Formats) SettingValue(key, text string) (json.RawMessage, error) {
	return format.SettingValue(key, text)
}

// CheckStrict is format.CheckStrict.
func (Formats) CheckStrict(name string, b []byte) error { return format.CheckStrict(name, b) }
