package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rotd/coordination/fsops"
)

// process is the agent process a beat loop serves (beat --every): when it
// is gone, the loop stops, so it cannot keep a dead agent's locks alive.
type process struct {
	pid    int
	start  string // its start time (/proc/PID/stat), "" where /proc is missing
	parent bool   // it is our parent: once it dies we are reparented
}

// watchParent watches the parent process (the shell or agent that ran
// 'coord beat --every … &').
func watchParent() *process {
	pid := os.Getppid()
	_, start := procStat(pid)
	return &process{pid: pid, start: start, parent: true}
}

// watchProcess watches pid, or returns nil if there is no such process.
func watchProcess(pid int) *process {
	p := &process{pid: pid}
	_, p.start = procStat(pid)
	if !p.alive() {
		return nil
	}
	return p
}

// alive reports whether the process is still there: for the parent, that
// we have not been reparented; for any, that the pid exists, is not a
// zombie and was not reused by a later process (same start time).
func (p *process) alive() bool {
	if p == nil {
		return true
	}
	if p.parent && os.Getppid() != p.pid {
		return false
	}
	if err := syscall.Kill(p.pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	state, start := procStat(p.pid)
	if state == "Z" || state == "X" {
		return false
	}
	return p.start == "" || start == p.start
}

func (p *process) String() string {
	if p.parent {
		return "the parent process " + strconv.Itoa(p.pid)
	}
	return "process " + strconv.Itoa(p.pid)
}

// procStat returns a process's state and start time from /proc/PID/stat,
// or "" for both where there is no /proc.
func procStat(pid int) (state, start string) {
	f := procStatFields(pid)
	if len(f) < 20 {
		return "", ""
	}
	return f[0], f[19]
}

// procStatFields returns the fields of /proc/PID/stat after the command
// name (state, ppid, pgrp, …; starttime is [19]), or nil.
func procStatFields(pid int) []string {
	b, err := fsops.ReadFile("/proc/"+strconv.Itoa(pid)+"/stat", 4096)
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold anything
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
