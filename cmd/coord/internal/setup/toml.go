package setup

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/rotd/coordination/coord"
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
var codexEnvVars = coord.SessionEnvs

// codexServerBlock is the [mcp_servers.coord] table setup writes.
func (s *setup) codexServerBlock() string {
	var vars, args []string
	for _, v := range codexEnvVars {
		vars = append(vars, tomlString(v))
	}
	for _, a := range s.mcpArgs() {
		args = append(args, tomlString(a.(string)))
	}
	return "[mcp_servers.coord] " + marker + "\n" +
		"command = " + tomlString(s.opt.Command) + "\n" +
		"args = [" + strings.Join(args, ", ") + "]\n" +
		fmt.Sprintf("tool_timeout_sec = %d", toolTimeoutSec) + "\n" +
		"env_vars = [" + strings.Join(vars, ", ") + "]\n"
}

// editCodexConfig adds (or with remove takes out) coord's MCP server in
// .codex/config.toml. Codex's hooks need no feature flag (hooks are a
// stable feature, on by default, in Codex 0.171; the old
// [features] codex_hooks prints a deprecation warning on every run), so
// setup writes none, and takes out the codex_hooks lines an earlier coord
// setup wrote.
//
// The block is appended after one blank line, and removal takes out the
// block with that blank line, so setup then setup --remove gives the
// file back byte for byte; a file without a final newline gets the block
// without one too, and removal gives that back as well.
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
	// The file's newline, as its last line ends (or, without a final
	// newline, as any line does): a file written with CRLF gets CRLF.
	nl := "\n"
	if bytes.HasSuffix(old, []byte("\r\n")) || !bytes.HasSuffix(old, []byte("\n")) && bytes.Contains(old, []byte("\r\n")) {
		nl = "\r\n"
	}
	block := strings.ReplaceAll(s.codexServerBlock(), "\n", nl)

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
	var edits []textEdit
	appendText := ""
	for _, sec := range coordSecs {
		switch {
		case remove:
			edits = append(edits, textEdit{blockStart(old, sec), sec.end, ""})
		case len(sec.key) == 2: // [mcp_servers.coord] itself; its sub-tables (env) stay
			text := block
			if !strings.HasPrefix(string(old[sec.start:sec.end]), "[mcp_servers.coord] "+marker) {
				// The user's own table for coord's server: keep its other
				// keys, set coord's.
				text = s.mergeServerSection(old, sec, block)
			}
			if sec.end == len(old) && !bytes.HasSuffix(old, []byte("\n")) {
				text = strings.TrimSuffix(text, nl)
			}
			edits = append(edits, textEdit{sec.start, sec.end, text})
		}
	}
	if !remove && len(coordSecs) == 0 {
		appendText = block
	}

	// The hooks feature flag: never written any more; the lines an
	// earlier coord setup marked as its own go.
	features, _ := doc["features"].(map[string]any)
	var featSec *section
	for i := range secs {
		if len(secs[i].key) == 1 && secs[i].key[0] == "features" {
			featSec = &secs[i]
		}
	}
	cleaned := false
	if featSec != nil {
		own := 0
		for _, kv := range featSec.keys {
			if strings.Contains(string(old[kv.start:kv.end]), marker) {
				edits = append(edits, textEdit{kv.start, kv.end, ""})
				own++
			}
		}
		header := string(old[featSec.start:lineEnd(old, featSec.start)])
		if own == len(featSec.keys) && strings.Contains(header, marker) {
			edits = append(edits, textEdit{withBlankBefore(old, featSec.start), lineEnd(old, featSec.start), ""})
		}
		cleaned = own > 0
	}
	if !remove {
		if cleaned {
			s.note("took out [features] codex_hooks, which an earlier coord setup wrote to %s: Codex hooks need no feature flag, and the old key prints a deprecation warning on every run", codexConfig)
		}
		for _, k := range []string{"hooks", "codex_hooks"} {
			if v, ok := features[k]; ok && v == false {
				s.note("Codex hooks are turned off in %s ([features] %s = false): coord's hooks will not run until you remove that line", codexConfig, k)
			}
		}
		if _, ok := features["codex_hooks"]; ok && !cleaned {
			s.note("%s sets [features] codex_hooks, which Codex deprecates (a warning on every run): rename it to hooks, or drop it (hooks are on by default)", codexConfig)
		}
		if _, ok := doc["hooks"]; ok {
			s.note("%s also defines hooks ([hooks]); Codex warns when a project has hooks in both config.toml and %s, where coord's are", codexConfig, codexHooks)
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
	out := string(old)
	for _, e := range edits {
		out = out[:e.start] + e.text + out[e.end:]
	}
	switch {
	case appendText == "":
	case out == "":
		out = appendText
	case strings.HasSuffix(out, "\n"):
		out += nl + appendText
	default:
		out += nl + nl + strings.TrimSuffix(appendText, nl)
	}
	var check map[string]any
	if err := toml.Unmarshal([]byte(out), &check); err != nil {
		return nil, fmt.Errorf("setup: the edited %s would not parse (%v); nothing written", codexConfig, err)
	}
	return []byte(out), nil
}

// blockStart is where the removal of a block setup appended starts: with
// the blank line setup put before it, and, for a block that ends the
// file without a final newline, with the newline setup added to the line
// before (see editCodexConfig).
func blockStart(data []byte, sec section) int {
	start := sec.start
	if sec.end == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
		nl := "\n"
		if bytes.HasSuffix(data[:start], []byte("\r\n")) {
			nl = "\r\n"
		}
		if bytes.HasSuffix(data[:start], []byte(nl+nl)) {
			return start - 2*len(nl)
		}
	}
	return withBlankBefore(data, start)
}

// mergeServerSection rewrites the user's own [mcp_servers.coord] table:
// coord's keys set, the others kept, the header marked.
func (s *setup) mergeServerSection(old []byte, sec section, block string) string {
	ours := map[string]bool{"command": true, "args": true, "tool_timeout_sec": true, "env_vars": true}
	var b strings.Builder
	b.WriteString(block)
	for _, kv := range sec.keys {
		if len(kv.key) == 1 && ours[kv.key[0]] {
			continue
		}
		b.Write(old[kv.start:kv.end])
	}
	return b.String()
}

// withBlankBefore extends a block removed at start over the blank line
// before it (the one setup put there when it appended the block), LF or
// CRLF.
func withBlankBefore(data []byte, start int) int {
	switch before := data[:start]; {
	case bytes.HasSuffix(before, []byte("\n\r\n")):
		return start - 2
	case bytes.HasSuffix(before, []byte("\n\n")):
		return start - 1
	}
	return start
}

func oneLine(err error) string { return coord.OneLine(err.Error()) }
