package app

import (
	"bytes"
	"encoding/json"

	"github.com/rotd/coordination/coord"
)

// The JSON shapes every front end prints for a view: the CLI with --json
// and the MCP tools return the same bytes because both build them here.

// StatusJSON is the status view as `coord status --json` and the MCP
// status tool print it.
type StatusJSON struct {
	Agent   string            `json:"agent"`
	Holding []json.RawMessage `json:"holding"`
	Locks   []coord.PathLock  `json:"locks"`
	Counts  map[string]int    `json:"counts"`
	Drained bool              `json:"drained"`
	// Conflicts are the conflicts found for the agent's work in flight
	// (coord conflicts, watch, schedule), from its side:
	// {"task": its task, "with": the target branch or another task,
	// "files": […]}.
	Conflicts []coord.ConflictPair `json:"conflicts"`
}

// JSON is v in its printed shape; taskJSON encodes a held task as the
// registry holds it (Service.TaskJSON).
func (v StatusView) JSON(taskJSON func(*coord.Task) []byte) StatusJSON {
	out := StatusJSON{Agent: v.Agent, Locks: v.Locks, Counts: map[string]int{}, Drained: v.Drained, Holding: []json.RawMessage{}, Conflicts: v.Conflicts}
	if out.Conflicts == nil {
		out.Conflicts = []coord.ConflictPair{}
	}
	for _, t := range v.Holding {
		out.Holding = append(out.Holding, CompactJSON(taskJSON(t)))
	}
	for st, n := range v.Counts {
		out.Counts[string(st)] = n
	}
	return out
}

// ReadyJSON is the ready view as `coord ready --json` and the MCP ready
// tool print it: {"ready": […]} and, with explain, "not_ready": […], each
// cut to its first limit rows (0: every row); a list that was cut is
// followed by how many rows it left out ("ready_more", "not_ready_more"),
// absent when none was.
func ReadyJSON(ready, not []ReadyRow, explain bool, limit int) map[string]any {
	rows, more := Limit(ready, limit)
	out := map[string]any{"ready": rows}
	if more > 0 {
		out["ready_more"] = more
	}
	if explain {
		rows, more := Limit(not, limit)
		out["not_ready"] = rows
		if more > 0 {
			out["not_ready_more"] = more
		}
	}
	return out
}

// CompactJSON is b on one line (b itself when it already is one, or is
// not JSON).
func CompactJSON(b []byte) json.RawMessage {
	if bytes.IndexByte(b, '\n') < 0 {
		return b
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
