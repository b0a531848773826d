package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzToolArguments: whatever the arguments, a tool's schema check never
// panics, and what it accepts is a JSON object whose every member the
// schema names, with every required member present, decoded into the
// tool's input.
func FuzzToolArguments(f *testing.F) {
	f.Add([]byte(`{"task":"t1","percent":50,"note":"x","epoch":3}`))
	f.Add([]byte(`{"lock":["a","b"],"unlock":null,"ttl":"5m"}`))
	f.Add([]byte(`{"limit":null,"explain":true}`))
	f.Add([]byte(`{"op":"set","key":"k","value":{"a":[1,2]},"ttl":"1m","expect_rev":2}`))
	f.Add([]byte(`{"percent":1.5,"task":null}`))
	f.Add([]byte(`null`))
	progress, files, ready, kv, status := schemaOf[progressIn](), schemaOf[filesIn](), schemaOf[readyIn](), schemaOf[kvIn](), schemaOf[noInput]()
	schemas := map[string]func(json.RawMessage) error{
		"progress": func(a json.RawMessage) error { var in progressIn; return progress.decode(a, &in) },
		"files":    func(a json.RawMessage) error { var in filesIn; return files.decode(a, &in) },
		"ready":    func(a json.RawMessage) error { var in readyIn; return ready.decode(a, &in) },
		"kv":       func(a json.RawMessage) error { var in kvIn; return kv.decode(a, &in) },
		"status":   func(a json.RawMessage) error { var in noInput; return status.decode(a, &in) },
	}
	known := map[string][]string{
		"progress": {"task", "percent", "note", "epoch"}, "files": {"lock", "unlock", "ttl", "write"},
		"ready": {"explain", "limit"}, "kv": {"op", "key", "value", "ttl", "expect_rev", "expect_absent"}, "status": nil,
	}
	// progress's task is optional: without it the tool acts on the one
	// task the session holds (or COORD_TASK inside coord run).
	required := map[string][]string{"progress": {"percent"}, "kv": {"op"}}
	f.Fuzz(func(t *testing.T, args []byte) {
		for name, decode := range schemas {
			if decode(args) != nil {
				continue
			}
			trimmed := bytes.Trim(args, jsonSpace)
			if len(trimmed) == 0 || string(trimmed) == "null" {
				if len(required[name]) > 0 {
					t.Fatalf("%s: no arguments accepted, but %v are required", name, required[name])
				}
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(args, &m); err != nil {
				t.Fatalf("%s: accepted %q, which is not a JSON object: %v", name, args, err)
			}
			for k := range m {
				ok := false
				for _, kn := range known[name] {
					ok = ok || k == kn
				}
				if !ok {
					t.Fatalf("%s: accepted the unknown member %q", name, k)
				}
			}
			for _, r := range required[name] {
				if _, ok := m[r]; !ok {
					t.Fatalf("%s: accepted arguments without %q", name, r)
				}
			}
		}
	})
}
