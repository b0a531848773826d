package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A user's JSON file is edited as text: setup parses it into jnodes that
// know where each value stands, decides the change on the values
// (object, []any), and then splices only the members and elements that
// change into the original bytes (reconcile). Everything else (layout,
// indentation, key order, comments where the agent allows them, a
// missing final newline) stays byte for byte. Text setup inserts follows
// the file's own style (indent unit, newline, ": " or ":", one line or
// many), and a deletion takes out exactly what the matching insertion
// put in, so setup then setup --remove gives the file back as it was.

// jnode is one JSON value of a document and the bytes it spans.
type jnode struct {
	kind       byte // '{' object, '[' array, '"' string, '0' number, 'l' true/false/null
	start, end int  // the value's bytes: data[start:end]
	members    []jmember
	elems      []*jnode
}

// jmember is one member of an object: its key's bytes and its value.
type jmember struct {
	key              string
	keyStart, keyEnd int
	val              *jnode
}

// errComments is what the parser returns for a comment where comments
// are not allowed.
var errComments = errors.New("the file has comments")

// maxDepth bounds nesting (the agents' settings nest a few levels).
const maxDepth = 200

type jparser struct {
	data     []byte
	pos      int
	comments bool // // and /* */ comments count as space (Gemini's settings)
	depth    int
}

// parseJSONText parses a document whose top level is an object (nil for
// an empty or all-space document). Duplicate keys, invalid UTF-8 and
// trailing data are errors: which duplicate an agent reads is not
// knowable.
func parseJSONText(data []byte, comments bool) (*jnode, error) {
	p := &jparser{data: data, comments: comments}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos == len(data) {
		return nil, nil
	}
	if !utf8.Valid(data) {
		return nil, errors.New("invalid UTF-8")
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos != len(data) {
		return nil, p.errorf("trailing data after the JSON document")
	}
	if n.kind != '{' {
		return nil, errors.New("the document is not a JSON object")
	}
	return n, nil
}

func (p *jparser) errorf(format string, args ...any) error {
	line := 1 + bytes.Count(p.data[:min(p.pos, len(p.data))], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

// space skips white space (and comments when allowed).
func (p *jparser) space() error {
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.data) && (p.data[p.pos+1] == '/' || p.data[p.pos+1] == '*'):
			if !p.comments {
				return errComments
			}
			if p.data[p.pos+1] == '/' {
				i := bytes.IndexByte(p.data[p.pos:], '\n')
				if i < 0 {
					p.pos = len(p.data)
				} else {
					p.pos += i
				}
				continue
			}
			i := bytes.Index(p.data[p.pos+2:], []byte("*/"))
			if i < 0 {
				return p.errorf("unterminated comment")
			}
			p.pos += 2 + i + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *jparser) value() (*jnode, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of the document")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		start := p.pos
		if _, err := p.str(); err != nil {
			return nil, err
		}
		return &jnode{kind: '"', start: start, end: p.pos}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
				start := p.pos
				p.pos += len(lit)
				return &jnode{kind: 'l', start: start, end: p.pos}, nil
			}
		}
		return nil, p.errorf("unexpected %q", c)
	}
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errorf("nested too deeply")
	}
	return nil
}

func (p *jparser) object() (*jnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &jnode{kind: '{', start: p.pos}
	p.pos++ // {
	seen := map[string]bool{}
	for first := true; ; first = false {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' && first {
			break
		}
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a key in quotes")
		}
		ks := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		ke := p.pos
		if seen[key] {
			return nil, p.errorf("duplicate key %q", key)
		}
		seen[key] = true
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after key %q", key)
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, jmember{key: key, keyStart: ks, keyEnd: ke, val: v})
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			break
		}
		return nil, p.errorf("expected ',' or '}' after the value of %q", key)
	}
	p.pos++ // }
	n.end = p.pos
	return n, nil
}

func (p *jparser) array() (*jnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &jnode{kind: '[', start: p.pos}
	p.pos++ // [
	for first := true; ; first = false {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' && first {
			break
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			break
		}
		return nil, p.errorf("expected ',' or ']' in a list")
	}
	p.pos++ // ]
	n.end = p.pos
	return n, nil
}

// str reads a string token and returns its value.
func (p *jparser) str() (string, error) {
	start := p.pos
	p.pos++ // "
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				return "", p.errorf("invalid string: %v", err)
			}
			return s, nil
		case c == '\\':
			p.pos += 2
		case c < 0x20:
			return "", p.errorf("control character in a string")
		default:
			p.pos++
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *jparser) number() (*jnode, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if n := digits(); n == 0 || (n > 1 && p.data[intStart] == '0') {
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	return &jnode{kind: '0', start: start, end: p.pos}, nil
}

// model is the node's value as setup edits it: *object, []any, string,
// json.Number, bool or nil.
func (n *jnode) model(data []byte) any {
	switch n.kind {
	case '{':
		o := newObject()
		for _, m := range n.members {
			o.set(m.key, m.val.model(data))
		}
		return o
	case '[':
		a := make([]any, 0, len(n.elems))
		for _, e := range n.elems {
			a = append(a, e.model(data))
		}
		return a
	case '"':
		var s string
		json.Unmarshal(data[n.start:n.end], &s)
		return s
	case '0':
		return json.Number(data[n.start:n.end])
	}
	switch string(data[n.start:n.end]) {
	case "true":
		return true
	case "false":
		return false
	}
	return nil
}

// sameValue reports whether two values are equal as JSON (an object's key
// order aside).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for _, k := range x.keys {
			yv, ok := y.vals[k]
			if !ok || !sameValue(x.vals[k], yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	default:
		return a == b
	}
}

// textStyle is how a file writes JSON, so that inserted text looks like
// the rest.
type textStyle struct {
	unit  string // one level of indentation
	nl    string // "\n" or "\r\n"
	colon string // between a key and its value: ": ", ":"
}

func styleOf(data []byte, root *jnode) textStyle {
	st := textStyle{unit: "  ", nl: "\n", colon: ": "}
	if bytes.Contains(data, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	if root != nil && multiLine(data, root) {
		if ind, ok := childIndent(data, root); ok && ind != "" {
			st.unit = ind
		}
	}
	// The colon of the first member anywhere.
	var find func(n *jnode) bool
	find = func(n *jnode) bool {
		if n == nil {
			return false
		}
		if len(n.members) > 0 {
			m := n.members[0]
			if sep := string(data[m.keyEnd:m.val.start]); strings.TrimSpace(sep) == ":" && !strings.ContainsAny(sep, "\r\n") {
				st.colon = sep
			}
			return true
		}
		for _, e := range n.elems {
			if find(e) {
				return true
			}
		}
		return false
	}
	find(root)
	return st
}

// firstChild is where a container's first member or element starts (-1:
// it has none).
func firstChild(n *jnode) int {
	switch {
	case len(n.members) > 0:
		return n.members[0].keyStart
	case len(n.elems) > 0:
		return n.elems[0].start
	}
	return -1
}

// multiLine reports whether a container puts its children on lines of
// their own.
func multiLine(data []byte, n *jnode) bool {
	fc := firstChild(n)
	return fc >= 0 && bytes.ContainsAny(data[n.start:fc], "\n")
}

// childIndent is the indentation of a multi-line container's first child
// (ok false when the child does not start its line).
func childIndent(data []byte, n *jnode) (string, bool) {
	fc := firstChild(n)
	if fc < 0 {
		return "", false
	}
	ls := bytes.LastIndexByte(data[:fc], '\n') + 1
	ind := string(data[ls:fc])
	if strings.Trim(ind, " \t") != "" {
		return "", false
	}
	return ind, true
}

// lineIndent is the indentation of the line that holds pos.
func lineIndent(data []byte, pos int) string {
	ls := bytes.LastIndexByte(data[:pos], '\n') + 1
	i := ls
	for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
		i++
	}
	return string(data[ls:i])
}

// textEdit replaces data[start:end] with text.
type textEdit struct {
	start, end int
	text       string
}

// reconcile returns data edited so that its value is want, changing only
// the members and elements that differ. It makes one edit at a time and
// parses again, so every edit sees true positions.
func reconcile(data []byte, want *object, comments bool) ([]byte, error) {
	for range 10000 {
		root, err := parseJSONText(data, comments)
		if err != nil {
			return nil, fmt.Errorf("setup: internal: an edit broke the document: %v", err)
		}
		st := styleOf(data, root)
		r := &reconciler{data: data, st: st}
		e, ok := r.next(root, want, true)
		if !ok {
			return data, nil
		}
		out := make([]byte, 0, len(data)+len(e.text))
		out = append(out, data[:e.start]...)
		out = append(out, e.text...)
		out = append(out, data[e.end:]...)
		data = out
	}
	return nil, errors.New("setup: internal: the edit did not settle")
}

type reconciler struct {
	data []byte
	st   textStyle
}

// next is the first edit that brings n closer to want (ok false: n is
// want already). multi says whether n, if it is an empty container,
// takes its children on lines of their own.
func (r *reconciler) next(n *jnode, want any, multi bool) (textEdit, bool) {
	have := n.model(r.data)
	if sameValue(have, want) {
		return textEdit{}, false
	}
	switch {
	case n.kind == '{':
		if w, ok := want.(*object); ok {
			return r.object(n, w, multi), true
		}
	case n.kind == '[':
		if w, ok := want.([]any); ok {
			return r.array(n, w, multi), true
		}
	}
	// Another kind of value, or another scalar: replace it whole.
	return textEdit{n.start, n.end, r.format(want, lineIndent(r.data, n.start), multi)}, true
}

func (r *reconciler) childMulti(n *jnode, multi bool) bool {
	if firstChild(n) >= 0 {
		return multiLine(r.data, n)
	}
	return multi
}

func (r *reconciler) object(n *jnode, want *object, multi bool) textEdit {
	cm := r.childMulti(n, multi)
	for i, m := range n.members {
		if _, ok := want.vals[m.key]; !ok {
			return r.remove(n, i)
		}
	}
	for _, m := range n.members {
		if e, ok := r.next(m.val, want.vals[m.key], cm); ok {
			return e
		}
	}
	have := map[string]bool{}
	for _, m := range n.members {
		have[m.key] = true
	}
	for _, k := range want.keys {
		if !have[k] {
			var kb bytes.Buffer
			writeString(&kb, k)
			return r.insert(n, len(n.members), kb.String()+r.st.colon, want.vals[k], multi)
		}
	}
	panic("setup: reconcile: objects differ yet no member does")
}

func (r *reconciler) array(n *jnode, want []any, multi bool) textEdit {
	cm := r.childMulti(n, multi)
	have := make([]any, len(n.elems))
	for i, e := range n.elems {
		have[i] = e.model(r.data)
	}
	// Align have and want (longest common subsequence), then mend the
	// first stretch that differs.
	h, w := len(have), len(want)
	lcs := make([][]int, h+1)
	for i := range lcs {
		lcs[i] = make([]int, w+1)
	}
	for i := h - 1; i >= 0; i-- {
		for j := w - 1; j >= 0; j-- {
			if sameValue(have[i], want[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < h || j < w {
		switch {
		case i < h && j < w && sameValue(have[i], want[j]):
			i, j = i+1, j+1
		case i < h && j < w && lcs[i+1][j] == lcs[i][j] && lcs[i][j+1] == lcs[i][j]:
			// Both sides have an unmatched element here: mend the old one
			// into the new one (a group whose hooks changed keeps its place
			// and its layout).
			if e, ok := r.next(n.elems[i], want[j], cm); ok {
				return e
			}
			i, j = i+1, j+1
		case i < h && (j == w || lcs[i+1][j] >= lcs[i][j+1]):
			return r.remove(n, i)
		default:
			return r.insert(n, i, "", want[j], multi)
		}
	}
	panic("setup: reconcile: lists differ yet no element does")
}

// insert puts a member (prefix is its key and colon) or an element at
// position at of container n, in n's style: after the last child it
// is ",<newline><indent>child" (or ", child" on one line), before a
// child it is "child,<newline><indent>", in an empty container it is
// "<newline><indent>child<newline>"; remove takes out exactly that.
func (r *reconciler) insert(n *jnode, at int, prefix string, v any, multi bool) textEdit {
	count := len(n.members) + len(n.elems)
	starts := func(i int) int {
		if n.kind == '{' {
			return n.members[i].keyStart
		}
		return n.elems[i].start
	}
	ends := func(i int) int {
		if n.kind == '{' {
			return n.members[i].val.end
		}
		return n.elems[i].end
	}
	if count == 0 {
		// A container found empty takes its first child in the other
		// layout than a container setup creates here would have (multi),
		// so that --remove can tell the two apart (setup.foundEmpty).
		if multi {
			return textEdit{n.start + 1, n.end - 1, prefix + r.format(v, "", false)}
		}
		ind := lineIndent(r.data, n.start)
		child := ind + r.st.unit
		return textEdit{n.start + 1, n.end - 1, r.st.nl + child + prefix + r.format(v, child, true) + r.st.nl + ind}
	}
	if multiLine(r.data, n) {
		ind, ok := childIndent(r.data, n)
		if !ok {
			ind = lineIndent(r.data, n.start) + r.st.unit
		}
		text := prefix + r.format(v, ind, true)
		if at == count {
			return textEdit{ends(at - 1), ends(at - 1), "," + r.st.nl + ind + text}
		}
		return textEdit{starts(at), starts(at), text + "," + r.st.nl + ind}
	}
	sep := ", "
	if count >= 2 {
		if s := string(r.data[ends(0):starts(1)]); strings.TrimSpace(s) == "," {
			sep = s
		}
	}
	text := prefix + r.format(v, "", false)
	if at == count {
		return textEdit{ends(at - 1), ends(at - 1), sep + text}
	}
	return textEdit{starts(at), starts(at), text + sep}
}

// remove takes out child i of container n with its separator: the last
// child from the end of the one before it, any other up to the start of
// the next one, an only child with all the space around it.
func (r *reconciler) remove(n *jnode, i int) textEdit {
	count := len(n.members) + len(n.elems)
	starts := func(i int) int {
		if n.kind == '{' {
			return n.members[i].keyStart
		}
		return n.elems[i].start
	}
	ends := func(i int) int {
		if n.kind == '{' {
			return n.members[i].val.end
		}
		return n.elems[i].end
	}
	switch {
	case count == 1:
		return textEdit{n.start + 1, n.end - 1, ""}
	case i == count-1:
		return textEdit{ends(i - 1), ends(i), ""}
	}
	return textEdit{starts(i), starts(i + 1), ""}
}

// format writes v in the file's style: over several lines, each nested
// line indented from ind, or on one line.
func (r *reconciler) format(v any, ind string, multi bool) string {
	var b bytes.Buffer
	if multi {
		writeStyled(&b, v, ind, r.st)
	} else {
		writeCompact(&b, v, r.st)
	}
	return b.String()
}

// writeStyled writes v over several lines like the agents write their
// files (indentation per st), its first line not indented.
func writeStyled(b *bytes.Buffer, v any, indent string, st textStyle) {
	switch t := v.(type) {
	case *object:
		if len(t.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{" + st.nl)
		for i, k := range t.keys {
			b.WriteString(indent + st.unit)
			writeString(b, k)
			b.WriteString(st.colon)
			writeStyled(b, t.vals[k], indent+st.unit, st)
			if i < len(t.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteString(st.nl)
		}
		b.WriteString(indent + "}")
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[" + st.nl)
		for i, e := range t {
			b.WriteString(indent + st.unit)
			writeStyled(b, e, indent+st.unit, st)
			if i < len(t)-1 {
				b.WriteByte(',')
			}
			b.WriteString(st.nl)
		}
		b.WriteString(indent + "]")
	default:
		writeScalar(b, v)
	}
}

// writeCompact writes v on one line: {"a": 1, "b": [2, 3]}.
func writeCompact(b *bytes.Buffer, v any, st textStyle) {
	colon := strings.TrimRight(st.colon, " ") + " "
	if st.colon == ":" {
		colon = ":"
	}
	switch t := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, k)
			b.WriteString(colon)
			writeCompact(b, t.vals[k], st)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writeCompact(b, e, st)
		}
		b.WriteByte(']')
	default:
		writeScalar(b, v)
	}
}

func writeScalar(b *bytes.Buffer, v any) {
	switch t := v.(type) {
	case string:
		writeString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		fmt.Fprint(b, t)
	case nil:
		b.WriteString("null")
	case int:
		fmt.Fprint(b, t)
	default:
		panic(fmt.Sprintf("setup: cannot write %T", v))
	}
}
