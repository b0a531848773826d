package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// ParseError is a strict-JSON or schema error in a named file.
type ParseError struct {
	File string
	Msg  string
}

func (e *ParseError) Error() string { return e.File + ": " + e.Msg }

// decoder wraps jsontext.Decoder over an in-memory document. jsontext
// rejects duplicate names and invalid UTF-8 by default and bounds nesting.
type decoder struct {
	*jsontext.Decoder
	data []byte
	file string
}

func newDecoder(file string, data []byte) (*decoder, error) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, &ParseError{file, "starts with a byte-order mark; save it as plain UTF-8"}
	}
	return &decoder{Decoder: jsontext.NewDecoder(bytes.NewBuffer(data)), data: data, file: file}, nil
}

func (d *decoder) fail(err error) error {
	if err == nil {
		return nil
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return err
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "jsontext: ")
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "unexpected end of JSON (truncated file?)"
	}
	return &ParseError{d.file, msg}
}

func (d *decoder) errf(format string, args ...any) error {
	return &ParseError{d.file, fmt.Sprintf(format, args...)}
}

// end checks that nothing but whitespace follows the top-level value.
func (d *decoder) end() error {
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			return d.errf("trailing data after the JSON value at byte %d", d.InputOffset())
		}
		return d.errf("trailing data after the JSON value: %v", strings.TrimPrefix(err.Error(), "jsontext: "))
	}
	return nil
}

// raw reads the next value and returns the slice of the input it spans.
func (d *decoder) raw() ([]byte, error) {
	v, err := d.ReadValue()
	if err != nil {
		return nil, d.fail(err)
	}
	end := d.InputOffset()
	return d.data[end-int64(len(v)) : end], nil
}

func (d *decoder) expect(kind jsontext.Kind, what string) error {
	tok, err := d.ReadToken()
	if err != nil {
		return d.fail(err)
	}
	if tok.Kind() != kind {
		return d.errf("%s must be %s, found %s", what, kindName(kind), kindName(tok.Kind()))
	}
	return nil
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '{', '}':
		return "an object"
	case '[', ']':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a value"
}

// name reads an object member name, or returns ok=false at the object's end.
func (d *decoder) name() (string, bool, error) {
	if d.PeekKind() == '}' {
		_, err := d.ReadToken()
		return "", false, d.fail(err)
	}
	tok, err := d.ReadToken()
	if err != nil {
		return "", false, d.fail(err)
	}
	return tok.String(), true, nil
}

// str reads a string, or "" for null when nullable.
func (d *decoder) str(what string, nullable bool) (string, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return "", d.fail(err)
	}
	switch tok.Kind() {
	case '"':
		return tok.String(), nil
	case 'n':
		if nullable {
			return "", nil
		}
	}
	return "", d.errf("%s must be a string, found %s", what, kindName(tok.Kind()))
}

// integer reads a non-negative integer that fits int64 (no fraction,
// exponent or sign), or 0 for null when nullable.
func (d *decoder) integer(what string, nullable bool) (int64, error) {
	if nullable && d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return 0, d.fail(err)
	}
	if d.PeekKind() != '0' {
		tok, err := d.ReadToken()
		if err != nil {
			return 0, d.fail(err)
		}
		return 0, d.errf("%s must be a number, found %s", what, kindName(tok.Kind()))
	}
	v, err := d.ReadValue()
	if err != nil {
		return 0, d.fail(err)
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return 0, d.errf("%s must be a non-negative integer below 2^63, found %s", what, clipBytes(v))
	}
	return n, nil
}

// fraction reads a number from 0 to 1.
func (d *decoder) fraction(what string) (float64, error) {
	if d.PeekKind() != '0' {
		tok, err := d.ReadToken()
		if err != nil {
			return 0, d.fail(err)
		}
		return 0, d.errf("%s must be a number, found %s", what, kindName(tok.Kind()))
	}
	v, err := d.ReadValue()
	if err != nil {
		return 0, d.fail(err)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f < 0 || f > 1 {
		return 0, d.errf("%s must be a number from 0 to 1, found %s", what, clipBytes(v))
	}
	return f, nil
}

func (d *decoder) boolean(what string) (bool, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return false, d.fail(err)
	}
	if k := tok.Kind(); k == 't' || k == 'f' {
		return tok.Bool(), nil
	}
	return false, d.errf("%s must be true or false, found %s", what, kindName(tok.Kind()))
}

// strs reads an array of strings (null allowed as empty).
func (d *decoder) strs(what string) ([]string, error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return nil, d.fail(err)
	}
	if err := d.expect('[', what); err != nil {
		return nil, err
	}
	var out []string
	for d.PeekKind() != ']' {
		s, err := d.str(what+" element", false)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	_, err := d.ReadToken()
	return out, d.fail(err)
}

func clipBytes(v []byte) string {
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}

// keySet detects object member names that differ only in case. Names that
// are all lowercase ASCII cannot form such a pair with each other, so only
// names with other characters are compared (cheap on snake_case files).
type keySet struct {
	names []string
}

func (k *keySet) reset() { k.names = k.names[:0] }

func (k *keySet) add(name string) (clash string) {
	plain := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if !plain {
		for _, n := range k.names {
			if n != name && strings.EqualFold(n, name) {
				return n
			}
		}
	} else {
		for _, n := range k.names {
			if len(n) == len(name) && n != name && !isPlain(n) && strings.EqualFold(n, name) {
				return n
			}
		}
	}
	k.names = append(k.names, name)
	return ""
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// CheckStrict validates any JSON document strictly (duplicate names,
// case-variant names at every depth, invalid UTF-8, trailing data).
func CheckStrict(file string, data []byte) error {
	d, err := newDecoder(file, data)
	if err != nil {
		return err
	}
	var stack []*keySet
	for {
		tok, err := d.ReadToken()
		if err == io.EOF {
			if len(stack) > 0 || len(bytes.TrimSpace(data)) == 0 {
				return d.errf("unexpected end of JSON (empty or truncated file?)")
			}
			return nil
		}
		if err != nil {
			return d.fail(err)
		}
		switch tok.Kind() {
		case '{':
			stack = append(stack, &keySet{})
		case '[':
			stack = append(stack, nil)
		case '}', ']':
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return d.end()
			}
		case '"':
			if top := len(stack); top > 0 && stack[top-1] != nil {
				// In an object, a string token at an even member index is a name.
				if _, idx := d.StackIndex(d.StackDepth()); idx%2 == 1 {
					if c := stack[top-1].add(tok.String()); c != "" {
						return d.errf("keys %q and %q differ only in case", c, tok.String())
					}
				}
			}
			if len(stack) == 0 {
				return d.end()
			}
		default:
			if len(stack) == 0 {
				return d.end()
			}
		}
	}
}

// Unmarshal reads a JSON document strictly (CheckStrict) into v with
// encoding/json; file names it in errors, which are *ParseError.
func Unmarshal(file string, data []byte, v any) error {
	if err := CheckStrict(file, data); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &ParseError{file, err.Error()}
	}
	return nil
}
