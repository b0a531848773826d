package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rotd/coordination/fsops"
)

// A land lease is freed by its TTL, or sooner by proof that its lander
// died; a pid missing from the caller's view is no such proof by itself.
// Two containers of one pod share a hostname but not their pid
// namespaces: each sees none of the other's processes, and a lander that
// judged the other's pid gone would free a live lander's lease and land
// the same task beside it. So the lease records, with the host and pid,
// the kernel's boot id, the lander's pid namespace and its process start
// time (landerMeta), and another lander judges it dead (landerGone) only
// when it is provably in the same boot and the same pid namespace, with
// /proc showing that namespace: then a pid missing, a zombie, or a pid
// now held by a process started at another time is proof. Anything else
// (another namespace, another boot, a lease recorded without these, a
// system without /proc) waits for the TTL.

// landerMeta is what a land lease records of its lander: this host, this
// process and, where /proc shows them, the boot id, the pid namespace
// and the start time.
func landerMeta() map[string]string {
	host, _ := os.Hostname()
	m := map[string]string{"host": host, "pid": strconv.Itoa(os.Getpid())}
	if id := procIdentity(); id.ok() {
		m["boot"], m["pidns"] = id.boot, id.pidns
		_, m["start"] = procStat(os.Getpid())
	}
	return m
}

// identity is where a process's pids mean something: a kernel boot and
// a pid namespace.
type identity struct{ boot, pidns string }

func (id identity) ok() bool { return id.boot != "" && id.pidns != "" }

// procIdentity is the caller's identity, or none when /proc does not
// show it: no /proc, or a /proc mounted for another pid namespace than
// the caller's (its "self" is not the caller's pid).
func procIdentity() identity {
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return identity{}
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil || !strings.HasPrefix(ns, "pid:[") {
		return identity{}
	}
	b, err := fsops.ReadFile("/proc/sys/kernel/random/boot_id", 128)
	if err != nil {
		return identity{}
	}
	return identity{boot: strings.TrimSpace(string(b)), pidns: ns}
}

// landerGone reports that the lander a land lease's meta names is
// certainly dead (see above).
func landerGone(meta map[string]string) bool {
	return landerGoneFrom(meta, procIdentity())
}

// landerGoneFrom is landerGone as judged by a caller of identity me.
func landerGoneFrom(meta map[string]string, me identity) bool {
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(meta["pid"])
	switch {
	case err != nil || pid <= 0 || pid == os.Getpid():
		return false
	case host == "" || meta["host"] != host:
		return false
	case !me.ok() || meta["boot"] != me.boot || meta["pidns"] != me.pidns || meta["start"] == "":
		return false // not provably the caller's view of that lander's pids
	}
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	state, start := procStat(pid)
	return state == "Z" || state == "X" || start != "" && start != meta["start"]
}
