package file

import (
	"errors"
	"io/fs"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/format"
)

// readConfig reads config.json strictly; a missing file is the defaults.
func (s *Backend) readConfig() (coord.Config, error) {
	data, err := s.tree.ReadFile(ConfigFile, maxSmallFile)
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
	data, err := s.tree.ReadFile(DepMapFile, maxSmallFile*16)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return format.ParseDepMap(s.tree.Path(DepMapFile), data)
}
