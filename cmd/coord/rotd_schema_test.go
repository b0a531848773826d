package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestFilesValidateAgainstROTDSchemas runs a realistic session (seeding,
// claims with capabilities, progress, blocks, a review round, releases,
// quota, heartbeats, a path lock, the log) with ROTD-shaped ids and
// capabilities, then validates every file coord wrote against ROTD's
// published JSON Schemas (draft-07, formats asserted) with a real
// validator. ROTD's example registry and dependency map are read as they
// are, too.
func TestFilesValidateAgainstROTDSchemas(t *testing.T) {
	t.Parallel()
	// ROTD's files, vendored unchanged with their MIT licence.
	schemaDir := filepath.Join("..", "..", "registry", "format", "testdata", "rotd")
	shared := filepath.Join(schemaDir, "schema")
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	compile := func(name string) *jsonschema.Schema {
		t.Helper()
		f, err := os.Open(filepath.Join(shared, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(name, doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	registrySchema := compile("work_registry.schema.json")
	lockSchema := compile("lock_file.schema.json")
	beatSchema := compile("heartbeat.schema.json")
	quotaSchema := compile("quota.schema.json")
	logSchema := compile("coordination_log.schema.json")
	depSchema := compile("dependency_map.schema.json")

	validate := func(s *jsonschema.Schema, what string, data []byte) {
		t.Helper()
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
		if err != nil {
			t.Fatalf("%s does not parse: %v", what, err)
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("%s does not validate against ROTD's schema:\n%v\n%s", what, err, data)
		}
	}

	// The validator must be able to say no (a control against a vacuous pass).
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"tasks":[{"id":"4.1","title":"x","status":"finished"}]}`))
	if registrySchema.Validate(v) == nil {
		t.Fatal("the validator accepted an invalid status")
	}
	v, _ = jsonschema.UnmarshalJSON(strings.NewReader(`{"holder":"a","since":"yesterday"}`))
	if lockSchema.Validate(v) == nil {
		t.Fatal("the validator does not assert date-time formats")
	}

	// ROTD's own examples, read and re-written by coord.
	root := t.TempDir()
	mustCoord(t, "--root", root, "init")
	dir := filepath.Join(root, ".rotd", "coordination")
	for _, f := range []string{"active_work_registry.json", "dependency_map.json"} {
		data, err := os.ReadFile(filepath.Join(schemaDir, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	code, out, _ := coordIn("--root", root, "doctor")
	if code != 3 || !strings.Contains(out, "no lock file") {
		t.Fatalf("doctor on ROTD's example should report the claimed task without a lock (exit 3):\n%s", out)
	}
	mustCoord(t, "--root", root, "doctor", "--repair")
	// The example's agents have been silent since 2025: keep the claim
	// from sweeping their locks, which are validated below.
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"sweep_on_claim": false}`), 0o644)
	mustCoord(t, "--root", root, "--agent", "agent-1-frontend", "claim", "--capability", "frontend_ts,backend_rust,tests_only,docs,refactor")

	// A session of coord's own.
	root2 := t.TempDir()
	mustCoord(t, "--root", root2, "init")
	dir2 := filepath.Join(root2, ".rotd", "coordination")
	seed := filepath.Join(root2, "seed.jsonl")
	os.WriteFile(seed, []byte(`{"id":"4.1","title":"API","priority":"high","capability":"backend_rust","skill_level":"expert"}
{"id":"4.2","title":"Editor","capability":"frontend_ts","deps":["4.1"],"files":["src/editor/*.ts"]}
{"id":"4.3","title":"Docs","capability":"docs","priority":"low"}
{"id":"cross-1","title":"Integration","deps":["4.2","4.3"]}
`), 0o644)
	mustCoord(t, "--root", root2, "seed-tasks", seed)
	os.WriteFile(filepath.Join(dir2, "config.json"), []byte(`{"review_gate": true}`), 0o644)
	os.WriteFile(filepath.Join(dir2, "dependency_map.json"), []byte(`{"cross-1":["4.1"]}`), 0o644)
	be, fe, docs, rev := "agent-be", "agent-fe", "agent-docs", "agent-rev"
	mustCoord(t, "--root", root2, "--agent", be, "claim", "--capability", "backend_rust")
	mustCoord(t, "--root", root2, "--agent", docs, "claim", "--capability", "docs")
	mustCoord(t, "--root", root2, "--agent", be, "progress", "4.1", "50", "--note", "half")
	mustCoord(t, "--root", root2, "--agent", docs, "block", "4.3", "--reason", "waiting")
	mustCoord(t, "--root", root2, "--agent", be, "release", "4.1", "--summary", "api done")
	mustCoord(t, "--root", root2, "--agent", rev, "approve", "4.1")
	mustCoord(t, "--root", root2, "--agent", fe, "claim", "--capability", "frontend_ts")
	mustCoord(t, "--root", root2, "--agent", fe, "lock-file", "src/editor/modal.ts")
	mustCoord(t, "--root", root2, "--agent", fe, "quota", "add", "--tokens", "1200", "--requests", "3")
	mustCoord(t, "--root", root2, "--agent", be, "quota", "add", "--tokens", "300", "--requests", "1")
	mustCoord(t, "--root", root2, "--agent", docs, "unblock", "4.3")
	mustCoord(t, "--root", root2, "--agent", docs, "msg", "docs resumed")

	for _, d := range []string{dir, dir2} {
		data, _ := os.ReadFile(filepath.Join(d, "active_work_registry.json"))
		validate(registrySchema, d+"/active_work_registry.json", data)
		data, _ = os.ReadFile(filepath.Join(d, "dependency_map.json"))
		validate(depSchema, "dependency_map.json", data)
		locks, _ := filepath.Glob(filepath.Join(d, "agent_locks", "*.lock"))
		beats, _ := filepath.Glob(filepath.Join(d, "heartbeat", "*.beat"))
		if len(locks) == 0 || len(beats) == 0 {
			t.Fatalf("%s: the session left %d locks and %d heartbeats", d, len(locks), len(beats))
		}
		for _, f := range locks {
			data, _ := os.ReadFile(f)
			validate(lockSchema, f, data)
		}
		for _, f := range beats {
			data, _ := os.ReadFile(f)
			validate(beatSchema, f, data)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir2, "quota.json"))
	validate(quotaSchema, "quota.json", data)
	logOut := mustCoord(t, "--root", root2, "log", "--json", "-n", "0")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(logOut), "\n") {
		validate(logSchema, "log --json line", []byte(line))
		n++
	}
	if n < 10 {
		t.Fatalf("only %d log events", n)
	}
}
