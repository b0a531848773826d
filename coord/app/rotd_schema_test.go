package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// TestFilesValidateAgainstROTDSchemas runs a realistic session (seeding,
// claims with capabilities, progress, blocks, a review round, releases,
// quota, heartbeats, a path lock, the log) with ROTD-shaped ids and
// capabilities through the application every front end calls, then
// validates every file it wrote against ROTD's published JSON Schemas
// (draft-07, formats asserted) with a real validator. ROTD's example
// registry and dependency map are read as they are, too.
//
// It lives here, not beside the CLI: the validator's package builds
// tables when it loads, and cmd/coord's test binary is every coord
// process its scripts start.
func TestFilesValidateAgainstROTDSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
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

	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	coordDir := func(root string) string { return filepath.Join(root, ".rotd", "coordination") }

	// ROTD's own examples, read and re-written by coord.
	root := backendtest.Init(t, backendtest.Options{}).Root
	dir := coordDir(root)
	for _, f := range []string{"active_work_registry.json", "dependency_map.json"} {
		data, err := os.ReadFile(filepath.Join(schemaDir, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	s := backendtest.NewProject(t, backendtest.Options{Root: root}).Service
	probs, err := s.Doctor(ctx, false)
	must("doctor", err)
	found := false
	for _, p := range probs {
		found = found || (!p.Note && strings.Contains(p.What, "no lock file"))
	}
	if !found {
		t.Fatalf("doctor on ROTD's example should report the claimed task without a lock: %+v", probs)
	}
	_, err = s.Doctor(ctx, true)
	must("doctor --repair", err)
	// The example's agents have been silent since 2025: keep the claim
	// from sweeping their locks, which are validated below.
	s = backendtest.NewProject(t, backendtest.Options{Root: root, Config: `{"sweep_on_claim": false}`}).Service
	// Nothing there is eligible (the example's open tasks wait on
	// others): the claim reads the whole example and writes the agent's
	// beat.
	_, err = s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "agent-1-frontend", Caps: coord.ParseCaps("frontend_ts,backend_rust,tests_only,docs,refactor")}})
	must("claim on ROTD's example", err)

	// A session of coord's own.
	root2 := backendtest.Init(t, backendtest.Options{Config: `{"review_gate": true}`}).Root
	dir2 := coordDir(root2)
	os.WriteFile(filepath.Join(dir2, "dependency_map.json"), []byte(`{"cross-1":["4.1"]}`), 0o644)
	s = backendtest.NewProject(t, backendtest.Options{Root: root2}).Service
	batch, err := s.ParseSeed(ctx, "", "seed.jsonl", strings.NewReader(`{"id":"4.1","title":"API","priority":"high","capability":"backend_rust","skill_level":"expert"}
{"id":"4.2","title":"Editor","capability":"frontend_ts","deps":["4.1"],"files":["src/editor/*.ts"]}
{"id":"4.3","title":"Docs","capability":"docs","priority":"low"}
{"id":"cross-1","title":"Integration","deps":["4.2","4.3"]}
`))
	must("parse the seed", err)
	_, err = s.Seed(ctx, app.SeedRequest{Name: "seed.jsonl", Batch: batch})
	must("seed", err)
	agent := func(id, caps string) coord.Agent { return coord.Agent{ID: id, Caps: coord.ParseCaps(caps)} }
	be, fe, docs := agent("agent-be", "backend_rust"), agent("agent-fe", "frontend_ts"), agent("agent-docs", "docs")
	claim := func(a coord.Agent, want string) {
		t.Helper()
		res, err := s.Claim(ctx, app.ClaimRequest{Agent: a})
		must("claim by "+a.ID, err)
		if res.Task == nil || res.Task.ID != want {
			t.Fatalf("%s claimed %+v, want %s", a.ID, res.Task, want)
		}
	}
	ref := func(a coord.Agent, id string) app.TaskRef {
		return app.TaskRef{Agent: a, TaskID: id, Epoch: coord.NoEpoch}
	}
	claim(be, "4.1")
	claim(docs, "4.3")
	_, err = s.Progress(ctx, ref(be, "4.1"), 50, "half")
	must("progress", err)
	_, err = s.Block(ctx, ref(docs, "4.3"), "waiting")
	must("block", err)
	_, err = s.Release(ctx, ref(be, "4.1"), "api done")
	must("release", err)
	_, err = s.Approve(ctx, app.ApproveRequest{Agent: "agent-rev", TaskID: "4.1"})
	must("approve", err)
	claim(fe, "4.2")
	_, err = s.LockPaths(ctx, fe.ID, []string{"src/editor/modal.ts"}, 0)
	must("lock-file", err)
	_, err = s.QuotaAdd(ctx, fe.ID, 1200, 3)
	must("quota add", err)
	_, err = s.QuotaAdd(ctx, be.ID, 300, 1)
	must("quota add", err)
	_, err = s.Unblock(ctx, ref(docs, "4.3"))
	must("unblock", err)
	must("msg", s.Msg(ctx, docs.ID, "docs resumed"))

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
	// Each log line as `log --json` prints it.
	n := 0
	_, err = s.LogRead(ctx, 0, func(line string) error {
		ent, _ := coord.ParseLogLine(line)
		b, err := json.Marshal(ent)
		if err != nil {
			return err
		}
		validate(logSchema, "log --json line", b)
		n++
		return nil
	})
	must("log", err)
	if n < 10 {
		t.Fatalf("only %d log events", n)
	}
}
