package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/nats/hub"
)

func hubCommand(e *env) *cli.Command {
	return &cli.Command{Name: "hub", Usage: "run a NATS JetStream server for projects shared across machines (prints COORD_BACKEND=nats://HOST:PORT[/NAMESPACE] when ready)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "namespace", Usage: "the project namespace to name in the printed URL (COORD_BACKEND=nats://HOST:PORT/NAMESPACE); without it the URL names none, and clients that follow it use \"default\""},
			&cli.StringFlag{Name: "dir", Usage: "where the hub keeps its data, locked while it runs (default: $XDG_DATA_HOME/coord/hub, or ~/.local/share/coord/hub)"},
			&cli.StringFlag{Name: "listen", Value: hub.DefaultListen, Usage: "HOST:PORT for clients (port 0: a free one; 0.0.0.0 for other machines)"},
			&cli.StringFlag{Name: "cluster", Usage: "cluster name: this hub is one node of a 3-node cluster (replicated storage)"},
			&cli.StringFlag{Name: "routes", Usage: "the other nodes' route URLs, comma-separated (nats-route://host:6222)"},
			&cli.StringFlag{Name: "cluster-listen", Usage: "HOST:PORT for routes (default: --listen's host, port 6222)"},
			&cli.StringFlag{Name: "cluster-advertise", Usage: "HOST:PORT the other nodes should route to (behind NAT)"},
			&cli.BoolFlag{Name: "verbose", Usage: "print the server's notices to stderr (warnings and errors always are)"},
		}, Action: e.cmdHub}
}

// cmdHub runs an embedded NATS server until SIGTERM or SIGINT, then stops
// it cleanly (exit 130, as every command a signal ends).
func (e *env) cmdHub(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("hub takes no arguments")
	}
	dir := c.String("dir")
	if dir == "" {
		base := os.Getenv("XDG_DATA_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return strErr("hub: no --dir and no home directory: %v", err)
			}
			base = filepath.Join(home, ".local", "share")
		}
		dir = filepath.Join(base, "coord", "hub")
	}
	if c.IsSet("routes") && !c.IsSet("cluster") {
		return strErr("--routes needs --cluster NAME")
	}
	ns := c.String("namespace")
	if c.IsSet("namespace") {
		if err := hub.ValidNamespace(ns); err != nil {
			return strErr("hub: --namespace: %v", coord.OneLine(err.Error()))
		}
	}
	verbose := c.Bool("verbose")
	o := hub.Options{
		Dir:              dir,
		Listen:           c.String("listen"),
		Cluster:          c.String("cluster"),
		ClusterListen:    c.String("cluster-listen"),
		ClusterAdvertise: c.String("cluster-advertise"),
		Logf: func(format string, args ...any) {
			line := fmt.Sprintf(format, args...)
			if verbose || !strings.HasPrefix(line, "[INF]") {
				fmt.Fprintf(e.stderr, "coord hub: %s\n", coord.OneLine(line))
			}
		},
	}
	if r := c.String("routes"); r != "" {
		o.Routes = strings.Split(r, ",")
	}
	h, err := hub.Start(o)
	if err != nil {
		return err
	}
	defer h.Shutdown()
	// The first line is the contract's COORD_BACKEND=nats://HOST:PORT, with
	// the namespace at its end only when --namespace asks for one: a
	// consumer that appends its own namespace keeps working. Without one,
	// the line for people says which namespace following it selects.
	if ns != "" {
		fmt.Fprintf(e.stdout, "%s=%s/%s\n", coord.EnvBackend, h.URL(), ns)
	} else {
		fmt.Fprintf(e.stdout, "%s=%s\n", coord.EnvBackend, h.URL())
	}
	fmt.Fprintf(e.stderr, "coord hub: serving %s from %s (every write synced before it is acknowledged); SIGTERM or Ctrl-C stops it\n", h.URL(), dir)
	if ns != "" {
		fmt.Fprintf(e.stderr, "coord hub: project namespace %s: COORD_BACKEND=%s/%s (create it once with 'coord init')\n", ns, h.URL(), ns)
	} else {
		fmt.Fprintf(e.stderr, "coord hub: the URL names no project namespace, so clients that follow it use %q; give each project its own: COORD_BACKEND=%s/NAME (or start the hub with --namespace NAME)\n", hub.DefaultNamespace, h.URL())
	}
	markWaiting()
	<-e.ctx.Done()
	h.Shutdown()
	return interrupted(e.ctx)
}
