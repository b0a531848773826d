package hooks

import (
	"encoding/json"
	"strings"
)

// EditedFiles returns the files an edit tool is about to write, as the
// tool names them (absolute, or relative to the session's cwd):
//   - file_path: Claude's Edit, Write and MultiEdit; Gemini's write_file
//     and replace;
//   - notebook_path: Claude's NotebookEdit;
//   - an apply_patch envelope (Codex: tool_input.command, or a patch or
//     input field): every "*** Add File:", "*** Update File:",
//     "*** Delete File:" and "*** Move to:" path.
//
// Anything else writes no file coord knows of.
func EditedFiles(tool string, input json.RawMessage) []string {
	if len(input) == 0 {
		return nil
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		// apply_patch may be a freeform tool whose input is the patch itself.
		var s string
		if json.Unmarshal(input, &s) == nil {
			return PatchFiles(s)
		}
		return nil
	}
	var out []string
	seen := map[string]bool{}
	addFile := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, k := range []string{"file_path", "notebook_path"} {
		var s string
		if json.Unmarshal(in[k], &s) == nil {
			addFile(s)
		}
	}
	for _, k := range []string{"command", "patch", "input"} {
		var s string
		if json.Unmarshal(in[k], &s) != nil {
			continue
		}
		if tool == "apply_patch" || strings.Contains(s, "*** Begin Patch") {
			for _, p := range PatchFiles(s) {
				addFile(p)
			}
		}
	}
	return out
}

// patchHeaders are the lines of an apply_patch envelope that name a file
// the patch writes.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// PatchFiles returns the files an apply_patch envelope writes, in order,
// once each. The envelope may also come wrapped in a shell heredoc
// (apply_patch <<'EOF' … EOF): only its header lines are read.
func PatchFiles(patch string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range patchHeaders {
			if p, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), h); ok {
				p = strings.TrimSpace(p)
				if p != "" && !seen[p] && !strings.ContainsRune(p, 0) {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}
