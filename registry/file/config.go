package file

import (
	"errors"
	"io/fs"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/format"
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
