package format

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// TestConfigKeysAreParsed: ConfigKeys names exactly the keys parseConfig
// reads (the cases of its switch, read from the source), so a setting
// added to the reader is one config set accepts and config show lists;
// each has a default as config.json spells it, and the defaults read back
// as coord.DefaultConfig.
func TestConfigKeysAreParsed(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "config.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	ast.Inspect(f, func(n ast.Node) bool {
		fd, ok := n.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "parseConfig" {
			return true
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if cc, ok := n.(*ast.CaseClause); ok {
				for _, e := range cc.List {
					if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
						s, _ := strconv.Unquote(bl.Value)
						cases = append(cases, s)
					}
				}
			}
			return true
		})
		return false
	})
	slices.Sort(cases)
	keys := slices.Sorted(slices.Values(ConfigKeys))
	if !slices.Equal(cases, keys) {
		t.Fatalf("parseConfig reads %v; ConfigKeys lists %v", cases, keys)
	}
	def := defaultSettings()
	doc := map[string]json.RawMessage{}
	for _, k := range ConfigKeys {
		v, ok := def[k]
		if !ok {
			t.Fatalf("no default for %s", k)
		}
		if string(v) != "null" {
			doc[k] = v
		}
	}
	b, _ := json.Marshal(doc)
	c, err := ParseConfig("defaults", b)
	if err != nil {
		t.Fatalf("the defaults do not read: %v\n%s", err, b)
	}
	if want := coord.DefaultConfig(); c.StaleAfter != want.StaleAfter || c.BeatInterval != want.BeatInterval ||
		c.LockWait != want.LockWait || c.OnStale != want.OnStale || c.SweepOnClaim != want.SweepOnClaim || c.Scheduling != want.Scheduling ||
		c.Target != want.Target || c.WriteClaims != want.WriteClaims || c.WriteClaimsUntasked != want.WriteClaimsUntasked {
		t.Fatalf("defaults read as %+v, want %+v", c, want)
	}
}

func TestSetSetting(t *testing.T) {
	const stored = "{\n  \"stale_after\": \"15m\",\n  \"x-tool\": {\"keep\": [1, 2]},\n  \"review_gate\": false\n}\n"
	for _, c := range []struct {
		name    string
		doc     string
		key     string
		value   string // "" : unset
		want    string
		changed bool
		code    coord.Code
		errHas  string
	}{
		{"set in place", stored, "stale_after", `"10m"`,
			"{\n  \"stale_after\": \"10m\",\n  \"x-tool\": {\"keep\": [1, 2]},\n  \"review_gate\": false\n}\n", true, 0, ""},
		{"new key goes last", stored, "lock_wait", `"5s"`,
			"{\n  \"stale_after\": \"15m\",\n  \"x-tool\": {\"keep\": [1, 2]},\n  \"review_gate\": false,\n  \"lock_wait\": \"5s\"\n}\n", true, 0, ""},
		{"unset", stored, "review_gate", "",
			"{\n  \"stale_after\": \"15m\",\n  \"x-tool\": {\"keep\": [1, 2]}\n}\n", true, 0, ""},
		{"unset what is not set", stored, "lock_wait", "", stored, false, 0, ""},
		{"the same value", stored, "review_gate", `false`, stored, false, 0, ""},
		{"no file yet", "", "review_gate", `true`, "{\n  \"review_gate\": true\n}\n", true, 0, ""},
		{"the last key unset", "{\"review_gate\": true}", "review_gate", "", "{}\n", true, 0, ""},
		{"unknown key", stored, "stale_afterr", `"1m"`, "", false, coord.CodeUsage, `"stale_afterr" is not a setting (did you mean stale_after?)`},
		{"unknown key unset", stored, "x-tool", "", "", false, coord.CodeUsage, "is not a setting"},
		{"bad value", stored, "on_stale", `"later"`, "", false, coord.CodeUsage, `"on_stale" must be "requeue" or "block-if-progress", found "later"`},
		{"bad type", stored, "review_gate", `"yes"`, "", false, coord.CodeUsage, `"review_gate" must be true or false`},
		{"zero duration", stored, "stale_after", `"0s"`, "", false, coord.CodeUsage, "positive duration"},
		{"damaged file", `{"stale_after": "15m", "stale_after": "1m"}`, "lock_wait", `"5s"`, "", false, -1, "config.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v json.RawMessage
			if c.value != "" {
				v = json.RawMessage(c.value)
			}
			out, _, changed, err := SetSetting("config.json", []byte(c.doc), c.key, v)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) || (c.code > 0 && coord.CodeOf(err) != c.code) {
					t.Fatalf("error %v (code %d), want code %d naming %q", err, coord.CodeOf(err), c.code, c.errHas)
				}
				return
			}
			if err != nil || string(out) != c.want || changed != c.changed {
				t.Fatalf("got %q, changed %v, %v\nwant %q, changed %v", out, changed, err, c.want, c.changed)
			}
			if _, err := ParseConfig("out", out); err != nil {
				t.Fatalf("the result does not read: %v", err)
			}
		})
	}
}

func TestSettingValue(t *testing.T) {
	for _, c := range []struct{ key, text, want, errHas string }{
		{"stale_after", "10m", `"10m"`, ""},
		{"stale_after", "600", `"600"`, ""}, // a bare number is seconds, spelled as a string
		{"review_gate", "true", `true`, ""},
		{"review_gate", "yes", "", "must be true or false"},
		{"quota_daily_tokens", "1000", `1000`, ""},
		{"quota_daily_tokens", "-5", "", "non-negative integer"},
		{"lease_roster", `{"daily": ["a", "b"]}`, `{"daily":["a","b"]}`, ""},
		{"on_stale", "block-if-progress", `"block-if-progress"`, ""},
		{"on_stale", "bogus", "", `found "bogus"`},
		{"backend", "nats://h:4222/p", `"nats://h:4222/p"`, ""},
		{"colour", "blue", "", `"colour" is not a setting`},
		{"supervisors", `["alice", "lead-1"]`, `["alice","lead-1"]`, ""},
		{"supervisors", "alice", "", `"supervisors" must be an array`},
		{"supervisors", "[]", "", `"supervisors" is empty`},
		{"supervisors", `["a.b"]`, "", `invalid agent id "a.b"`},
	} {
		got, err := SettingValue(c.key, c.text)
		if c.errHas != "" {
			if err == nil || coord.CodeOf(err) != coord.CodeUsage || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%s %q: %s, %v; want usage naming %q", c.key, c.text, got, err, c.errHas)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s %q: %s, %v; want %s", c.key, c.text, got, err, c.want)
		}
	}
}

func TestSettings(t *testing.T) {
	list, err := Settings("config.json", []byte(`{"stale_after":"2m","x-tool":1}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]coord.Setting{}
	for _, s := range list {
		got[s.Key] = s
	}
	if s := got["stale_after"]; string(s.Value) != `"2m"` || !s.Set || !s.Known {
		t.Errorf("stale_after: %+v", s)
	}
	if s := got["beat_interval"]; string(s.Value) != `"1m"` || s.Set {
		t.Errorf("beat_interval: %+v", s)
	}
	if s := got["archive_after"]; string(s.Value) != "null" || s.Set {
		t.Errorf("archive_after: %+v", s)
	}
	if s := got["x-tool"]; string(s.Value) != "1" || !s.Set || s.Known || list[len(list)-1].Key != "x-tool" {
		t.Errorf("another tool's key: %+v", s)
	}
	if shortDuration(90*time.Minute) != "1h30m" || shortDuration(2*time.Hour) != "2h" || shortDuration(1500*time.Millisecond) != "1.5s" {
		t.Errorf("shortDuration: %s %s %s", shortDuration(90*time.Minute), shortDuration(2*time.Hour), shortDuration(1500*time.Millisecond))
	}
}

// FuzzSettingValue: whatever a person types for whatever key, SettingValue
// never panics, and a value it accepts is one SetSetting writes and
// ParseConfig reads back.
func FuzzSettingValue(f *testing.F) {
	for _, s := range [][2]string{{"stale_after", "10m"}, {"review_gate", "true"}, {"lease_roster", `{"daily":["a"]}`},
		{"quota_daily_tokens", "12"}, {"on_stale", "requeue"}, {"x", "y"}, {"stale_after", `"\u0000"`}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, key, text string) {
		v, err := SettingValue(key, text)
		if err != nil {
			if coord.CodeOf(err) != coord.CodeUsage {
				t.Fatalf("%q %q: code %d: %v", key, text, coord.CodeOf(err), err)
			}
			return
		}
		out, _, _, err := SetSetting("config.json", nil, key, v)
		if err != nil {
			t.Fatalf("%q %q: accepted as %s, then refused: %v", key, text, v, err)
		}
		if _, err := ParseConfig("out", out); err != nil {
			t.Fatalf("%q %q: written %q does not read: %v", key, text, out, err)
		}
	})
}
