package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"
)

// TestArgumentsAreData walks every command and subcommand of the app (a
// new command is covered without editing this test) and gives each
// positional slot a word that is also a help or command word: h, help,
// ls, the command's own name; and after "--" the flags --help and -h. No
// such call may print help: the command does its work or refuses for
// another reason (exit 1 "takes no arguments" for a command without
// positionals, exit 3 or 6 for a task in the wrong state, …).
//
// Broken build this fails against: commands without guardArgs (urfave's
// "help" subcommand on every command: 'coord release h' printed the
// release help and exited 0 without releasing task h; 'coord doctor h'
// ran doctor).
func TestArgumentsAreData(t *testing.T) {
	root := seedTree(t, []string{`{"id":"h"}`, `{"id":"help"}`, `{"id":"ls"}`, `{"id":"exit-codes"}`})
	t.Chdir(root)
	t.Setenv("PATH", t.TempDir()) // 'coord run -- ls' finds no ls to run
	for _, id := range []string{"h", "help", "ls"} {
		mustCoord(t, "--root", root, "--agent", "a", "claim", "--task", id)
	}
	app := newApp(&env{})
	var leaves [][]string
	var argsUsage = map[string]string{}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string(nil), path...), c.Name)
			if len(c.Commands) > 0 {
				walk(p, c.Commands)
				continue
			}
			leaves = append(leaves, p)
			argsUsage[strings.Join(p, " ")] = c.ArgsUsage
		}
	}
	walk(nil, app.Commands)
	if len(leaves) < 40 {
		t.Fatalf("walked only %d commands", len(leaves))
	}
	for _, path := range leaves {
		name := strings.Join(path, " ")
		lo, hi := argCount(argsUsage[name])
		slots := max(lo, 1)
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			try := func(args []string) {
				t.Helper()
				// Commands that wait (kv watch PREFIX) are cut short: any
				// outcome but help passes, so the bound is not a timing
				// assumption.
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				var out, errb bytes.Buffer
				argv := append([]string{"coord", "--root", root, "--agent", "a"}, args...)
				code := run(ctx, argv, strings.NewReader(""), &out, &errb)
				all := out.String() + errb.String()
				call := strings.Join(args, " ")
				if strings.Contains(all, "USAGE:") || strings.Contains(all, "NAME:") {
					t.Fatalf("coord %s printed help (exit %d):\n%s", call, code, all)
				}
				if hi == 0 && (code != 1 || !strings.Contains(errb.String(), "takes no arguments")) {
					t.Fatalf("coord %s: exit %d %q; a command without positionals must refuse one with exit 1", call, code, errb.String())
				}
				if code != 0 && !strings.HasPrefix(errb.String(), "coord: ") {
					t.Fatalf("coord %s: exit %d without a 'coord: …' message: %q", call, code, errb.String())
				}
			}
			for _, w := range []string{"h", "help", "ls", path[len(path)-1]} {
				words := make([]string, slots)
				for i := range words {
					words[i] = w
				}
				try(append(append([]string(nil), path...), words...))
				try(append(append(append([]string(nil), path...), "--"), words...))
			}
			for _, w := range []string{"--help", "-h"} {
				words := make([]string, slots)
				for i := range words {
					words[i] = w
				}
				try(append(append(append([]string(nil), path...), "--"), words...))
			}
		})
	}
}

// TestArgumentsAreDataWork: where the word is a valid id, the command
// does its work with it (release, block, progress, approve, kv, lease,
// msg), through the same in-process entry point as TestArgumentsAreData.
func TestArgumentsAreDataWork(t *testing.T) {
	root := seedTree(t, []string{`{"id":"h"}`, `{"id":"help"}`, `{"id":"ls"}`, `{"id":"run"}`})
	t.Chdir(root)
	as := func(agent string, args ...string) string {
		t.Helper()
		return mustCoord(t, append([]string{"--root", root, "--agent", agent}, args...)...)
	}
	for _, id := range []string{"h", "help", "ls"} {
		as("a", "claim", "--task", id)
	}
	as("a", "progress", "ls", "50")
	as("a", "block", "help", "--reason", "waiting")
	as("a", "unblock", "help")
	as("a", "release", "h", "--summary", "x")
	if out := as("a", "ls", "--json", "--status", "done"); !strings.Contains(out, `"id":"h"`) {
		t.Fatalf("release h did not release h: %s", out)
	}
	as("a", "msg", "help")
	as("a", "kv", "set", "h", "help", "--ttl", "1m")
	if out := as("a", "kv", "get", "h"); strings.TrimSpace(out) != "help" {
		t.Fatalf("kv get h = %q", out)
	}
	as("a", "lease", "acquire", "help")
	as("a", "lease", "renew", "help")
	as("a", "lease", "release", "help")
	// run takes a command of one word: CMD [ARGS...]
	as("a", "run", "--task", "run", "--", "true")
	if out := as("a", "ls", "--json", "--status", "done"); !strings.Contains(out, `"id":"run"`) {
		t.Fatalf("run --task run -- true did not finish task run: %s", out)
	}
	lines := as("a", "log", "-n", "0")
	for _, want := range []string{"a ▶ progress task ls 50%", "a ▶ blocked task help", "a ▶ released task h", "a ▶ help", "a ▶ acquired lease help", "a ▶ released lease help"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the log lacks %q:\n%s", want, lines)
		}
	}
}

func TestArgCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		usage  string
		lo, hi int
	}{
		{"", 0, 0},
		{"TASK", 1, 1},
		{"TASK PERCENT", 2, 2},
		{"[FILE]", 0, 1},
		{"PATH…", 1, -1},
		{"TEXT...", 1, -1},
		{"-- CMD [ARGS...]", 1, -1},
		{"[ARGS…]", 0, -1},
		{"[PREFIX]", 0, 1},
		{"bash|zsh", 1, 1},
	} {
		if lo, hi := argCount(c.usage); lo != c.lo || hi != c.hi {
			t.Errorf("argCount(%q) = %d, %d; want %d, %d", c.usage, lo, hi, c.lo, c.hi)
		}
	}
}

func TestIsHelpExitCodes(t *testing.T) {
	t.Parallel()
	app := newApp(&env{})
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"coord", "help", "exit-codes"}, true},
		{[]string{"coord", "--root", "R", "help", "exit-codes"}, true},
		{[]string{"coord", "h", "exit-codes"}, true},
		{[]string{"coord", "msg", "--", "help", "exit-codes"}, false},
		{[]string{"coord", "--agent", "help", "exit-codes"}, false},
		{[]string{"coord", "help"}, false},
	} {
		if got := isHelpExitCodes(app, c.argv); got != c.want {
			t.Errorf("isHelpExitCodes(%q) = %v, want %v", c.argv, got, c.want)
		}
	}
}

func TestDotQuote(t *testing.T) {
	t.Parallel()
	if got := dotLabel(`a"b\`, "done"); got != `"a\"b\\\ndone"` {
		t.Errorf("dotLabel = %s", got)
	}
	if got := dotQuote(`x"`); got != `"x\""` {
		t.Errorf("dotQuote = %s", got)
	}
}

// TestWatchIntervalForPeople: the default rescan interval (timeout/3) is
// rounded for people: "6.7s", not "6.666666666s".
func TestWatchIntervalForPeople(t *testing.T) {
	t.Parallel()
	root := seedTree(t, []string{`{"id":"w1","title":"x"}`})
	_, lines := startWatch(t, root, "--timeout", "20s", "--poll")
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("watch exited before saying what it watches")
			}
			if !strings.Contains(l, "watching") {
				continue
			}
			if !strings.Contains(l, "stale after 20s; full rescan every 6.7s)") {
				t.Fatalf("watch says %q, want the interval rounded to 6.7s", l)
			}
			return
		case <-time.After(60 * time.Second):
			t.Fatal("no 'watching' line within 60s")
		}
	}
}

// TestFlagValuesAreData: a flag standing before the command name keeps its
// value even when the value is a command word: 'coord --task ls claim'
// claims task ls (it was read as the command ls, which has no --task).
func TestFlagValuesAreData(t *testing.T) {
	root := seedTree(t, []string{`{"id":"ls"}`, `{"id":"claim"}`, `{"id":"help"}`})
	t.Chdir(root)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "ls", "claim"}, `"id":"ls"`},
		{[]string{"--task=claim", "claim"}, `"id":"claim"`},
		{[]string{"--capability", "help", "--task", "help", "claim"}, `"id":"help"`},
		{[]string{"--reason", "help", "block", "ls"}, "blocked ls"},
		{[]string{"--note", "claim", "progress", "claim", "5"}, "progress claim 5%"},
		{[]string{"--summary", "ls", "release", "claim"}, "released claim"},
	} {
		out := mustCoord(t, append([]string{"--root", root, "--agent", "a"}, c.args...)...)
		if !strings.Contains(out, c.want) {
			t.Errorf("coord %s: %q, want %q", strings.Join(c.args, " "), out, c.want)
		}
	}
	log := mustCoord(t, "--root", root, "log", "-n", "0")
	for _, want := range []string{"blocked task ls: help", "progress task claim 5%: claim", "released task claim: ls"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestSubcommandFlagsAnywhere: a subcommand's flag may stand before the
// command name or between it and the subcommand, its value data.
func TestSubcommandFlagsAnywhere(t *testing.T) {
	root := seedTree(t, []string{`{"id":"t"}`})
	t.Chdir(root)
	for _, args := range [][]string{
		{"--ttl", "1h", "lease", "acquire", "help"},
		{"lease", "--ttl", "1h", "acquire", "ls"},
		{"--ttl", "1m", "kv", "set", "h", "help"},
		{"kv", "--ttl", "1m", "set", "help", "ls"},
	} {
		mustCoord(t, append([]string{"--root", root, "--agent", "a"}, args...)...)
	}
	out := mustCoord(t, "--root", root, "lease", "list")
	if !strings.Contains(out, "help ") || !strings.Contains(out, "ls ") {
		t.Fatalf("lease list: %s", out)
	}
	if out := mustCoord(t, "--root", root, "kv", "get", "help"); strings.TrimSpace(out) != "ls" {
		t.Fatalf("kv get help = %q", out)
	}
}

// TestFlagArityAgreesAcrossCommands: hoistFlags reads a flag that
// stands before its command by the arity the name has in the commands
// below (belowArity, from the root for a flag before every command name),
// which is sound only while a flag name takes a value in all of them or
// in none, and where a global flag of the same name does too.
func TestFlagArityAgreesAcrossCommands(t *testing.T) {
	t.Parallel()
	app := newApp(&env{})
	seen := flagArity(app.Flags)
	where := map[string]string{}
	for n := range seen {
		where[n] = "the global flags"
	}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := strings.TrimSpace(path + " " + c.Name)
			for n, takes := range flagArity(c.Flags) {
				if prev, ok := seen[n]; ok && prev != takes {
					t.Errorf("flag --%s takes a value in %s and not in %s, or the other way", n, where[n], p)
				}
				seen[n], where[n] = takes, p
			}
			walk(p, c.Commands)
		}
	}
	walk("", app.Commands)
	if len(seen) < 30 {
		t.Fatalf("walked only %d flag names", len(seen))
	}
}

// TestHoistFlags: the flags that stand before their command's name go
// just after it, each with its value; everything else stays where it
// stands.
func TestHoistFlags(t *testing.T) {
	t.Parallel()
	app := newApp(&env{})
	for _, c := range []struct{ in, want string }{
		{"coord --task ls claim", "coord claim --task ls"},
		{"coord --root R --task=claim claim --any", "coord --root R claim --any --task=claim"},
		{"coord --ttl 1h lease acquire help", "coord lease acquire --ttl 1h help"},
		{"coord lease --ttl 1h acquire ls", "coord lease acquire --ttl 1h ls"},
		{"coord --summary ls release claim --agent a", "coord release --summary ls claim --agent a"},
		{"coord --root R release t1 --summary x", "coord --root R release t1 --summary x"},
		{"coord --wait 1m run --task t -- sh -c x", "coord run --task t --wait 1m -- sh -c x"},
		{"coord --bogus ls", "coord --bogus ls"},
		{"coord msg -- --task x", "coord msg -- --task x"},
		// a dash word is data, and the flags after it stay flags
		{"coord msg -1 tests fail --agent a", "coord msg --agent a -1 tests fail"},
		{"coord progress t4 -5 --note n", "coord progress --note n t4 -5"},
		{"coord progress t4 --note -5 50", "coord progress t4 --note -5 50"},
		{"coord msg -1 -- --agent a", "coord msg -1 -- --agent a"},
	} {
		got := strings.Join(hoistFlags(app, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("hoistFlags(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
