package replay

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rotd/coordination/internal/gitrepo"
)

// A Repo is a git repository holding a history's commits with their real
// paths, messages and dates and synthetic contents, built with git
// fast-import. Every version of a file is "<path>\n<commit>\n", so no
// two versions are alike and git log sees each change as the history
// has it; a rename keeps the file's content, so git's rename detection
// finds it again.
type Repo struct {
	Dir     string
	branch  string
	present map[string]bool
}

// NewRepo makes an empty bare repository in dir (which must not exist or
// be empty) whose HEAD is branch main.
func NewRepo(ctx context.Context, dir string) (*Repo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := run(ctx, dir, nil, "init", "--bare", "-q", "-b", "main", "."); err != nil {
		return nil, err
	}
	return &Repo{Dir: dir, branch: "main", present: map[string]bool{}}, nil
}

// Fork starts branch name at the current branch's tip and makes it HEAD
// and the branch later commits go to; the returned Repo shares the
// directory (use one fork at a time).
func (r *Repo) Fork(ctx context.Context, name string) (*Repo, error) {
	if _, err := run(ctx, r.Dir, nil, "branch", "-f", name, r.branch); err != nil {
		return nil, err
	}
	if _, err := run(ctx, r.Dir, nil, "symbolic-ref", "HEAD", "refs/heads/"+name); err != nil {
		return nil, err
	}
	f := &Repo{Dir: r.Dir, branch: name, present: make(map[string]bool, len(r.present))}
	for p := range r.present {
		f.present[p] = true
	}
	return f, nil
}

// Append commits cs on top of the branch, in order.
func (r *Repo) Append(ctx context.Context, cs []Commit) error {
	if len(cs) == 0 {
		return nil
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	_, err := run(ctx, r.Dir, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+r.branch)
	first := err == nil
	for i := range cs {
		r.writeCommit(w, &cs[i], first && i == 0)
	}
	fmt.Fprintf(w, "done\n")
	w.Flush()
	_, err = run(ctx, r.Dir, &b, "fast-import", "--quiet", "--done")
	return err
}

func (r *Repo) writeCommit(w *bufio.Writer, c *Commit, from bool) {
	t := c.Time()
	when := fmt.Sprintf("%d %s", t.Unix(), t.Format("-0700"))
	msg := c.Subject
	if c.Body != "" {
		msg += "\n\n" + c.Body
	}
	msg += "\n"
	fmt.Fprintf(w, "commit refs/heads/%s\n", r.branch)
	fmt.Fprintf(w, "author Replay <replay@coord.invalid> %s\n", when)
	fmt.Fprintf(w, "committer Replay <replay@coord.invalid> %s\n", when)
	fmt.Fprintf(w, "data %d\n%s\n", len(msg), msg)
	if from {
		fmt.Fprintf(w, "from refs/heads/%s^0\n", r.branch)
	}
	for _, f := range c.Files {
		switch f.Status {
		case "D":
			if r.present[f.Path] {
				fmt.Fprintf(w, "D %s\n", quote(f.Path))
				delete(r.present, f.Path)
			}
		case "R", "C":
			if f.From != "" && f.From != f.Path && r.present[f.From] {
				op := "R"
				if f.Status == "C" {
					op = "C"
				} else {
					delete(r.present, f.From)
				}
				fmt.Fprintf(w, "%s %s %s\n", op, quote(f.From), quote(f.Path))
				r.present[f.Path] = true
				continue
			}
			r.modify(w, f.Path, c.Sha)
		default:
			r.modify(w, f.Path, c.Sha)
		}
	}
	fmt.Fprintf(w, "\n")
}

func (r *Repo) modify(w *bufio.Writer, path, sha string) {
	// A file where a directory of the history's tree stands, or the
	// reverse, would make fast-import drop one of them: the history
	// (a first-parent line) can hold such leftovers.
	content := path + "\n" + sha + "\n"
	fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", quote(path), len(content), content)
	r.present[path] = true
}

// quote writes a path as fast-import reads it: in double quotes, with
// '"', '\\' and control characters escaped (C style, octal).
func quote(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// run runs git in dir with stdin, bounded by a generous timeout, without
// the user's or the system's configuration.
func run(ctx context.Context, dir string, stdin *bytes.Buffer, args ...string) ([]byte, error) {
	var in io.Reader
	if stdin != nil {
		in = stdin
	}
	return gitrepo.RunInput(ctx, 5*time.Minute, dir, []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}, in, args...)
}
