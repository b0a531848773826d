package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
)

// dashboardCommand is `coord dashboard` (docs/DASHBOARD.md).
func dashboardCommand(e *env) *cli.Command {
	return &cli.Command{Name: "dashboard", Usage: "serve a live web page of the project: agents, ready queue, blocked, review, locks, log, throughput, alerts; with a token, its actions",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:7777", Usage: "HOST:PORT to listen on; an address that is not loopback needs --token (port 0 picks a free one)"},
			&cli.StringFlag{Name: "token", Usage: "require this token (Authorization: Bearer T, or ?token=T for reads) and let the page act: requeue, assign, unblock, approve, reject (env COORD_DASHBOARD_TOKEN); at least 128 bits of entropy; 'generate' makes a fresh one, printed in the page's address"},
			&cli.BoolFlag{Name: "allow-actions", Usage: "on a loopback address without --token: let the page act, with a fresh token printed in the page's address"},
			&cli.BoolFlag{Name: "read-only", Usage: "never act, even with a token (every POST is 405)"},
			&cli.StringFlag{Name: "user", Value: dashboard.DefaultUser, Usage: "the name the log gives the person acting through the page (an agent id)"},
			&cli.StringFlag{Name: "timeout", Usage: "count an agent silent this long as stale (default: the project's stale_after, followed as it changes)"},
			&cli.StringFlag{Name: "doctor-every", Value: "1m", Usage: "run the doctor check for the alerts this often; 0 never (it holds the registry lock while it checks)"},
			&cli.IntFlag{Name: "rows", Value: 15, Usage: "rows shown in each list on the page (the rest: /tasks)"},
		}, Action: e.cmdDashboard}
}

// cmdDashboard serves the dashboard until a signal (exit 130). The first
// line on stdout is the page's address, once it answers.
func (e *env) cmdDashboard(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("dashboard takes no arguments")
	}
	token, from := c.String("token"), "--token"
	if !c.IsSet("token") {
		// An empty COORD_DASHBOARD_TOKEN is no token, as unset.
		token, from = os.Getenv(coord.EnvDashboardToken), coord.EnvDashboardToken
	}
	// --token generate: a fresh token, printed in the page's address as
	// --allow-actions prints its own; any other token must be out of
	// reach of guessing (dashboard.CheckToken).
	generated := token == dashboard.GenerateToken
	if generated {
		token = dashboard.NewToken()
	} else if token != "" || c.IsSet("token") {
		if err := dashboard.CheckToken(from, token); err != nil {
			return err
		}
	}
	addr := c.String("addr")
	if err := dashboard.CheckAddr(addr, token); err != nil {
		return err
	}
	allow, readOnly := c.Bool("allow-actions"), c.Bool("read-only")
	if allow && readOnly {
		return strErr("--allow-actions and --read-only contradict each other: give one")
	}
	user := c.String("user")
	if err := workspace.CheckAgent("--user", user); err != nil {
		return err
	}
	// --allow-actions without a token: a fresh one, known to this process
	// and to whoever reads its output, and the loopback rule kept for
	// every request (CheckAddr refused any other address above).
	fresh := allow && token == ""
	if fresh {
		token = dashboard.NewToken()
	}
	// Without --timeout the dashboard has no timeout of its own: 0 makes
	// every build judge by the project's stale_after as it is then.
	var timeout time.Duration
	if c.IsSet("timeout") {
		t, err := e.staleTimeout(c)
		if err != nil {
			return err
		}
		timeout = t
	}
	// 0 (in any spelling) is never; anything else is an interval.
	var every time.Duration
	if v := c.String("doctor-every"); !isZeroDuration(v) {
		var err error
		if every, err = coord.ParseInterval("--doctor-every", v); err != nil {
			if ce, ok := err.(*coord.Error); ok {
				ce.WithHint("give e.g. 1m, or 0: never")
			}
			return err
		}
	}
	rows := c.Int("rows")
	if rows < 1 || rows > 1000 {
		return strErr("--rows must be 1 to 1000")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return coord.Wrap(coord.CodeIO, err, "dashboard: cannot listen on %s", addr).WithHint("choose another --addr (port 0 picks a free one)")
	}
	defer ln.Close()
	checkToken := token
	if fresh {
		checkToken = "" // a made-up token is for loopback only
	}
	if err := dashboard.CheckListener(ln, checkToken); err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	if fresh || generated {
		url += "?token=" + token
	}
	opt := dashboard.Options{
		Reader:       s.Reader(),
		TaskJSON:     s.TaskJSON,
		Token:        token,
		User:         user,
		LoopbackOnly: fresh,
		Timeout:      timeout,
		DoctorEvery:  every,
		Rows:         rows,
	}
	mode := "read-only"
	if token != "" && !readOnly {
		opt.Acts = s.Supervisor()
		mode = "actions on, logged as " + user
	}
	opt.Started = func() {
		fmt.Fprintln(e.stdout, url)
		fmt.Fprintf(e.stderr, "coord: dashboard of %s at %s (%s; Ctrl-C stops)\n", coord.OneLine(s.Reader().Where()), url, mode)
		markWaiting()
	}
	opt.Logf = func(format string, args ...any) {
		fmt.Fprintf(e.stderr, "coord: dashboard: %s\n", coord.OneLine(fmt.Sprintf(format, args...)))
	}
	err = dashboard.Serve(e.ctx, ln, opt)
	if e.ctx.Err() != nil {
		return interrupted(e.ctx)
	}
	return err
}

// isZeroDuration reports whether v spells a duration of 0 ("0", "0s").
func isZeroDuration(v string) bool {
	d, err := coord.ParseDuration(v)
	return err == nil && d == 0
}
