package file

import (
	"errors"
	"io/fs"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/fsops"
	"github.com/rotd/coord/registry/format"
)

const maxSmallFile = 1 << 20

// LoadConfig reads config.json strictly; a missing file is the defaults.
func LoadConfig(t *fsops.Tree) (coord.Config, error) {
	data, err := t.ReadFile(ConfigFile, maxSmallFile)
	if errors.Is(err, fs.ErrNotExist) {
		return coord.DefaultConfig(), nil
	}
	if err != nil {
		return coord.DefaultConfig(), err
	}
	return format.ParseConfig(t.Path(ConfigFile), data)
}

// LoadDepMap reads dependency_map.json strictly; missing is empty.
func LoadDepMap(t *fsops.Tree) (map[string][]string, error) {
	data, err := t.ReadFile(DepMapFile, maxSmallFile*16)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return format.ParseDepMap(t.Path(DepMapFile), data)
}
