package file

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// Backups of the registry (docs/FORMATS.md#backups). Every commit keeps, in
// .backup/, a copy of the registry it writes as
// active_work_registry.json.0 and the ones it replaced as .1, .2 and .3
// (writeRegistry, fsops.WriteFileFromKeeping). No backup shares the
// registry's inode: .0 is a copy of its own, and the older ones are the
// files the commits replaced by rename, which nobody writes again. So
// the registry written over in place (a shell's '>', an editor saving in
// place, cp) leaves every backup as it was, and .0 is the state of the
// last commit. A crash at any step leaves the registry old or new (the
// rename is the commit point) and every backup a registry that was in
// place before or is in place now; a backup is never newer than the
// registry. The registry replaced by hand (an editor's save, a tool's
// rename) leaves .0 as coord wrote it.
//
// When the registry cannot be read, every command says to run 'coord
// doctor --repair', which moves the damaged registry aside (never
// deleting it), puts the newest backup that parses in its place, links
// .0 to it, and logs that it did.

// repairHint is what every refusal of an unreadable registry says.
const repairHint = "run 'coord doctor --repair': it restores the newest readable backup from " + BackupDir + "/"

// registryError is load's error for a registry that cannot be read: a
// parse error or one too large names doctor --repair; the rest are
// IOError's.
func registryError(err error) error {
	var pe *format.ParseError
	switch {
	case errors.As(err, &pe):
		return &coord.Error{Code: coord.CodeIO, Msg: pe.Error(), Hint: repairHint}
	case errors.Is(err, fs.ErrNotExist):
		return err
	}
	ce, ok := IOError(err, "").(*coord.Error)
	if ok && errors.Is(err, fsops.ErrTooLarge) {
		ce.Hint = "the file is too large to be a registry; " + repairHint
	}
	return ce
}

// registryDamaged reports whether the registry is missing, too large to
// read or does not parse: what a backup repairs (not a file system that
// refuses to read it, or something of another kind at its name, which
// doctor clears first).
func (s *Backend) registryDamaged() bool {
	data, err := s.tree.ReadFile(RegistryFile, MaxRegistrySize)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fsops.ErrTooLarge):
		return true
	case err != nil:
		return false
	}
	_, err = format.Parse(RegistryFile, data)
	return err != nil
}

// newestBackup returns the newest backup that reads as a registry (its
// name and content); ok is false when none does.
func (s *Backend) newestBackup() (name string, data []byte, ok bool) {
	for n := 0; n <= Backups; n++ {
		name := BackupName(n)
		data, err := s.tree.ReadFile(name, MaxRegistrySize)
		if err != nil {
			continue
		}
		if _, err := format.Parse(name, data); err == nil {
			return name, data, true
		}
	}
	return "", nil, false
}

// restoreFix is doctor's repair of a registry that cannot be read (what
// names the problem): the newest readable backup put in its place, the
// damaged registry moved aside first. Without a readable backup it
// reports the problem for a person.
func (s *Backend) restoreFix(ps *problems, what string) {
	name, data, ok := s.newestBackup()
	if !ok {
		fix := "fix it by hand"
		if _, err := s.tree.Lstat(RegistryFile); errors.Is(err, fs.ErrNotExist) {
			fix = "run 'coord init' for an empty one"
		}
		ps.add(nil, "%s; no readable backup in %s/: %s", what, BackupDir, fix)
		return
	}
	ps.add(func() (string, error) {
		done := "restored it from " + name
		if _, err := s.tree.Lstat(RegistryFile); err == nil {
			aside := RegistryFile + AsideMark + s.clock().UTC().Format("20060102T150405Z")
			for i := 1; ; i++ {
				if _, err := s.tree.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
					break
				}
				aside = RegistryFile + AsideMark + s.clock().UTC().Format("20060102T150405Z") + "." + strconv.Itoa(i)
			}
			if err := s.tree.Rename(RegistryFile, aside); err != nil {
				return "", err
			}
			done += "; the damaged registry is kept as " + aside
		}
		if err := s.tree.WriteFile(RegistryFile, data, 0o644); err != nil {
			return "", err
		}
		// .0 is the registry as it now stands: a copy of its own, as
		// every commit leaves it.
		if err := s.tree.WriteFile(BackupName(0), data, 0o644); err != nil {
			s.warn(fmt.Errorf("restored, but %s was not renewed: %w", BackupName(0), err))
		}
		return done, nil
	}, "%s; --repair restores the newest readable backup (%s)", what, name)
}
