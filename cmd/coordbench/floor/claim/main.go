// Command claim is the floor of a claim for coordbench -floor, in the
// "mono-raw" layout: one JSON registry file, {"last_epoch":N,"tasks":[…]},
// each task kept as raw JSON. One run is one claim, as coord's is:
//
//	claim DIR AGENT
//
// It takes an exclusive flock on DIR/registry.lock, reads
// DIR/registry.json, decodes the document with each task left raw, finds
// the first task whose status is "unclaimed" (decoding tasks one by one
// until then), sets its status, claimed_by, claimed_at and epoch
// (last_epoch + 1), encodes the document again and replaces the file
// durably: a temporary file in DIR, written and fsynced, renamed over
// registry.json, then DIR fsynced. It prints the claimed task's JSON and
// exits (the lock goes with the process).
//
// It does not do what coord's claim does besides: priorities and
// dependencies (it takes the first unclaimed task), a per-task lock file,
// the log line, the heartbeat, the registry backups, the fencing epoch's
// own mark, the stale sweep, or any check of the other tasks. It is the
// least a durable, exclusive claim on one JSON file costs in Go.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

type registry struct {
	Version   int               `json:"version"`
	LastEpoch int64             `json:"last_epoch"`
	Tasks     []json.RawMessage `json:"tasks"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: claim DIR AGENT")
		os.Exit(2)
	}
	if err := claim(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "claim:", err)
		os.Exit(1)
	}
}

func claim(dir, agent string) error {
	lock, err := os.OpenFile(filepath.Join(dir, "registry.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	name := filepath.Join(dir, "registry.json")
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var reg registry
	if err := json.Unmarshal(data, &reg); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	for i, raw := range reg.Tasks {
		var t struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("%s: task %d: %v", name, i, err)
		}
		if t.Status != "unclaimed" {
			continue
		}
		var task map[string]any
		if err := json.Unmarshal(raw, &task); err != nil {
			return err
		}
		reg.LastEpoch++
		task["status"] = "claimed"
		task["claimed_by"] = agent
		task["claimed_at"] = time.Now().UTC().Format(time.RFC3339)
		task["epoch"] = reg.LastEpoch
		if reg.Tasks[i], err = json.Marshal(task); err != nil {
			return err
		}
		out, err := json.Marshal(&reg)
		if err != nil {
			return err
		}
		if err := replace(dir, name, out); err != nil {
			return err
		}
		_, err = fmt.Printf("%s\n", reg.Tasks[i])
		return err
	}
	_, err = fmt.Println(`{"status":"no_eligible_task"}`)
	return err
}

// replace writes data to a temporary file in dir, syncs it, renames it
// over name and syncs dir.
func replace(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, ".registry-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
