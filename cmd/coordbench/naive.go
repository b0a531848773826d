package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// naiveClaim is the reference every figure is compared with: a claim as a
// straightforward implementation would write it, with the same locks and
// the same durability as coord — flock on the registry sidecar, full
// encoding/json decode of the registry into generic maps, pick, O_EXCL
// lock file, full re-encode, temp file + fsync + rename + directory
// fsync, log line under the log flock, heartbeat touch. It runs as its
// own process (coordbench -naive-claim), as coord does.
func naiveClaim(root, agent string) error {
	dir := filepath.Join(root, ".rotd", "coordination")
	fl := flock.New(filepath.Join(dir, ".lock", "registry.lock"))
	if err := fl.Lock(); err != nil {
		return err
	}
	defer fl.Unlock()
	reg := filepath.Join(dir, "active_work_registry.json")
	data, err := os.ReadFile(reg)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	tasks, _ := doc["tasks"].([]any)
	status := make(map[string]string, len(tasks))
	for _, t := range tasks {
		m := t.(map[string]any)
		id, _ := m["id"].(string)
		st, _ := m["status"].(string)
		status[id] = st
	}
	rank := map[string]int{"urgent": 0, "high": 1, "medium": 2, "": 2, "low": 3}
	best, bestRank := -1, 99
	for i, t := range tasks {
		m := t.(map[string]any)
		if m["status"] != "unclaimed" {
			continue
		}
		ok := true
		if deps, _ := m["deps"].([]any); deps != nil {
			for _, d := range deps {
				if status[d.(string)] != "done" {
					ok = false
				}
			}
		}
		p, _ := m["priority"].(string)
		if ok && rank[p] < bestRank {
			best, bestRank = i, rank[p]
		}
	}
	if best < 0 {
		fmt.Println(`{"status":"no_eligible_task"}`)
		return nil
	}
	epoch := int64(0)
	if e, ok := doc["last_epoch"].(float64); ok {
		epoch = int64(e)
	}
	epoch++
	now := time.Now().UTC().Format(time.RFC3339)
	m := tasks[best].(map[string]any)
	m["status"], m["claimed_by"], m["claimed_at"], m["epoch"] = "claimed", agent, now, epoch
	doc["last_epoch"] = epoch
	id := m["id"].(string)
	lock, err := os.OpenFile(filepath.Join(dir, "agent_locks", id+"."+agent+".lock"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	lb, _ := json.Marshal(map[string]any{"holder": agent, "since": now, "task_id": id, "epoch": epoch, "pid": os.Getpid()})
	lock.Write(lb)
	lock.Close()
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".registry-naive-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(out); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), reg); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	d.Sync()
	d.Close()
	lfl := flock.New(filepath.Join(dir, ".lock", "log.lock"))
	if err := lfl.Lock(); err != nil {
		return err
	}
	lf, err := os.OpenFile(filepath.Join(dir, "coordination.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		fmt.Fprintf(lf, "[%s] %s ▶ claimed task %s (epoch %d)\n", now, agent, id, epoch)
		lf.Close()
	}
	lfl.Unlock()
	beat := filepath.Join(dir, "heartbeat", agent+".beat")
	if err := os.Chtimes(beat, time.Now(), time.Now()); err != nil {
		os.WriteFile(beat, []byte(`{"agent_id":"`+agent+`"}`), 0o644)
	}
	tb, _ := json.Marshal(m)
	fmt.Println(string(tb))
	return nil
}
