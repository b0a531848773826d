package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/rotd/coordination/coord"
)

// The run supervisor. coord run does not start CMD itself: it starts
// this binary again as a small supervisor process (argv "coord
// __run-supervisor PATH ARGV0 ARGS…", with COORD_RUN_SUPERVISOR=1), and
// the supervisor starts CMD in a process group of its own. run and the
// supervisor share a socket, the lifeline, that run never writes to:
//
//   - run forwards SIGINT, SIGTERM and SIGHUP to the supervisor, which
//     forwards them to CMD's whole process group;
//   - when the lifeline closes (run shut it to stop CMD at once, or run
//     died, SIGKILL included: the kernel closes a dead process's sockets),
//     the supervisor SIGKILLs CMD's group;
//   - when CMD exits, the supervisor SIGKILLs what CMD left running in its
//     group and, on Linux, every other descendant (the supervisor is a
//     child subreaper: a process that left the group with setsid is
//     reparented to the supervisor when its parent dies, and is killed
//     there too), then writes CMD's status on the lifeline ("exit N",
//     "signal N" or "error TEXT") and exits.
//
// On Linux CMD itself also gets SIGKILL if the supervisor dies
// (Pdeathsig). What is not covered: a process that escaped to another
// subreaper or init while the supervisor was alive (a daemon started
// through systemd-run or a second double fork across a subreaper), and,
// outside Linux, descendants that left CMD's process group.

const (
	supervisorArg = "__run-supervisor"
	supervisorEnv = coord.EnvRunSupervisor
	// lifelineFD is the lifeline's descriptor in the supervisor (ExtraFiles[0]).
	lifelineFD = 3
)

// isSupervisor reports whether this process is a run supervisor.
func isSupervisor(args []string) bool {
	return len(args) >= 4 && args[1] == supervisorArg && os.Getenv(supervisorEnv) == "1"
}

// runSupervisor is the supervisor's whole life; args are [coord __run-supervisor PATH
// ARGV0 ARGS…]. Its own stdin, stdout and stderr are CMD's.
func runSupervisor(args []string, _ io.Reader, _, _ io.Writer) int {
	syscall.CloseOnExec(lifelineFD) // CMD must not hold the lifeline open
	lifeline := os.NewFile(lifelineFD, "lifeline")
	report := func(format string, a ...any) { fmt.Fprintf(lifeline, format+"\n", a...) }
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, stopSignals...)
	becomeSubreaper()
	// Pdeathsig fires when the thread that started CMD ends; this one
	// stays locked (and alive) until the supervisor exits.
	runtime.LockOSThread()
	env := withoutEnv(os.Environ(), supervisorEnv)
	p, err := os.StartProcess(args[2], args[3:], &os.ProcAttr{
		Env:   env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   childAttr(),
	})
	if err != nil {
		report("error %s", err)
		return 1
	}
	pgid := p.Pid
	exited := make(chan syscall.WaitStatus, 1)
	go reapChildren(p.Pid, exited)
	lost := make(chan struct{})
	go func() {
		io.Copy(io.Discard, lifeline) // returns when run shuts or loses its end
		close(lost)
	}()
	var st syscall.WaitStatus
wait:
	for {
		select {
		case st = <-exited:
			break wait
		case sig := <-sigs:
			syscall.Kill(-pgid, sig.(syscall.Signal))
		case <-lost:
			syscall.Kill(-pgid, syscall.SIGKILL)
			lost = nil // then wait for CMD's status
		}
	}
	// CMD is gone: so is whatever it left behind.
	syscall.Kill(-pgid, syscall.SIGKILL)
	killOrphans(5 * time.Second)
	if st.Signaled() {
		report("signal %d", int(st.Signal()))
	} else {
		report("exit %d", st.ExitStatus())
	}
	return 0
}

// reapChildren waits for every child of the supervisor: CMD (whose status it
// sends on exited) and the orphans reparented to the supervisor, so none stays
// a zombie.
func reapChildren(pid int, exited chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil: // no children now; orphans may come later
			time.Sleep(5 * time.Millisecond)
		case wpid == pid:
			exited <- ws
		}
	}
}

// withoutEnv returns env without the variable name.
func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// supervised is CMD running under its supervisor, as run sees it.
type supervised struct {
	cmd  *exec.Cmd
	line *net.UnixConn // run's end of the lifeline
}

// startSupervised starts the supervisor, which starts CMD (path, argv) with env
// in dir ("" : the current directory).
func startSupervised(dir, path string, argv, env []string, stdin io.Reader, stdout, stderr io.Writer) (*supervised, error) {
	self, err := selfExe()
	if err != nil {
		return nil, err
	}
	fds, err := lifelinePair()
	if err != nil {
		return nil, err
	}
	supervisorEnd := os.NewFile(uintptr(fds[1]), "lifeline")
	defer supervisorEnd.Close() // the supervisor has its copy once started
	runEnd := os.NewFile(uintptr(fds[0]), "lifeline")
	fc, err := net.FileConn(runEnd)
	runEnd.Close()
	if err != nil {
		return nil, err
	}
	line := fc.(*net.UnixConn)
	cmd := exec.Command(self)
	cmd.Args = append([]string{"coord", supervisorArg, path}, argv...)
	cmd.Dir = dir // the supervisor's, and so CMD's, working directory
	cmd.Env = append(env, supervisorEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.ExtraFiles = []*os.File{supervisorEnd}
	// Its own group: a terminal's Ctrl-C reaches run alone, which forwards
	// it once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second // an escaped process holding CMD's output cannot hold run
	if err := cmd.Start(); err != nil {
		line.Close()
		return nil, err
	}
	return &supervised{cmd: cmd, line: line}, nil
}

// signal forwards sig to CMD's process group (through the supervisor).
func (g *supervised) signal(sig os.Signal) { g.cmd.Process.Signal(sig) }

// kill shuts the lifeline: the supervisor SIGKILLs CMD's process group.
func (g *supervised) kill() { g.line.CloseWrite() }

// wait waits for the supervisor and returns its report of CMD's end: "exit N",
// "signal N", "error TEXT", or, when the supervisor itself died, how.
func (g *supervised) wait() string {
	werr := g.cmd.Wait()
	g.line.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(io.LimitReader(g.line, 4096))
	g.line.Close()
	if st := strings.TrimSpace(string(b)); st != "" {
		return st
	}
	return fmt.Sprintf("the run supervisor died (%v)", werr)
}

// selfExe is this binary, for re-executing it as the supervisor. On Linux,
// /proc/self/exe works even if the file was replaced since (make build
// while agents run).
func selfExe() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// lifelinePair is a connected socket pair, both ends close-on-exec (the
// supervisor gets its end through ExtraFiles; nothing else may inherit either).
func lifelinePair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, os.NewSyscallError("socketpair", err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}
