package nats_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/conformance"
	coordnats "github.com/rotd/coordination/registry/nats"
	"github.com/rotd/coordination/registry/nats/hub"
)

// The test binary doubles as the helper processes of these tests: a hub
// (to be SIGKILLed) and agents (to race, or to be SIGSTOPped).
const helperEnv = "COORD_NATS_HELPER"

func TestMain(m *testing.M) {
	conformance.Worker() // the suite's worker processes
	switch os.Getenv(helperEnv) {
	case "hub":
		os.Exit(runHub())
	case "worker":
		os.Exit(runWorker())
	case "holder":
		os.Exit(runHolder())
	}
	os.Exit(m.Run())
}

// runHub runs a hub on COORD_NATS_DIR and COORD_NATS_LISTEN, prints its
// URL and stops on SIGTERM.
func runHub() int {
	h, err := hub.Start(hub.Options{Dir: os.Getenv("COORD_NATS_DIR"), Listen: os.Getenv("COORD_NATS_LISTEN")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := h.WaitJetStream(60 * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("URL " + h.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	h.Shutdown()
	return 0
}

// runWorker claims and releases until the registry is drained, printing
// each acknowledged claim and release, and any error with its exit code.
func runWorker() int {
	return work(os.Getenv("COORD_NATS_URL"), os.Getenv("COORD_AGENT"), os.Stdout, coordnats.Options{})
}

func work(url, id string, out io.Writer, opt coordnats.Options) int {
	ctx := context.Background()
	agent := coord.Agent{ID: id}
	deadline := time.Now().Add(3 * time.Minute)
	var s *app.Service
	for s == nil {
		b, err := coordnats.Open(ctx, url, opt)
		if err == nil {
			if s, err = app.New(ctx, b, app.Options{}); err != nil {
				b.Close()
			} else {
				defer b.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(out, "error %d %s\n", coord.CodeOf(err), coord.OneLine(err.Error()))
			if time.Now().After(deadline) {
				return 1
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for time.Now().Before(deadline) {
		t, err := claimTask(s, ctx, app.ClaimRequest{Agent: agent})
		if err != nil {
			fmt.Fprintf(out, "error %d %s\n", coord.CodeOf(err), coord.OneLine(err.Error()))
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if t == nil {
			drained := false
			s.Backend().Tasks().View(ctx, func(tx *coord.Txn) error { drained = tx.Drained(); return nil })
			if drained {
				return 0
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		fmt.Fprintf(out, "claimed %s %d\n", t.ID, t.Epoch)
		for {
			_, err := s.Release(ctx, app.TaskRef{Agent: agent, TaskID: t.ID, Epoch: t.Epoch}, "")
			if err == nil {
				fmt.Fprintf(out, "released %s %d\n", t.ID, t.Epoch)
				break
			}
			fmt.Fprintf(out, "error %d %s\n", coord.CodeOf(err), coord.OneLine(err.Error()))
			if coord.CodeOf(err) == coord.CodeLost {
				// Only possible if the release landed unseen: checked by
				// the test against the registry.
				break
			}
			if time.Now().After(deadline) {
				return 1 // never forever: the test reports this worker's lines
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return 1
}

// runHolder claims one task, prints it, waits for a line on stdin, then
// releases at its epoch and prints the exit code.
func runHolder() int {
	ctx := context.Background()
	agent := coord.Agent{ID: os.Getenv("COORD_AGENT")}
	b, err := coordnats.Open(ctx, os.Getenv("COORD_NATS_URL"), coordnats.Options{})
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	s, _ := app.New(ctx, b, app.Options{})
	t, err := claimTask(s, ctx, app.ClaimRequest{Agent: agent})
	if err != nil || t == nil {
		fmt.Println("error", err)
		return 2
	}
	fmt.Printf("claimed %s %d\n", t.ID, t.Epoch)
	bufio.NewReader(os.Stdin).ReadString('\n')
	_, err = s.Release(ctx, app.TaskRef{Agent: agent, TaskID: t.ID, Epoch: t.Epoch}, "late")
	fmt.Printf("release %d %s\n", coord.CodeOf(err), coord.OneLine(fmt.Sprint(err)))
	return int(coord.CodeOf(err))
}
