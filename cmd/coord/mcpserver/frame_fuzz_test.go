package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// FuzzReadFrame: whatever the input, the limit and the reader's buffer,
// readFrame returns the input's lines in order: a line of at most limit
// bytes (its LF or CRLF ending not counted) whole, a longer one as its
// size alone.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\nccc"), uint16(2))
	f.Add([]byte(`{"id":1}`+"\n"+`{"jsonrpc":"2.0","id":"x","method":"m","params":{"p":"0123456789"}}`), uint16(20))
	f.Add([]byte("\r\n\r\r\n"), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16) // the smallest buffer: lines span many reads
		rest := data
		for i := 0; ; i++ {
			line, size, _, err := readFrame(br, int(limit))
			var want []byte
			if j := bytes.IndexByte(rest, '\n'); j >= 0 {
				want, rest = rest[:j], rest[j+1:]
				want = bytes.TrimSuffix(want, []byte("\r"))
				if err != nil {
					t.Fatalf("line %d: %v before the input's end", i, err)
				}
			} else {
				want, rest = rest, nil
				if err != io.EOF {
					t.Fatalf("last line %d: err %v, want EOF", i, err)
				}
			}
			if size != len(want) {
				t.Fatalf("line %d: size %d, want %d (%q)", i, size, len(want), want)
			}
			if size <= int(limit) && !bytes.Equal(line, want) {
				t.Fatalf("line %d: %q, want %q", i, line, want)
			}
			if size > int(limit) && line != nil {
				t.Fatalf("line %d: an oversized line was kept", i)
			}
			if err != nil {
				return
			}
		}
	})
}

// FuzzIDScanner: fed in two pieces, the scanner never holds more than
// maxIDBytes of a value, and on a JSON object whose one top-level "id"
// (written plainly) is a string or a number of at most maxIDBytes bytes
// it finds exactly that value, as written.
func FuzzIDScanner(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"m","params":{"a":[1,{"id":"no"}]},"id":"yes"}`), uint8(7))
	f.Add([]byte(`{"id":-12.5e3}`), uint8(3))
	f.Add([]byte(`{"x":"\"id\"","id" : "a\"b"}`), uint8(0))
	f.Add([]byte(`[{"id":1}]`), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var sc idScanner
		k := min(int(cut), len(data))
		sc.feed(data[:k])
		sc.feed(data[k:])
		if len(sc.id) > maxIDBytes {
			t.Fatalf("kept %d bytes", len(sc.id))
		}
		trimmed := bytes.TrimSpace(data)
		if !json.Valid(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' ||
			bytes.Count(data, []byte(`"id"`)) != 1 || bytes.Count(data, []byte(`"id":`)) != 1 {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(trimmed, &m) != nil {
			return
		}
		raw, ok := m["id"]
		if !ok {
			return
		}
		if (raw[0] == '"' || raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && len(raw) <= maxIDBytes {
			if !bytes.Equal(sc.id, raw) {
				t.Fatalf("id %q, want %q", sc.id, raw)
			}
		} else if sc.id != nil {
			t.Fatalf("id %q for a member %q that is no id", sc.id, raw)
		}
	})
}

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
	required := map[string][]string{"progress": {"task", "percent"}, "kv": {"op"}}
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

// FuzzDecodeMessage: whatever the line, decodeMessage never panics, and
// what it accepts is a JSON-RPC 2.0 request, notification or response.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","result":{}}`))
	f.Add([]byte(`{"id":{},"method":"x"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || !json.Valid(line) {
			return // the framer's to refuse
		}
		m, err := decodeMessage(line)
		if err != nil {
			return
		}
		if m.JSONRPC != "2.0" {
			t.Fatalf("accepted %q: jsonrpc %q", line, m.JSONRPC)
		}
		if m.ID != nil && !validID(m.ID) {
			t.Fatalf("accepted %q: id %s", line, m.ID)
		}
		if m.Method == nil && (m.ID == nil || m.Result == nil && m.Error == nil) {
			t.Fatalf("accepted %q: neither a request nor a response", line)
		}
	})
}
