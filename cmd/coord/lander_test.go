package main

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

// deadPid is the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// TestLanderGone: a land lease's lander is judged dead only by proof
// that holds across pid namespaces. From the same boot and pid namespace
// (what landerMeta records for this process): a pid gone, or held by a
// process started at another time, is dead; a live one with its start
// time is not. A lease recorded in another pid namespace (two
// containers of one pod: the same hostname, pids the caller cannot
// see), in another boot, on another host, or without the namespace and
// start time (an older coord) is never judged dead: its TTL frees it.
// Against the build that judged by the host and a missing pid alone, the
// other namespace's lander is judged dead.
func TestLanderGone(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("pid namespaces are Linux's")
	}
	me := procIdentity()
	if !me.ok() {
		t.Skip("/proc does not show this process's namespace")
	}
	mine := landerMeta()
	if mine["boot"] == "" || mine["pidns"] == "" || mine["start"] == "" {
		t.Fatalf("landerMeta records no identity: %v", mine)
	}
	with := func(pid int, change map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range mine {
			m[k] = v
		}
		m["pid"] = strconv.Itoa(pid)
		for k, v := range change {
			if v == "" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	dead := deadPid(t)
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	_, liveStart := procStat(live.Process.Pid)
	for _, c := range []struct {
		name string
		meta map[string]string
		gone bool
	}{
		{"same namespace, pid gone", with(dead, nil), true},
		{"same namespace, pid alive", with(live.Process.Pid, map[string]string{"start": liveStart}), false},
		{"same namespace, pid reused since", with(live.Process.Pid, map[string]string{"start": "1"}), true},
		{"another pid namespace, pid not seen", with(dead, map[string]string{"pidns": "pid:[4026599999]"}), false},
		{"another boot", with(dead, map[string]string{"boot": "00000000-0000-0000-0000-000000000000"}), false},
		{"another host", with(dead, map[string]string{"host": "elsewhere"}), false},
		{"an older coord's lease (host and pid only)", with(dead, map[string]string{"boot": "", "pidns": "", "start": ""}), false},
		{"no start time", with(dead, map[string]string{"start": ""}), false},
		{"this process", with(os.Getpid(), nil), false},
		{"no pid", with(0, nil), false},
	} {
		if got := landerGone(c.meta); got != c.gone {
			t.Errorf("%s: landerGone(%v) = %v, want %v", c.name, c.meta, got, c.gone)
		}
	}
	// A caller that cannot show its own identity judges nothing dead.
	if landerGoneFrom(with(dead, nil), identity{}) {
		t.Error("a caller without /proc judged a lander dead")
	}
}
