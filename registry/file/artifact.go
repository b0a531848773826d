package file

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/fsops"
	"github.com/rotd/coord/registry/format"
)

// MaxArtifact bounds an artifact written through coord.
const MaxArtifact = 64 << 20

// Artifacts writes any ROTD artifact under .rotd/ with its own flock in
// .rotd/.lock/: an atomic replace or a one-line append.
type Artifacts struct {
	Tree     *fsops.Tree // the .rotd directory
	LockWait time.Duration
	Holder   []byte
}

// ArtifactName validates a name relative to .rotd/ ("tasks.jsonl",
// "session_state.json", ".rotd/x.json" is accepted too). The coordination
// tree itself is refused: its files have their own commands.
func ArtifactName(name string) (string, error) {
	n := strings.TrimPrefix(coord.CleanPath(name), ".rotd/")
	if name == "" || strings.ContainsRune(name, 0) || strings.HasPrefix(name, "/") || coord.HasDotDot(name) || n == "" ||
		strings.HasPrefix(n, "../") || strings.HasSuffix(n, "/") {
		return "", coord.Errorf(coord.CodeUsage, "invalid artifact %q: give a file path inside .rotd/", name)
	}
	if n == "coordination" || strings.HasPrefix(n, "coordination/") || strings.HasPrefix(n, ".lock") {
		return "", coord.Errorf(coord.CodeUsage, "artifact %q is inside the coordination tree", name).
			WithHint("use coord's own commands for coordination files")
	}
	return n, nil
}

func lockNameFor(n string) string {
	return ".lock/" + strings.ReplaceAll(n, "/", "%2F") + ".lock"
}

// Append appends one line (validated as one JSON object for .jsonl).
func (a *Artifacts) Append(ctx context.Context, name string, line []byte) error {
	n, err := ArtifactName(name)
	if err != nil {
		return err
	}
	line = []byte(strings.TrimRight(string(line), "\r\n"))
	if len(line) == 0 || strings.ContainsAny(string(line), "\n\r") {
		return coord.Errorf(coord.CodeUsage, "artifact append needs exactly one non-empty line on stdin")
	}
	if path.Ext(n) == ".jsonl" {
		if err := format.CheckStrict("stdin", line); err != nil {
			return coord.Errorf(coord.CodeUsage, "%v", err).WithHint("a .jsonl line must be one JSON object")
		}
		if line[0] != '{' {
			return coord.Errorf(coord.CodeUsage, "stdin: a .jsonl line must be one JSON object")
		}
	}
	unlock, err := a.lock(ctx, n)
	if err != nil {
		return err
	}
	defer unlock()
	if err := a.Tree.MkdirAll(path.Dir(n), 0o755); err != nil {
		return IOError(err, "")
	}
	return IOError(a.Tree.AppendLine(n, append(line, '\n')), "")
}

// Write replaces the artifact atomically (validated as JSON for .json).
func (a *Artifacts) Write(ctx context.Context, name string, data []byte) error {
	n, err := ArtifactName(name)
	if err != nil {
		return err
	}
	if path.Ext(n) == ".json" {
		if err := format.CheckStrict("stdin", data); err != nil {
			return coord.Errorf(coord.CodeUsage, "%v", err).WithHint("the new content of a .json artifact must be valid JSON")
		}
	}
	unlock, err := a.lock(ctx, n)
	if err != nil {
		return err
	}
	defer unlock()
	if err := a.Tree.MkdirAll(path.Dir(n), 0o755); err != nil {
		return IOError(err, "")
	}
	return IOError(a.Tree.WriteFile(n, data, 0o644), "")
}

func (a *Artifacts) lock(ctx context.Context, n string) (func(), error) {
	if err := a.Tree.MkdirAll(".lock", 0o755); err != nil {
		return nil, IOError(err, "")
	}
	unlock, err := a.Tree.Lock(ctx, lockNameFor(n), a.LockWait, a.Holder)
	if err != nil {
		return nil, IOError(err, "")
	}
	return unlock, nil
}
