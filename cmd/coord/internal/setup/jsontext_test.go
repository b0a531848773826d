package setup

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseJSONText(t *testing.T) {
	for _, c := range []struct {
		in       string
		comments bool
		err      string // "" : parses
	}{
		{`{"a": [1, -2.5e3, true, null, "x\"y"]}`, false, ""},
		{"  \n", false, ""},
		{`{"a": 1, "a": 2}`, false, "duplicate key"},
		{`{"a": 01}`, false, "invalid number"},
		{`{"a": 1,}`, false, "expected a key"},
		{`{"a": 1} x`, false, "trailing data"},
		{`[1]`, false, "not a JSON object"},
		{"{\"a\": \"\xff\"}", false, "invalid UTF-8"},
		{"{\"a\": \"x\ny\"}", false, "control character"},
		{"// c\n{\"a\": 1 /* b */}", false, "comments"},
		{"// c\n{\"a\": 1 /* b */} // d", true, ""},
		{"{\"a\": 1 /* b }", true, "unterminated comment"},
		{"[" + strings.Repeat(" ", 3) + "]", false, "not a JSON object"},
		{"{\"a\":" + strings.Repeat("[", 300), false, "nested too deeply"},
	} {
		_, err := parseJSONText([]byte(c.in), c.comments)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want an error saying %q", c.in, err, c.err)
		}
	}
}

// FuzzReconcile: what parses is JSON; reconciling a document with its own
// value changes nothing; adding a member and taking it out again gives
// the document back byte for byte.
func FuzzReconcile(f *testing.F) {
	for _, u := range userFiles {
		if strings.HasSuffix(u.rel, ".json") {
			f.Add(u.data)
		}
	}
	f.Add(`{"a":{"b":[1,{"c":[]}]},"d":"\u00e9"}`)
	f.Add("{\r\n\t\"x\" : [ ] ,\r\n\t\"y\":{}\r\n}")
	f.Fuzz(func(t *testing.T, s string) {
		for _, comments := range []bool{false, true} {
			data := []byte(s)
			root, err := parseJSONText(data, comments)
			if err != nil || root == nil {
				continue
			}
			if !comments && !json.Valid(data) {
				t.Fatalf("parsed, yet not JSON: %q", s)
			}
			doc := root.model(data).(*object)
			same, err := reconcile(data, doc, comments)
			if err != nil || string(same) != s {
				t.Fatalf("reconcile with its own value changed %q into %q (%v)", s, same, err)
			}
			if len(root.members) == 0 && root.end-root.start != 2 {
				continue // "{ }": an insertion there does not keep the space
			}
			if _, taken := doc.vals["coord-fuzz"]; taken {
				continue
			}
			entry := newObject()
			entry.set("command", "coord")
			entry.set("args", []any{"mcp", json.Number("1")})
			doc.set("coord-fuzz", entry)
			added, err := reconcile(data, doc, comments)
			if err != nil {
				t.Fatalf("adding to %q: %v", s, err)
			}
			r2, err := parseJSONText(added, comments)
			if err != nil || !sameValue(r2.model(added), doc) {
				t.Fatalf("adding to %q gave %q (%v)", s, added, err)
			}
			doc.del("coord-fuzz")
			back, err := reconcile(added, doc, comments)
			if err != nil || string(back) != s {
				t.Fatalf("add then remove: %q became %q then %q (%v)", s, added, back, err)
			}
		}
	})
}

// FuzzCodexConfig: for any config.toml setup can merge that has none of
// coord's lines yet, setup then --remove gives it back byte for byte, and
// what setup writes parses.
func FuzzCodexConfig(f *testing.F) {
	for _, u := range userFiles {
		if u.rel == codexConfig {
			f.Add(u.data)
		}
	}
	f.Add(existing[codexConfig])
	f.Add("a = 1\r\n[t]\r\nb = \"\"\"\nx\n\n\"\"\"")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(s, "coord") {
			return
		}
		st := &setup{opt: Options{Agent: "codex", Command: "coord"}}
		added, err := st.editCodexConfig([]byte(s), false)
		if err != nil {
			return // not TOML setup can read
		}
		back, err := st.editCodexConfig(added, true)
		if err != nil || string(back) != s {
			t.Fatalf("setup then --remove: %q became %q then %q (%v)", s, added, back, err)
		}
	})
}
