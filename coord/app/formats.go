package app

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/rotd/coordination/coord"
)

// Formats reads and writes what front ends are handed as bytes: seed
// batches (coord's JSON Lines, ROTD's planner tasks), a task as the
// registry holds it, the project's settings, strict JSON. The storage
// layer implements it over the file formats of docs/FORMATS.md
// (registry/backend.Formats); the application calls it, so that a front
// end passes bytes and names no format package, and each format keeps
// one home.
type Formats interface {
	// ParseSeed reads a seed batch in dialect ("" or "coord": JSON
	// Lines of task fields; "rotd": ROTD's tasks.jsonl) from r, named
	// name in errors; have lists the registry's tasks, for a dialect
	// whose lines refer to them (ROTD's phase dependencies). An unknown
	// dialect or a bad line is CodeUsage.
	ParseSeed(dialect, name string, r io.Reader, have func() ([]*coord.Task, error), now time.Time) ([]coord.SeedLine, error)
	// TaskJSON is t as it stands in the registry (unknown fields kept),
	// on one line.
	TaskJSON(t *coord.Task) []byte
	// Settings lists every setting with its value in force, then the
	// stored keys that are not coord's, as doc (the stored settings
	// document, named where in errors; nil: none) holds them.
	Settings(where string, doc []byte) ([]coord.Setting, error)
	// SettingKey checks that key is a setting (CodeUsage naming the
	// nearest one otherwise).
	SettingKey(key string) error
	// SettingValue turns what a person typed for key into its JSON
	// value, or refuses it (CodeUsage) as config.json would.
	SettingValue(key, text string) (json.RawMessage, error)
	// CheckStrict reports whether b is JSON as coord reads it (no
	// duplicate keys, valid UTF-8, nothing after the value).
	CheckStrict(name string, b []byte) error
}

// errNoFormats is the error of a call that reads or writes a format on a
// Service opened without Options.Formats (a wiring error).
var errNoFormats = coord.Errorf(coord.CodeUsage, "app: this Service reads no formats (Options.Formats is nil)")

// ParseSeed reads a seed batch from r in dialect ("" or "coord", "rotd";
// docs/FORMATS.md, "Seed input"), named name in errors, for Seed. It writes
// nothing; a dialect that refers to the registry (ROTD's phases) reads it.
func (s *Service) ParseSeed(ctx context.Context, dialect, name string, r io.Reader) ([]coord.SeedLine, error) {
	if s.formats == nil {
		return nil, errNoFormats
	}
	have := func() ([]*coord.Task, error) { return s.Snapshot(ctx) }
	batch, err := s.formats.ParseSeed(dialect, name, r, have, s.clock())
	return batch, interrupted(ctx, err)
}

// TaskJSON is t as it stands in the registry, unknown fields kept, on one
// line: what `ls --json`, `claim` and the MCP tools print. It needs
// Options.Formats (a Service opened without it panics: a wiring error).
func (s *Service) TaskJSON(t *coord.Task) []byte {
	if s.formats == nil {
		panic("app: Service.TaskJSON needs Options.Formats")
	}
	return s.formats.TaskJSON(t)
}

// Settings lists the project's settings with their values in force (the
// defaults for those not stored), then the stored keys that are not
// coord's.
func (s *Service) Settings(ctx context.Context) ([]coord.Setting, error) {
	if s.formats == nil {
		return nil, errNoFormats
	}
	data, err := s.ConfigData(ctx)
	if err != nil {
		return nil, err
	}
	return s.formats.Settings(s.b.Where(), data)
}

// Setting is one setting's value in force (CodeUsage when key is not a
// setting).
func (s *Service) Setting(ctx context.Context, key string) (coord.Setting, error) {
	if s.formats == nil {
		return coord.Setting{}, errNoFormats
	}
	if err := s.formats.SettingKey(key); err != nil {
		return coord.Setting{}, err
	}
	list, err := s.Settings(ctx)
	if err != nil {
		return coord.Setting{}, err
	}
	for _, st := range list {
		if st.Key == key {
			return st, nil
		}
	}
	return coord.Setting{}, s.formats.SettingKey(key)
}

// SetConfigText sets one setting from what a person typed for it (15m,
// true, {"daily":["a"]}), read as config.json reads it: text that is
// JSON the key accepts is that value, else the text is a string. A bad
// key or value is CodeUsage and writes nothing.
func (s *Service) SetConfigText(ctx context.Context, key, text string) error {
	if s.formats == nil {
		return errNoFormats
	}
	v, err := s.formats.SettingValue(key, text)
	if err != nil {
		return err
	}
	return s.SetConfig(ctx, key, v)
}

// UnsetConfig removes one setting: its default applies again (CodeUsage
// when key is not a setting).
func (s *Service) UnsetConfig(ctx context.Context, key string) error {
	if s.formats == nil {
		return errNoFormats
	}
	if err := s.formats.SettingKey(key); err != nil {
		return err
	}
	return s.SetConfig(ctx, key, nil)
}

// KVValue turns a value as a person gave it into what KVSet stores
// (coord.KVValue): strict JSON as it is, compacted; anything else as a
// JSON string.
func (s *Service) KVValue(text string) (json.RawMessage, error) {
	return coord.KVValue(text), nil
}
