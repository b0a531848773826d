package setup

import (
	"os"
	"path/filepath"
)

// Self says how this coord process was started, for Locate.
type Self struct {
	Arg0       string                       // os.Args[0]
	Executable func() (string, error)       // os.Executable
	LookPath   func(string) (string, error) // exec.LookPath
}

// Location is what Locate found.
type Location struct {
	Command string // what the hooks and MCP entries run
	OnPath  bool   // Command is a name PATH finds as this binary
	Other   string // PATH's coord when it is another binary ("" : none, or this one)
}

// Note is what setup tells the user when the agents cannot run coord by
// name ("" when they can).
func (l Location) Note() string {
	switch {
	case l.OnPath:
		return ""
	case l.Other != "":
		return "coord on PATH is another binary (" + l.Other + "): the hooks and the MCP server run this one, " + l.Command
	}
	return "coord is not on PATH: the hooks and the MCP server run " + l.Command + " (a hook that cannot find coord exits 127, which the agents take as a warning: the edit guard would be off)"
}

// Locate returns the command the agents' hooks and MCP entries should run
// to reach this coord binary. It is "coord" when that name on PATH is
// this very binary (the usual install), so the files stay the same on
// every machine. Otherwise (coord not on PATH, or PATH's coord another
// binary) a hook that ran "coord" would fail with exit 127, which every
// agent takes as a warning: the edit guard would be off without a word.
// Then it is this binary's absolute path, onPath false: the path it was
// started by when that names this binary (a symbolic link such as
// ~/bin/coord stays valid when an upgrade moves its target), else the
// executable's own path, symbolic links resolved.
func Locate(self Self) (Location, error) {
	exe, err := self.Executable()
	if err != nil {
		return Location{}, err
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return Location{}, err
	}
	same := func(p string) bool {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return false
		}
		if r == real {
			return true
		}
		a, err1 := os.Stat(r)
		b, err2 := os.Stat(real)
		return err1 == nil && err2 == nil && os.SameFile(a, b)
	}
	var loc Location
	if p, err := self.LookPath("coord"); err == nil {
		if same(p) {
			return Location{Command: "coord", OnPath: true}, nil
		}
		loc.Other = p
	}
	if filepath.Base(real) == "rotd" { // 'rotd coord …': a rotd on PATH that is this binary
		if p, err := self.LookPath("rotd"); err == nil && same(p) {
			return Location{Command: "rotd", OnPath: true}, nil
		}
	}
	if a := self.Arg0; a != "" {
		if filepath.Base(a) == a { // a bare name: where PATH found it
			if p, err := self.LookPath(a); err == nil {
				a = p
			}
		}
		if abs, err := filepath.Abs(a); err == nil && same(abs) {
			loc.Command = abs
			return loc, nil
		}
	}
	loc.Command = real
	return loc, nil
}
