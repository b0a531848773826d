package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth bounds nesting, as jsontext does: deeper input is refused, not
// recursed into.
const maxDepth = 10000

// scanner is a strict, allocation-light JSON reader over an in-memory
// document, written for the registry's hot path (every command parses the
// whole registry). It accepts exactly RFC 8259 JSON with valid UTF-8
// (lone surrogate escapes refused) and unique object member names at
// every depth. Spans it returns point into data, which must not change.
type scanner struct {
	data  []byte
	i     int
	depth int
	file  string
	// oneLine: data is one line of a larger file (a seed or archive
	// line) whose number file already names; errors give the column only.
	oneLine bool
}

func (s *scanner) errf(format string, args ...any) error {
	line, col := 1, 1
	for _, c := range s.data[:min(s.i, len(s.data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	if s.oneLine {
		return &ParseError{s.file, fmt.Sprintf(format, args...) + fmt.Sprintf(" (column %d)", col)}
	}
	return &ParseError{s.file, fmt.Sprintf(format, args...) + fmt.Sprintf(" (line %d, column %d)", line, col)}
}

func (s *scanner) ws() {
	if s.i < len(s.data) && s.data[s.i] > ' ' { // the common case: no space
		return
	}
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte (0 at the end).
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) unexpected(what string) error {
	if s.i >= len(s.data) {
		return s.errf("unexpected end of JSON (truncated file?) where %s was expected", what)
	}
	r, _ := utf8.DecodeRune(s.data[s.i:])
	return s.errf("unexpected %q where %s was expected", r, what)
}

// str reads a string at s.i (which must be '"') and returns the span of
// its content and whether it has escapes.
func (s *scanner) str() (start, end int, esc bool, err error) {
	if s.peek() != '"' {
		return 0, 0, false, s.unexpected("a string")
	}
	s.i++
	start = s.i
	d := s.data
	for s.i < len(d) {
		// Fast path: plain ASCII runs.
		for s.i < len(d) && plain[d[s.i]] {
			s.i++
		}
		if s.i >= len(d) {
			break
		}
		c := d[s.i]
		switch {
		case c == '"':
			end = s.i
			s.i++
			return start, end, esc, nil
		case c == '\\':
			esc = true
			if err := s.escape(); err != nil {
				return 0, 0, false, err
			}
		case c < 0x20:
			return 0, 0, false, s.errf("control character %#x inside a string", c)
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(d[s.i:])
			if r == utf8.RuneError && n <= 1 {
				return 0, 0, false, s.errf("invalid UTF-8 inside a string")
			}
			s.i += n
		}
	}
	return 0, 0, false, s.errf("unexpected end of JSON inside a string (truncated file?)")
}

// plain marks bytes that need no attention inside a string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *scanner) escape() error {
	d := s.data
	if s.i+1 >= len(d) {
		return s.errf("unexpected end of JSON inside a string escape")
	}
	switch d[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return nil
	case 'u':
		r, ok := hex4(d, s.i+2)
		if !ok {
			return s.errf("invalid \\u escape")
		}
		s.i += 6
		if utf16.IsSurrogate(r) {
			if r >= 0xdc00 || s.i+1 >= len(d) || d[s.i] != '\\' || d[s.i+1] != 'u' {
				return s.errf("unpaired UTF-16 surrogate escape (invalid Unicode)")
			}
			r2, ok := hex4(d, s.i+2)
			if !ok || r2 < 0xdc00 || r2 > 0xdfff {
				return s.errf("unpaired UTF-16 surrogate escape (invalid Unicode)")
			}
			s.i += 6
		}
		return nil
	}
	return s.errf("invalid escape \\%c in a string", d[s.i+1])
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// text returns a string span as a Go string: a view of data when it has
// no escapes (no copy), else the unescaped copy.
func (s *scanner) text(start, end int, esc bool) string {
	if !esc {
		if start == end {
			return ""
		}
		return unsafe.String(&s.data[start], end-start)
	}
	b := make([]byte, 0, end-start)
	d := s.data
	for i := start; i < end; {
		c := d[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		switch d[i+1] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, _ := hex4(d, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				r2, _ := hex4(d, i+2)
				r = utf16.DecodeRune(r, r2)
				i += 6
			}
			b = utf8.AppendRune(b, r)
			continue
		default: // " \ /
			b = append(b, d[i+1])
		}
		i += 2
	}
	return string(b)
}

// number reads a JSON number and returns its span.
func (s *scanner) number() (int, int, error) {
	d := s.data
	start := s.i
	i := s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.i = i
		return 0, 0, s.unexpected("a digit")
	}
	if i < len(d) && d[i] == '.' {
		i++
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			s.i = i
			return 0, 0, s.unexpected("a digit after '.'")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			s.i = i
			return 0, 0, s.unexpected("a digit in the exponent")
		}
	}
	s.i = i
	return start, i, nil
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return s.unexpected("a JSON value")
	}
	s.i += len(lit)
	return nil
}

// value validates one value of any kind.
func (s *scanner) value() error {
	switch s.peek() {
	case '{':
		return s.object(func(string) error { return s.value() })
	case '[':
		return s.array(s.value)
	case '"':
		_, _, _, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, _, err := s.number()
		return err
	}
	return s.unexpected("a JSON value")
}

// array reads '[' elem (',' elem)* ']' calling elem for each element.
func (s *scanner) array(elem func() error) error {
	if !s.eat('[') {
		return s.unexpected("'['")
	}
	if s.depth++; s.depth > maxDepth {
		return s.errf("nesting deeper than %d", maxDepth)
	}
	defer func() { s.depth-- }()
	if s.eat(']') {
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if s.eat(',') {
			continue
		}
		if s.eat(']') {
			return nil
		}
		return s.unexpected("',' or ']'")
	}
}

// object reads an object, calling member with each name while positioned
// at its value; member must consume the value. Duplicate names, and names
// that differ only in case, are errors.
func (s *scanner) object(member func(name string) error) error {
	return s.objectKnown(nil, nil, func(name string, _ int) error { return member(name) })
}

// objectKnown is object for objects whose usual member names are known:
// index maps a name to its position in known (or -1). Known names are
// checked for duplicates with a bit set instead of comparisons, which is
// most of the cost of reading a registry of many tasks. member receives
// the name's index in known (-1 for others).
func (s *scanner) objectKnown(known []string, index func(string) int, member func(name string, k int) error) error {
	if !s.eat('{') {
		return s.unexpected("'{'")
	}
	if s.depth++; s.depth > maxDepth {
		return s.errf("nesting deeper than %d", maxDepth)
	}
	defer func() { s.depth-- }()
	if s.eat('}') {
		return nil
	}
	var seenKnown uint64
	var small [24]string
	names := small[:0]        // the names not tracked by seenKnown
	var big map[string]string // foldKey -> name, replacing names once it is large
	folded := false           // some name so far has upper-case or non-ASCII
	for {
		a, b, esc, err := s.str()
		if err != nil {
			return err
		}
		name := s.text(a, b, esc)
		plain := isPlain(name)
		k := -1
		if index != nil && plain {
			k = index(name)
		}
		switch {
		case k >= 0:
			if seenKnown&(1<<k) != 0 {
				return s.nameClash(name, name)
			}
			seenKnown |= 1 << k
			if folded { // an earlier odd name may fold to this one
				for _, n := range names {
					if strings.EqualFold(n, name) {
						return s.nameClash(n, name)
					}
				}
				if prev, ok := big[foldKey(name)]; ok {
					return s.nameClash(prev, name)
				}
			}
		case big != nil:
			fk := foldKey(name)
			if prev, dup := big[fk]; dup {
				return s.nameClash(prev, name)
			}
			big[fk] = name
		default:
			for _, n := range names {
				if n == name || (folded || !plain) && strings.EqualFold(n, name) {
					return s.nameClash(n, name)
				}
			}
			folded = folded || !plain
			names = append(names, name)
			if len(names) > 32 {
				big = make(map[string]string, 64)
				for _, n := range names {
					big[foldKey(n)] = n
				}
				names = names[:0]
			}
		}
		if k < 0 && !plain && seenKnown != 0 { // a known name seen earlier may fold to this one
			for i, kn := range known {
				if seenKnown&(1<<i) != 0 && strings.EqualFold(kn, name) {
					return s.nameClash(kn, name)
				}
			}
		}
		if !s.eat(':') {
			return s.unexpected("':'")
		}
		if err := member(name, k); err != nil {
			return err
		}
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return nil
		}
		return s.unexpected("',' or '}'")
	}
}

func (s *scanner) nameClash(prev, name string) error {
	if prev == name {
		return s.errf("duplicate key %q", name)
	}
	return s.errf("keys %q and %q differ only in case", prev, name)
}

// foldKey maps a name to a canonical member of its case-folding class
// (rune by rune, the smallest rune of each simple-folding orbit), so two
// names are strings.EqualFold exactly when their keys are equal.
func foldKey(name string) string {
	b := make([]rune, 0, len(name))
	for _, r := range name {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b = append(b, m)
	}
	return string(b)
}

// end checks that only whitespace follows.
func (s *scanner) end() error {
	if s.peek() != 0 || s.i < len(s.data) {
		return s.errf("trailing data after the JSON value")
	}
	return nil
}

// Typed readers for known fields; what names the field in errors.

func (s *scanner) kindName() string {
	switch s.peek() {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case 0:
		return "the end of the file"
	}
	return "a number"
}

func (s *scanner) strVal(what string, nullable bool) (string, error) {
	switch s.peek() {
	case '"':
		a, b, esc, err := s.str()
		if err != nil {
			return "", err
		}
		return s.text(a, b, esc), nil
	case 'n':
		if nullable {
			return "", s.literal("null")
		}
	}
	return "", s.errf("%s must be a string, found %s", what, s.kindName())
}

func (s *scanner) intVal(what string, nullable bool) (int64, error) {
	c := s.peek()
	if c == 'n' && nullable {
		return 0, s.literal("null")
	}
	if c != '-' && (c < '0' || c > '9') {
		return 0, s.errf("%s must be a number, found %s", what, s.kindName())
	}
	a, b, err := s.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(unsafe.String(&s.data[a], b-a), 10, 64)
	if err != nil || n < 0 {
		return 0, s.errf("%s must be a non-negative integer below 2^63, found %s", what, clipBytes(s.data[a:b]))
	}
	return n, nil
}

// floatVal reads a non-negative number (a duration in seconds).
func (s *scanner) floatVal(what string) (float64, error) {
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		return 0, s.errf("%s must be a number, found %s", what, s.kindName())
	}
	a, b, err := s.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(unsafe.String(&s.data[a], b-a), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) {
		return 0, s.errf("%s must be a non-negative number, found %s", what, clipBytes(s.data[a:b]))
	}
	return f, nil
}

// floatsVal reads an array of non-negative numbers (null: none).
func (s *scanner) floatsVal(what string) ([]float64, error) {
	if s.peek() == 'n' {
		return nil, s.literal("null")
	}
	if s.peek() != '[' {
		return nil, s.errf("%s must be an array of numbers, found %s", what, s.kindName())
	}
	var out []float64
	err := s.array(func() error {
		v, err := s.floatVal(what + " element")
		out = append(out, v)
		return err
	})
	return out, err
}

func (s *scanner) strsVal(what string) ([]string, error) {
	if s.peek() == 'n' {
		return nil, s.literal("null")
	}
	if s.peek() != '[' {
		return nil, s.errf("%s must be an array of strings, found %s", what, s.kindName())
	}
	var out []string
	err := s.array(func() error {
		if s.peek() != '"' { // name the element only on error: no string built per call
			return s.errf("%s element must be a string, found %s", what, s.kindName())
		}
		v, err := s.strVal(what, false)
		out = append(out, v)
		return err
	})
	return out, err
}
