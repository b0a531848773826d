package main

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rotd/coordination/fsops"
)

// childAttr puts CMD in a process group of its own and kills it if the
// supervisor dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// becomeSubreaper makes the supervisor the reaper of CMD's orphans, so that a
// descendant that left CMD's group is reparented here, not to init.
func becomeSubreaper() {
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// killOrphans SIGKILLs the supervisor's remaining children (orphans reparented
// to it), round after round as their own children are reparented in
// turn, until none is left or wait has passed. reapChildren reaps them.
func killOrphans(wait time.Duration) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		kids := children(os.Getpid())
		if len(kids) == 0 {
			return
		}
		for _, pid := range kids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// children lists the processes whose parent is ppid, from /proc.
func children(ppid int) []int {
	ents, err := fsops.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := parentOf(pid); ok && p == ppid {
			out = append(out, pid)
		}
	}
	return out
}

// parentOf reads a process's parent pid from /proc/PID/stat.
func parentOf(pid int) (int, bool) {
	f := procStatFields(pid)
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
