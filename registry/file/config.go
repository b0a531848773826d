package file

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/rotd/coordination/fsops"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// readConfig reads config.json strictly; a missing file is the defaults.
func (s *Backend) readConfig() (coord.Config, error) {
	data, err := s.tree.ReadFile(ConfigFile, readLimit(ConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		return coord.DefaultConfig(), nil
	}
	if err != nil {
		return coord.DefaultConfig(), err
	}
	return format.ParseConfig(s.tree.Path(ConfigFile), data)
}

// ConfigData is config.json as stored (nil: none).
func (s *Backend) ConfigData(ctx context.Context) ([]byte, error) {
	data, err := s.tree.ReadFile(ConfigFile, maxSmallFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, IOError(err, "")
	}
	return data, nil
}

// SetConfig changes one key of config.json under .lock/config.lock: the
// file is read strictly, changed (format.SetSetting), read back strictly
// and replaced atomically and durably; on any error nothing is written.
func (s *Backend) SetConfig(ctx context.Context, key string, value json.RawMessage) (coord.Config, error) {
	unlock, err := s.lock(ctx, configLock)
	if err != nil {
		return coord.Config{}, err
	}
	defer unlock()
	old, err := s.ConfigData(ctx)
	if err != nil {
		return coord.Config{}, err
	}
	out, cfg, changed, err := format.SetSetting(s.tree.Path(ConfigFile), old, key, value)
	if coord.CodeOf(err) == coord.CodeUsage {
		return coord.Config{}, err
	}
	if err != nil {
		return coord.Config{}, IOError(err, "fix it by hand ('coord doctor' names it), then try again")
	}
	if !changed {
		return cfg, nil
	}
	var nd *fsops.NotDurableError
	if err := s.tree.WriteFile(ConfigFile, out, 0o644); errors.As(err, &nd) {
		s.warn(nd) // replaced: every reader sees it
	} else if err != nil {
		return coord.Config{}, IOError(err, "")
	}
	return cfg, nil
}

// loadDepMap reads dependency_map.json strictly; missing is empty.
func (s *Backend) loadDepMap() (map[string][]string, error) {
	data, err := s.tree.ReadFile(DepMapFile, readLimit(DepMapFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return format.ParseDepMap(s.tree.Path(DepMapFile), data)
}

// The readers' parses, for writeDoc: what each reader runs on the bytes.

func parseConfig(path string, data []byte) error {
	_, err := format.ParseConfig(path, data)
	return err
}

func parseDepMap(path string, data []byte) error {
	_, err := format.ParseDepMap(path, data)
	return err
}

func parseRegistry(path string, data []byte) error {
	_, err := format.Parse(path, data)
	return err
}
