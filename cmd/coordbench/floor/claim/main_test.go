package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The floor claim takes the first unclaimed task, raises last_epoch,
// keeps every other task's bytes, and says no_eligible_task when none
// is left.
func TestClaim(t *testing.T) {
	dir := t.TempDir()
	reg := `{"version":1,"last_epoch":4,"tasks":[
{"id":"a","status":"done","epoch":3},
{"id":"b","title":"x","status":"unclaimed","claimed_by":null,"epoch":0,"x_unknown":{"kept":true}},
{"id":"c","status":"unclaimed"}
]}`
	name := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(name, []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		id    string
		epoch int64
	}{{"b", 5}, {"c", 6}} {
		if err := claim(dir, "me"); err != nil {
			t.Fatal(err)
		}
		var got struct {
			LastEpoch int64 `json:"last_epoch"`
			Tasks     []map[string]any
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if got.LastEpoch != want.epoch {
			t.Fatalf("last_epoch %d, want %d", got.LastEpoch, want.epoch)
		}
		for _, task := range got.Tasks {
			if task["id"] != want.id {
				continue
			}
			if task["status"] != "claimed" || task["claimed_by"] != "me" || task["epoch"] != float64(want.epoch) || task["claimed_at"] == nil {
				t.Fatalf("task %s after the claim: %v", want.id, task)
			}
			if want.id == "b" && task["x_unknown"] == nil {
				t.Fatalf("task b lost its unknown member: %v", task)
			}
		}
		if got.Tasks[0]["status"] != "done" {
			t.Fatalf("task a changed: %v", got.Tasks[0])
		}
	}
	if err := claim(dir, "me"); err != nil { // nothing left
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 { // registry.json, registry.lock: no temp file left
		t.Fatalf("%d files in the directory, want 2", len(ents))
	}
}
