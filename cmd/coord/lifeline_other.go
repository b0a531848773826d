//go:build !linux

package main

import (
	"syscall"
	"time"
)

// childAttr puts CMD in a process group of its own.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// becomeSubreaper: only Linux has child subreapers.
func becomeSubreaper() {}

// killOrphans: without a subreaper the supervisor has no orphans to kill.
func killOrphans(time.Duration) {}
