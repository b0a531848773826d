package file

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// artifacts writes any ROTD artifact under the .rotd directory
// (Options.RotdDir) with its own flock in .rotd/.lock/: an atomic replace
// or a one-line append. The directory is opened for each write, so a
// broken .rotd/ only fails the commands that write there.
type artifacts struct{ b *Backend }

func lockNameFor(n string) string {
	return ".lock/" + strings.ReplaceAll(n, "/", "%2F") + ".lock"
}

// Append appends one line (validated as one JSON object for .jsonl).
func (a artifacts) Append(ctx context.Context, name string, line []byte) error {
	n, err := coord.ArtifactName(name)
	if err != nil {
		return err
	}
	line = []byte(strings.TrimRight(string(line), "\r\n"))
	if len(line) == 0 || strings.ContainsAny(string(line), "\n\r") {
		return coord.Errorf(coord.CodeUsage, "artifact append needs exactly one non-empty line on stdin")
	}
	if coord.ArtifactKind(n) == "jsonl" {
		if err := format.CheckStrict("stdin", line); err != nil {
			return coord.Errorf(coord.CodeUsage, "%v", err).WithHint("a .jsonl line must be one JSON object")
		}
		if line[0] != '{' {
			return coord.Errorf(coord.CodeUsage, "stdin: a .jsonl line must be one JSON object")
		}
	}
	return a.locked(ctx, n, func(t *fsops.Tree) error {
		return t.AppendLine(n, append(line, '\n'))
	})
}

// Write replaces the artifact atomically (validated as JSON for .json).
func (a artifacts) Write(ctx context.Context, name string, data []byte) error {
	n, err := coord.ArtifactName(name)
	if err != nil {
		return err
	}
	if len(data) > MaxArtifact {
		return coord.Errorf(coord.CodeUsage, "artifact %s: %d bytes is more than %d", n, len(data), MaxArtifact)
	}
	if coord.ArtifactKind(n) == "json" {
		if err := format.CheckStrict("stdin", data); err != nil {
			return coord.Errorf(coord.CodeUsage, "%v", err).WithHint("the new content of a .json artifact must be valid JSON")
		}
	}
	return a.locked(ctx, n, func(t *fsops.Tree) error {
		return t.WriteFile(n, data, 0o644)
	})
}

// locked runs write on the .rotd tree under the artifact's flock, its
// directory made first.
func (a artifacts) locked(ctx context.Context, n string, write func(*fsops.Tree) error) error {
	t, err := a.b.rotdTree()
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.MkdirAll(".lock", 0o755); err != nil {
		return IOError(err, "")
	}
	unlock, err := t.Lock(ctx, lockNameFor(n), a.b.lockWait, a.b.holderLine())
	if err != nil {
		return IOError(err, "")
	}
	defer unlock()
	if err := t.MkdirAll(path.Dir(n), 0o755); err != nil {
		return IOError(err, "")
	}
	return IOError(write(t), "")
}

// Artifacts is the artifact writer of the .rotd directory rotdDir alone,
// for an engine that keeps the coordination state elsewhere (NATS): the
// same locked appends and atomic replaces, lock waits bounded by lockWait
// (0: the default lock_wait).
func Artifacts(rotdDir string, lockWait time.Duration, holder string) coord.ArtifactStore {
	if lockWait <= 0 {
		lockWait = coord.DefaultConfig().LockWait
	}
	return artifacts{&Backend{rotdDir: rotdDir, lockWait: lockWait, holder: holder, clock: coord.SystemClock}}
}
