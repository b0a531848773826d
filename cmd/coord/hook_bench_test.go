package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The cost of a hook as the agent pays it: one coord process per event.
// BenchmarkProcessStart is the floor (coord --version: start and exit);
// the hook benchmarks add opening the project and the hook's work.

func benchProject(b *testing.B, held bool) string {
	b.Helper()
	root := b.TempDir()
	runCoord(b, root, nil, "", "init")
	runCoord(b, root, nil, `{"id":"ed","files":["src/editor/**"]}`+"\n"+`{"id":"free"}`+"\n", "seed-tasks", "--stdin")
	if held {
		runCoord(b, root, []string{"COORD_AGENT=other"}, "", "claim", "--task", "ed")
		runCoord(b, root, []string{"COORD_AGENT=other"}, "", "lock-file", "docs")
	}
	return root
}

func benchExec(b *testing.B, dir, stdin string, want int, args ...string) {
	b.Helper()
	for b.Loop() {
		cmd := exec.Command("coord", args...)
		cmd.Dir = dir
		cmd.Env = append(cleanEnv(), "COORD_AGENT=me")
		cmd.Stdin = strings.NewReader(stdin)
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			b.Fatal(err)
		}
		if code != want {
			b.Fatalf("coord %v exited %d, want %d", args, code, want)
		}
	}
}

func editPayload(root, file string) string {
	return `{"hook_event_name":"PreToolUse","cwd":"` + root + `","tool_name":"Edit","tool_input":{"file_path":"` + filepath.Join(root, file) + `"}}`
}

func BenchmarkProcessStart(b *testing.B) {
	benchExec(b, b.TempDir(), "", 0, "--version")
}

// BenchmarkHookEditNothingHeld: the pre-edit hook when no agent holds
// anything (the common case; a few ms).
func BenchmarkHookEditNothingHeld(b *testing.B) {
	root := benchProject(b, false)
	benchExec(b, root, editPayload(root, "src/editor/modal.ts"), 0, "hook", "claude", "PreToolUse")
}

// BenchmarkHookEditRefused: the pre-edit hook refusing an edit (another
// agent's task files).
func BenchmarkHookEditRefused(b *testing.B) {
	root := benchProject(b, true)
	benchExec(b, root, editPayload(root, "src/editor/modal.ts"), 2, "hook", "claude", "PreToolUse")
}

// BenchmarkHookBeat: the after-tool hook (a beat).
func BenchmarkHookBeat(b *testing.B) {
	root := benchProject(b, false)
	benchExec(b, root, `{"hook_event_name":"PostToolUse","cwd":"`+root+`","tool_name":"Bash"}`, 0, "hook", "claude", "PostToolUse")
}

// BenchmarkHookInProcess is the pre-edit hook through run() in this
// process, nothing held: everything a hook process does after it has
// started (flags, finding the root, opening the project, identity, the
// guard), without the process start the agent also pays.
func BenchmarkHookInProcess(b *testing.B) {
	root := benchProject(b, false)
	b.Chdir(root)
	b.Setenv("COORD_AGENT", "me")
	payload := editPayload(root, "src/editor/modal.ts")
	for b.Loop() {
		var out, errb strings.Builder
		if code := run(context.Background(), []string{"coord", "hook", "claude", "PreToolUse"}, strings.NewReader(payload), &out, &errb); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
}

// BenchmarkVersionInProcess is `coord --version` through run() in this
// process: what the CLI costs before any command runs (building the
// command tree, parsing the arguments, the signal handler), without
// the process start.
func BenchmarkVersionInProcess(b *testing.B) {
	for b.Loop() {
		var out, errb strings.Builder
		if code := run(context.Background(), []string{"coord", "--version"}, strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
}

// BenchmarkHookAfterInProcess is the after-tool hook through run() in
// this process, the agent holding a task with nothing to be told: the
// beat and the read of its untold conflicts.
func BenchmarkHookAfterInProcess(b *testing.B) {
	root := benchProject(b, false)
	runCoord(b, root, []string{"COORD_AGENT=me"}, "", "claim", "--task", "ed")
	b.Chdir(root)
	b.Setenv("COORD_AGENT", "me")
	payload := `{"hook_event_name":"PostToolUse","cwd":"` + root + `","tool_name":"Bash"}`
	for b.Loop() {
		var out, errb strings.Builder
		if code := run(context.Background(), []string{"coord", "hook", "claude", "PostToolUse"}, strings.NewReader(payload), &out, &errb); code != 0 || out.Len() != 0 {
			b.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
		}
	}
}

// BenchmarkHookAfterInGit is BenchmarkHookAfterInProcess in a git
// repository whose HEAD does not move: the hook also reads HEAD from
// git's files to tell that no conflict scan is due.
func BenchmarkHookAfterInGit(b *testing.B) {
	root := benchProject(b, false)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	runCoord(b, root, []string{"COORD_AGENT=me"}, "", "claim", "--task", "ed")
	b.Chdir(root)
	b.Setenv("COORD_AGENT", "me")
	payload := `{"hook_event_name":"PostToolUse","cwd":"` + root + `","tool_name":"Bash"}`
	hook := func() {
		var out, errb strings.Builder
		if code := run(context.Background(), []string{"coord", "hook", "claude", "PostToolUse"}, strings.NewReader(payload), &out, &errb); code != 0 || out.Len() != 0 {
			b.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
		}
	}
	hook() // the first call scans (HEAD never seen)
	for b.Loop() {
		hook()
	}
}

// BenchmarkHookAfterGeminiEdit is BenchmarkHookAfterInGit for Gemini's
// AfterTool of an edit tool: the hook also looks for the notes the
// session's BeforeTool kept (one rename that finds nothing).
func BenchmarkHookAfterGeminiEdit(b *testing.B) {
	root := benchProject(b, false)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	runCoord(b, root, []string{"COORD_AGENT=me"}, "", "claim", "--task", "ed")
	b.Chdir(root)
	b.Setenv("COORD_AGENT", "me")
	payload := `{"session_id":"s1","hook_event_name":"AfterTool","cwd":"` + root + `","tool_name":"write_file","tool_input":{"file_path":"` + root + `/src/editor/modal.ts","content":""}}`
	hook := func() {
		var out, errb strings.Builder
		if code := run(context.Background(), []string{"coord", "hook", "gemini", "AfterTool"}, strings.NewReader(payload), &out, &errb); code != 0 || out.String() != "{}\n" {
			b.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
		}
	}
	hook() // the first call scans (HEAD never seen)
	for b.Loop() {
		hook()
	}
}
