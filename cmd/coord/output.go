package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rotd/coordination/coord"
)

// printJSON prints v as one line of JSON. '<', '>' and '&' are printed
// as they are (a skill filter reads "<=expert", not "\u003c=expert"):
// the output is for terminals and scripts, never HTML.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (e *env) printf(format string, args ...any) {
	fmt.Fprintf(e.stdout, format, args...)
}

// printTask prints a task as JSON (with --json, or always when force).
func (e *env) printTask(t *coord.Task, force bool, human string) error {
	if e.json || force {
		return e.printRaw(e.svc.TaskJSON(t))
	}
	if human != "" {
		e.printf("%s\n", human)
	}
	return nil
}

func (e *env) printRaw(b []byte) error {
	_, err := fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

// printStatus prints a status object, {"status":"…"} (claim without a
// task: app.ClaimResult.Status).
func (e *env) printStatus(status string) error {
	b, err := json.Marshal(struct {
		Status string `json:"status"`
	}{status})
	if err != nil {
		return err
	}
	return e.printRaw(b)
}

// printMore ends a list cut by --limit with how many rows it left out
// (nothing when none was).
func (e *env) printMore(more int, what string) {
	if more > 0 {
		e.printf("… %s more %s; --limit 0 shows every one\n", grouped(more), what)
	}
}

// grouped renders n with thousands separators: 9,950.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// warnf prints a warning for people on stderr: the change stands.
func (e *env) warnf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "coord: warning: %s\n", coord.OneLine(fmt.Sprintf(format, args...)))
}
