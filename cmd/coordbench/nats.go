package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rotd/coordination/coord"
)

// The NATS side of the benchmarks (coordbench -nats): every figure beside
// the file engine's measured in the same run, each operation a fresh coord
// process, the hub a 'coord hub' process of its own on loopback (data on
// disk, every write synced before it is acknowledged), and the same
// figures on a 3-node cluster of hubs.

// hubProc is a running 'coord hub'.
type hubProc struct {
	cmd *exec.Cmd
	url string
}

func startHub(bin, dir string, extra ...string) (*hubProc, error) {
	args := append([]string{"hub", "--dir", dir}, extra...)
	if !strings.Contains(strings.Join(extra, " "), "--listen") {
		args = append(args, "--listen", "127.0.0.1:0")
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, coord.EnvBackend+"=") {
		cmd.Process.Kill()
		return nil, fmt.Errorf("hub did not start: %q %v", line, err)
	}
	return &hubProc{cmd: cmd, url: strings.TrimSpace(strings.TrimPrefix(line, coord.EnvBackend+"="))}, nil
}

func (h *hubProc) stop() {
	h.cmd.Process.Signal(syscall.SIGTERM)
	h.cmd.Wait()
}

// natsSuite measures against hubs.
type natsSuite struct {
	*suite
	url     string // single node
	cluster string // three nodes ("" when not measured)
	nsN     int
}

// project makes a fresh namespace of n tasks on url and returns its URL.
func (s *natsSuite) project(url string, n int) (string, error) {
	s.nsN++
	u := fmt.Sprintf("%s/bench%d", url, s.nsN)
	dir, err := os.MkdirTemp(s.disk, "coordbench")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := run(s.bin, "--backend", u, "init"); err != nil {
		return "", err
	}
	seed := filepath.Join(dir, "seed.jsonl")
	if err := os.WriteFile(seed, seedTasks(n), 0o644); err != nil {
		return "", err
	}
	return u, run(s.bin, "--backend", u, "seed-tasks", seed)
}

func seedTasks(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"b%d","title":"bench task %d","description":"generated","priority":"%s"}`+"\n",
			i, i, []string{"urgent", "high", "medium", "low"}[i%4])
	}
	return []byte(b.String())
}

// claimSideBySide: k claims by one agent, one process each, on files on
// disk and on the hub, alternating so both see the same machine.
func (s *natsSuite) claimSideBySide(label, url string, n, k int) error {
	root, err := s.tree(s.disk, n)
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	u, err := s.project(url, n)
	if err != nil {
		return err
	}
	var fileLat, natsLat []float64
	for i := 0; i < k; i++ {
		l, _, err := timed(1, func(int) []string { return []string{s.bin, "--root", root, "--agent", "a", "claim"} })
		if err != nil {
			return err
		}
		fileLat = append(fileLat, l...)
		l, _, err = timed(1, func(int) []string { return []string{s.bin, "--backend", u, "--agent", "a", "claim"} })
		if err != nil {
			return err
		}
		natsLat = append(natsLat, l...)
	}
	s.row(fmt.Sprintf("claim, 1 process, %d tasks, %s vs files on disk", n, label),
		f1(pct(natsLat, 50))+" ms (p99 "+f1(pct(natsLat, 99))+")",
		f1(pct(fileLat, 50))+" ms (p99 "+f1(pct(fileLat, 99))+")",
		f2(pct(natsLat, 50)/pct(fileLat, 50)))
	return nil
}

// drainSideBySide drains n tasks with procs agents, each a fresh process
// per claim.
func (s *natsSuite) drainSideBySide(label, url string, n, procs int) error {
	return s.sideBySide(fmt.Sprintf("%d processes draining %d tasks, %s vs files on disk (files, NATS, NATS, files)", procs, n, label),
		url, n, func(args []string) (float64, error) {
			r, _, err := drain(n, procs, func(agent string) []string {
				return append(append([]string{s.bin}, args...), "--agent", agent, "claim")
			})
			return r, err
		})
}

// drainLiveSideBySide drains n tasks with procs long-lived agents
// (drainLive): 'coord mcp' sessions, each opening the project once.
func (s *natsSuite) drainLiveSideBySide(label, url string, n, procs int) error {
	return s.sideBySide(fmt.Sprintf("%d long-lived processes ('coord mcp' sessions) draining %d tasks, %s vs files on disk (files, NATS, NATS, files)", procs, n, label),
		url, n, func(args []string) (float64, error) {
			return drainLive(n, procs, append([]string{s.bin}, args...))
		})
}

// sideBySide runs drainOn (given the global flags that name a project of
// n tasks) twice on each side, in the order files, NATS, NATS, files, so
// that a load that drifts during the run (a shared machine) weighs on
// both sides alike; each side's rate is its claims over its time in both
// drains.
func (s *natsSuite) sideBySide(row, url string, n int, drainOn func(args []string) (float64, error)) error {
	var fileT, natsT float64 // seconds per claim, summed over both drains
	for _, side := range []string{"files", "nats", "nats", "files"} {
		var args []string
		if side == "files" {
			root, err := s.tree(s.disk, n)
			if err != nil {
				return err
			}
			defer os.RemoveAll(root)
			args = []string{"--root", root}
		} else {
			u, err := s.project(url, n)
			if err != nil {
				return err
			}
			args = []string{"--backend", u}
		}
		rate, err := drainOn(args)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "  drain on %s: %.1f claims/s\n", side, rate)
		if side == "files" {
			fileT += float64(n) / rate
		} else {
			natsT += float64(n) / rate
		}
	}
	fileRate, natsRate := float64(2*n)/fileT, float64(2*n)/natsT
	s.row(row, f1(natsRate)+" claims/s", f1(fileRate)+" claims/s", f2(natsRate/fileRate)+"× (throughput)")
	return nil
}

// roundTrips counts what one claim sends to the hub: every request
// (a publish expecting an answer) through a counting proxy, and how many
// of them are synced writes.
func (s *natsSuite) roundTrips(url string, n int) error {
	u, err := s.project(url, n)
	if err != nil {
		return err
	}
	if err := run(s.bin, "--backend", u, "--agent", "y", "claim"); err != nil {
		return err
	}
	target := strings.TrimPrefix(strings.SplitN(strings.TrimPrefix(u, "nats://"), "/", 2)[0], "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	var mu sync.Mutex
	var lines []string
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			srv, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(c, srv); c.Close() }()
			go func() {
				r := bufio.NewReaderSize(c, 1<<20)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						srv.Close()
						return
					}
					srv.Write([]byte(line))
					f := strings.Fields(line)
					if len(f) == 0 {
						continue
					}
					switch f[0] {
					case "PUB", "HPUB":
						mu.Lock()
						lines = append(lines, strings.TrimSpace(line))
						mu.Unlock()
						// the payload: its size is the last field (plus CRLF)
						size, _ := strconv.Atoi(f[len(f)-1])
						buf := make([]byte, size+2)
						if _, err := io.ReadFull(r, buf); err != nil {
							srv.Close()
							return
						}
						srv.Write(buf)
					case "CONNECT", "PING":
						mu.Lock()
						lines = append(lines, f[0])
						mu.Unlock()
					}
				}
			}()
		}
	}()
	proxied := "nats://" + l.Addr().String() + "/" + strings.SplitN(strings.TrimPrefix(u, "nats://"), "/", 2)[1]
	if err := run(s.bin, "--backend", proxied, "--agent", "x", "claim"); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	reqs, writes, handshake := 0, 0, 0
	var kinds []string
	for _, line := range lines {
		f := strings.Fields(line)
		switch {
		case f[0] == "CONNECT" || f[0] == "PING":
			handshake++
		case len(f) >= 4 && strings.HasPrefix(f[2], "_INBOX"):
			reqs++
			subj := f[1]
			switch {
			case strings.HasPrefix(subj, "$JS.API.DIRECT.GET"):
				kinds = append(kinds, "read")
			case strings.HasPrefix(subj, "$JS.API."):
				kinds = append(kinds, "api "+strings.TrimPrefix(subj, "$JS.API."))
			case strings.Contains(subj, ".mutex.") || strings.Contains(subj, ".beats."):
				// the commit mutex and the heartbeats: memory streams
				kinds = append(kinds, "memory write "+subj)
			default:
				writes++
				kinds = append(kinds, "write "+subj)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "  round trips of one claim: %s\n", strings.Join(kinds, "; "))
	s.row(fmt.Sprintf("requests one claim sends (%d tasks, holders present)", n),
		fmt.Sprintf("%d requests (%d synced writes) + connect", reqs, writes), "", "")
	_ = handshake
	return nil
}

func runNATSSuite(bin, self, disk string, quick, cluster bool, only string) error {
	s := &natsSuite{suite: &suite{bin: bin, self: self, disk: disk, quick: quick}}
	k := 40
	if quick {
		k = 12
	}
	dir, err := os.MkdirTemp(disk, "coordhub")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	h, err := startHub(bin, dir)
	if err != nil {
		return err
	}
	defer h.stop()
	s.url = h.url
	var steps []func() error
	if only == "" || only == "claim" {
		steps = append(steps,
			func() error { return s.claimSideBySide("hub on loopback", s.url, 1000, k) },
			func() error { return s.claimSideBySide("hub on loopback", s.url, 10, k) })
	}
	if only == "" || only == "drain" {
		steps = append(steps, func() error { return s.drainSideBySide("hub on loopback", s.url, 1000, 16) })
	}
	if only == "" || only == "live" {
		steps = append(steps, func() error { return s.drainLiveSideBySide("hub on loopback", s.url, 1000, 16) })
	}
	if only == "" || only == "rtt" {
		steps = append(steps, func() error { return s.roundTrips(s.url, 1000) })
	}
	if cluster {
		var urls []string
		var routes []string
		var lis []string
		for range 3 {
			routes = append(routes, freePort())
			lis = append(lis, freePort())
		}
		for i := range 3 {
			d := filepath.Join(dir, "n"+strconv.Itoa(i))
			var others []string
			for j := range 3 {
				if j != i {
					others = append(others, "nats-route://"+routes[j])
				}
			}
			c, err := startHub(bin, d, "--listen", lis[i], "--cluster", "bench", "--cluster-listen", routes[i], "--routes", strings.Join(others, ","))
			if err != nil {
				return err
			}
			defer c.stop()
			urls = append(urls, strings.TrimPrefix(c.url, "nats://"))
		}
		s.cluster = "nats://" + strings.Join(urls, ",")
		steps = append(steps,
			func() error { return s.waitCluster() },
			func() error { return s.claimSideBySide("3-node cluster on loopback", s.cluster, 1000, k) },
			func() error {
				return s.drainSideBySide("3-node cluster on loopback", s.cluster, 1000, 16)
			},
			func() error {
				return s.drainLiveSideBySide("3-node cluster on loopback", s.cluster, 1000, 16)
			})
	}
	for _, st := range steps {
		if err := st(); err != nil {
			return err
		}
	}
	fmt.Println("| what | NATS | files on disk | ratio (NATS / files) |")
	fmt.Println("|---|---|---|---|")
	for _, r := range s.rows {
		for len(r) < 4 {
			r = append(r, "")
		}
		fmt.Println("| " + strings.Join(r, " | ") + " |")
	}
	return nil
}

// waitCluster waits until the cluster creates a namespace.
func (s *natsSuite) waitCluster() error {
	var err error
	for i := 0; i < 300; i++ {
		if err = run(s.bin, "--backend", s.cluster+"/ready", "init"); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}
