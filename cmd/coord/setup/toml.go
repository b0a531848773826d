package setup

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/rotd/coord/coord"
)

// Codex's config.toml is edited as text, located by go-toml's parser: a
// TOML library would re-encode the whole file and lose the user's
// comments, order and layout. setup adds whole lines only, each marked
// "# coord setup", and removes only the lines it recognises as its own;
// the result is parsed again before anything is written.

// marker ends every line setup adds to a TOML file.
const marker = "# coord setup"

// tomlExpr is one top-level expression of a TOML document: a table
// header or a key/value, with the byte range of its line(s).
type tomlExpr struct {
	table      bool     // a [table] header (an [[array]] header is kept as a table too)
	key        []string // the header's key, or the key/value's (relative to its table)
	start, end int      // from the start of its first line to after its last line's newline
}

// tomlExprs lists the document's top-level expressions in order.
func tomlExprs(data []byte) ([]tomlExpr, error) {
	var p unstable.Parser
	p.Reset(data)
	var out []tomlExpr
	for p.NextExpression() {
		e := p.Expression()
		var x tomlExpr
		var first, last int
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			x.table = true
			it := e.Key()
			for it.Next() {
				n := it.Node()
				x.key = append(x.key, string(n.Data))
				if first == 0 && len(x.key) == 1 {
					first = int(n.Raw.Offset)
				}
				last = int(n.Raw.Offset + n.Raw.Length)
			}
		case unstable.KeyValue:
			it := e.Key()
			for it.Next() {
				x.key = append(x.key, string(it.Node().Data))
			}
			first, last = int(e.Raw.Offset), int(e.Raw.Offset+e.Raw.Length)
		default:
			continue
		}
		x.start = lineStart(data, first)
		x.end = lineEnd(data, last)
		out = append(out, x)
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return out, nil
}

func lineStart(data []byte, i int) int {
	for i > 0 && data[i-1] != '\n' {
		i--
	}
	return i
}

func lineEnd(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(data)
}

func hasPrefix(key, prefix []string) bool {
	if len(key) < len(prefix) {
		return false
	}
	for i := range prefix {
		if key[i] != prefix[i] {
			return false
		}
	}
	return true
}

// section is a table's extent: its header line to the end of its last
// key/value (comments after that belong to what follows).
type section struct {
	key        []string
	start, end int
	keys       []tomlExpr
}

func sections(exprs []tomlExpr) []section {
	var out []section
	for _, x := range exprs {
		if x.table {
			out = append(out, section{key: x.key, start: x.start, end: x.end})
			continue
		}
		if len(out) == 0 {
			out = append(out, section{key: nil, start: x.start, end: x.end})
		}
		s := &out[len(out)-1]
		s.keys = append(s.keys, x)
		s.end = x.end
	}
	return out
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// codexEnvVars are the variables Codex is asked to pass to coord mcp (it
// passes only a short default list), so the MCP server acts as the same
// agent as the hooks and the shell.
var codexEnvVars = []string{"COORD_AGENT", "COORD_AGENT_CAPS", "COORD_ROOT", "COORD_BACKEND", "ROTD_AGENT_ID", "ROTD_AGENT_CAPS"}

// codexServerBlock is the [mcp_servers.coord] table setup writes.
func (s *setup) codexServerBlock() string {
	var vars []string
	for _, v := range codexEnvVars {
		vars = append(vars, tomlString(v))
	}
	return "[mcp_servers.coord] " + marker + "\n" +
		"command = " + tomlString(s.opt.Command) + "\n" +
		`args = ["mcp"]` + "\n" +
		fmt.Sprintf("tool_timeout_sec = %d", toolTimeoutSec) + "\n" +
		"env_vars = [" + strings.Join(vars, ", ") + "]\n"
}

// editCodexConfig adds (or with remove takes out) coord's MCP server and
// the hooks feature flag in .codex/config.toml.
func (s *setup) editCodexConfig(old []byte, remove bool) ([]byte, error) {
	var doc map[string]any
	if err := toml.Unmarshal(old, &doc); err != nil {
		return nil, coord.Errorf(coord.CodeConflict, "%s is not valid TOML (%v); coord setup merges only a file it can read", codexConfig, oneLine(err)).
			WithHint("fix it, or add the entries by hand (coord setup codex --dry-run shows them)")
	}
	exprs, err := tomlExprs(old)
	if err != nil {
		return nil, err
	}
	secs := sections(exprs)
	out := string(old)

	// The server: every table at or under mcp_servers.coord.
	servers, _ := doc["mcp_servers"].(map[string]any)
	existing, has := servers["coord"].(map[string]any)
	if has && !s.oursMCP(existing["command"], existing["args"]) {
		return nil, coord.Errorf(coord.CodeConflict, "%s already has an MCP server named coord that does not run %s mcp", codexConfig, s.opt.Command).
			WithHint("rename or remove [mcp_servers.coord] there, then run coord setup codex again")
	}
	var coordSecs []section
	for _, sec := range secs {
		if hasPrefix(sec.key, []string{"mcp_servers", "coord"}) {
			coordSecs = append(coordSecs, sec)
		}
	}
	if has && len(coordSecs) == 0 {
		return nil, coord.Errorf(coord.CodeConflict, "%s defines mcp_servers.coord inline or with dotted keys; coord setup edits only a [mcp_servers.coord] table", codexConfig).
			WithHint("turn it into a [mcp_servers.coord] table, or edit it by hand")
	}
	// Apply edits from the end of the file backwards so offsets stay valid.
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	for i, sec := range coordSecs {
		text := ""
		start := sec.start
		if i > 0 || remove {
			start = withBlankBefore(old, start)
		}
		if i == 0 && !remove {
			text = s.codexServerBlock()
			if !strings.HasPrefix(string(old[sec.start:sec.end]), "[mcp_servers.coord] "+marker) {
				// The user's own table for coord's server: keep its other
				// keys, set coord's.
				text = s.mergeServerSection(old, sec)
			}
		}
		edits = append(edits, edit{start, sec.end, text})
	}
	appendText := ""
	if !remove && len(coordSecs) == 0 {
		appendText += s.codexServerBlock()
	}

	// The hooks feature flag.
	features, hasFeatures := doc["features"].(map[string]any)
	_, flagHooks := features["hooks"]
	_, flagCodex := features["codex_hooks"]
	var featSec *section
	for i := range secs {
		if len(secs[i].key) == 1 && secs[i].key[0] == "features" {
			featSec = &secs[i]
		}
	}
	if remove {
		if featSec != nil {
			own := 0
			for _, kv := range featSec.keys {
				if line := string(old[kv.start:kv.end]); strings.Contains(line, marker) {
					edits = append(edits, edit{kv.start, kv.end, ""})
					own++
				}
			}
			header := string(old[featSec.start:lineEnd(old, featSec.start)])
			if own == len(featSec.keys) && strings.Contains(header, marker) {
				edits = append(edits, edit{withBlankBefore(old, featSec.start), lineEnd(old, featSec.start), ""})
			}
		}
	} else {
		switch {
		case flagHooks || flagCodex:
			if features["hooks"] == false || features["codex_hooks"] == false {
				s.note("Codex hooks are turned off in %s ([features]); coord's hooks will not run until you turn them on", codexConfig)
			}
		case featSec != nil:
			at := lineEnd(old, featSec.start)
			edits = append(edits, edit{at, at, "codex_hooks = true " + marker + "\n"})
		case hasFeatures:
			s.note("%s sets features without a [features] table; add codex_hooks = true there by hand if your Codex needs it", codexConfig)
		default:
			appendText += "\n[features] " + marker + "\ncodex_hooks = true " + marker + "\n"
		}
	}
	// Edits never overlap: apply them last first.
	for i := 0; i < len(edits); i++ {
		for j := i + 1; j < len(edits); j++ {
			if edits[j].start > edits[i].start {
				edits[i], edits[j] = edits[j], edits[i]
			}
		}
	}
	for _, e := range edits {
		out = out[:e.start] + e.text + out[e.end:]
	}
	if appendText != "" {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		if out != "" && !strings.HasSuffix(out, "\n\n") {
			out += "\n"
		}
		out += strings.TrimPrefix(appendText, "\n")
	}
	if len(edits) > 0 || appendText != "" {
		out = tidyBlankLines(out)
	}
	var check map[string]any
	if err := toml.Unmarshal([]byte(out), &check); err != nil {
		return nil, fmt.Errorf("setup: the edited %s would not parse (%v); nothing written", codexConfig, err)
	}
	return []byte(out), nil
}

// mergeServerSection rewrites the user's own [mcp_servers.coord] table:
// coord's keys set, the others kept, the header marked.
func (s *setup) mergeServerSection(old []byte, sec section) string {
	ours := map[string]bool{"command": true, "args": true, "tool_timeout_sec": true, "env_vars": true}
	var b strings.Builder
	b.WriteString(s.codexServerBlock())
	for _, kv := range sec.keys {
		if len(kv.key) == 1 && ours[kv.key[0]] {
			continue
		}
		b.Write(old[kv.start:kv.end])
	}
	return b.String()
}

// withBlankBefore extends a block removed at start over the blank line
// before it (the one setup put there when it appended the block).
func withBlankBefore(data []byte, start int) int {
	if start >= 2 && data[start-1] == '\n' && data[start-2] == '\n' {
		return start - 1
	}
	return start
}

// tidyBlankLines drops blank lines at the start and the end of a
// document (never inside it: a multi-line string may hold them).
func tidyBlankLines(s string) string {
	s = strings.TrimLeft(s, "\n")
	s = strings.TrimRight(s, "\n")
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return s + "\n"
}

func oneLine(err error) string { return coord.OneLine(err.Error()) }
