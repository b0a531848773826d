// Package format is the file formats of docs/FORMATS.md and their strict
// reading: the registry document (active_work_registry.json), seed lines,
// config.json, the dependency map, lock file content and path locks. It
// does no I/O: callers hand it bytes and a name for errors, and get bytes
// back.
//
// Reading is strict everywhere: duplicate member names and names that
// differ only in case (at every depth), invalid UTF-8, lone surrogate
// escapes, a byte-order mark, trailing data and nesting deeper than
// 10,000 are errors (*ParseError, naming the file and where), as are
// wrong types and values out of range for known members.
//
// config.json is changed one key at a time (SetSetting, the engines'
// SetConfig): a key is a setting when ParseConfig reads it (ConfigKeys
// lists them, kept equal to its cases by a test), a value is valid when
// ParseConfig accepts it, and every other member keeps its bytes and its
// place. SettingValue reads what a person types for a key.
//
// The registry is written back as it was read wherever it did not change:
// unknown members, at the top and in tasks, keep their bytes and their
// place; unchanged tasks and path locks are copied without re-encoding;
// a task is written on one line. "path_locks" (an array of coord.PathLock)
// is written when it holds a lock or was present when read, so a registry
// of an older coord stays as it was until a path lock is taken.
//
// A seed line (ParseSeedLine) carries only the fields coord.SeedFields
// names, status only as unclaimed: a field coord owns or an unknown one
// is refused naming the line, the field and the nearest known field. A
// task coord wrote (an archive line) or a dialect's importer built is
// read with ParseTaskLine, which keeps every field.
//
// Limits: the registry parser holds the whole document in memory (the
// caller bounds the read); Parse's tasks point into the data given, which
// must not change afterwards.
package format
