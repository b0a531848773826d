package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/gitrepo"
	"github.com/rotd/coordination/registry/backend"
)

// env is what every command needs, resolved lazily from the global flags:
// where the caller stands (workspace), who it is, and the application
// (app.Service) over the backend the flags name. Commands parse their
// flags, call the Service and print; they hold no rule and name no
// storage package.
type env struct {
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	json, diagnose bool
	// repoAtRoot: the repository the application asks about is the
	// project root's, wherever the caller stands (the daemons and the
	// lander: watch, schedule, clean-stale, land). Otherwise it is the
	// caller's own checkout (newProjectRepo).
	repoAtRoot                       bool
	rootFlag, agentFlag, backendFlag string
	rootSet, agentSet, backendSet    bool
	lockWait                         time.Duration
	lockWaitSet                      bool
	allowUnsafeFS                    bool
	clock                            coord.Clock
	be                               coord.Backend // for Close and Where only: commands go through svc
	svc                              *app.Service
	cfg                              coord.Config
	root, agent, cwd                 string

	// explicitAgent is the identity given by --agent, COORD_AGENT or
	// ROTD_AGENT_ID, resolved and checked by open (so help works whatever
	// the environment), "" when none is; who() adds the agent_id file.
	explicitAgent string
	// connectTimeout bounds connecting to a remote backend (0: the
	// engine's default); the hooks set it shorter.
	connectTimeout time.Duration
}

func (e *env) before(c *cli.Command) error {
	e.json = c.Bool("json")
	e.diagnose = c.Bool("lock-diagnose")
	e.rootFlag, e.rootSet = c.String("root"), c.IsSet("root")
	e.agentFlag, e.agentSet = c.String("agent"), c.IsSet("agent")
	e.backendFlag, e.backendSet = c.String("backend"), c.IsSet("backend")
	if err := e.defaults(); err != nil {
		return err
	}
	e.allowUnsafeFS = e.allowUnsafeFS || c.Bool("allow-unsafe-fs")
	if c.IsSet("lock-wait") {
		d, err := coord.ParseDuration(c.String("lock-wait"))
		if err != nil {
			return strErr("--lock-wait: %v", err)
		}
		e.lockWait, e.lockWaitSet = d, true
	}
	if e.agentSet {
		if err := workspace.CheckAgent("--agent", e.agentFlag); err != nil {
			return err
		}
	}
	return nil
}

// defaults sets what a command has when no global flag is given: the
// system clock, the environment's say on unsafe file systems, and the
// working directory. before calls it, and so does run's fast path for
// `coord hook` (which takes no flag).
func (e *env) defaults() error {
	e.clock = coord.SystemClock
	e.allowUnsafeFS = os.Getenv(coord.EnvAllowUnsafeFS) == "1"
	wd, err := os.Getwd()
	if err != nil {
		return coord.Wrap(coord.CodeIO, err, "cannot read the working directory")
	}
	e.cwd = wd
	return nil
}

// backendURL is the backend the caller names: --backend, else
// COORD_BACKEND ("" for neither: the file tree found from the root, or
// the "backend" of its config.json, which the opener reads).
func (e *env) backendURL() string {
	if e.backendSet {
		return e.backendFlag
	}
	return os.Getenv(coord.EnvBackend)
}

// open resolves the root and the backend and opens the application.
func (e *env) open() (*app.Service, error) { return e.openService(false) }

// openForDoctor is open for doctor, which reports (and repairs) what open
// refuses: a subdirectory of the wrong kind, an unreadable config.json
// (the defaults are used meanwhile).
func (e *env) openForDoctor() (*app.Service, error) { return e.openService(true) }

func (e *env) openService(doctor bool) (*app.Service, error) {
	if e.svc != nil {
		return e.svc, nil
	}
	id, _, err := workspace.ExplicitAgent(e.agentFlag, e.agentSet)
	if err != nil {
		return nil, err
	}
	e.explicitAgent = id
	url := e.backendURL()
	// A named backend needs no local tree: the root is then only where
	// this agent's identity file and ROTD artifacts live.
	root, err := workspace.FindRoot(e.rootFlag, e.rootSet, e.cwd, url == "")
	if err != nil {
		return nil, err
	}
	e.root = root
	warn := func(msg string) { fmt.Fprintf(e.stderr, "coord: warning: %s\n", coord.OneLine(msg)) }
	opt := backend.Options{
		URL:            url,
		Root:           root,
		Clock:          e.clock,
		Warn:           warn,
		Holder:         e.explicitAgent,
		AllowUnsafeFS:  e.allowUnsafeFS,
		Lenient:        doctor,
		ConnectTimeout: e.connectTimeout,
	}
	if e.lockWaitSet {
		opt.LockWait = e.lockWait
	}
	b, err := backend.Open(e.ctx, opt)
	if err != nil {
		return nil, err
	}
	repoDir := e.cwd
	if e.repoAtRoot {
		repoDir = root
	}
	repo := newProjectRepo(repoDir, root, e.paths)
	svc, err := app.New(e.ctx, b, app.Options{Clock: e.clock, Warn: warn, Formats: backend.Formats{}, Getenv: os.Getenv, Repo: repo,
		History: newProjectHistory(root, e.paths)})
	if err != nil {
		b.Close()
		return nil, err
	}
	e.be, e.svc, e.cfg = b, svc, svc.Config()
	if m, ok := gitrepo.UnfollowedLanding(e.cwd); ok {
		// Said on every command run here until the checkout follows.
		warn(m.Unfollowed())
	}
	return svc, nil
}

// openAs opens the application and resolves this agent's identity, as
// most commands that change something need both.
func (e *env) openAs() (*app.Service, string, error) {
	s, err := e.open()
	if err != nil {
		return nil, "", err
	}
	agent, err := e.who()
	return s, agent, err
}

// who resolves this agent's id (after open, so the root is known).
func (e *env) who() (string, error) {
	if e.agent != "" {
		return e.agent, nil
	}
	id, err := workspace.AgentID(e.agentFlag, e.agentSet, e.cwd, e.root)
	if err != nil {
		return "", err
	}
	e.agent = id
	if h, ok := e.be.(interface{ SetHolder(string) }); ok {
		h.SetHolder(id)
	}
	return id, nil
}

// caller is this agent as the rules see it: its id, its capabilities
// (--capability, else COORD_AGENT_CAPS, else ROTD_AGENT_CAPS) and its
// skill filter (--skill-level).
func (e *env) caller(c *cli.Command) (coord.Agent, error) {
	skill, err := coord.ParseSkillFilter(c.String("skill-level"))
	if err != nil {
		return coord.Agent{}, err
	}
	id, err := e.who()
	if err != nil {
		return coord.Agent{}, err
	}
	return coord.Agent{ID: id, Caps: e.caps(c), Skill: skill}, nil
}

// caps is this agent's capabilities: --capability, else COORD_AGENT_CAPS,
// else ROTD_AGENT_CAPS (ROTD's spelling, docs/FORMATS.md).
func (e *env) caps(c *cli.Command) []string {
	if c.IsSet("capability") {
		return coord.ParseCaps(c.String("capability"))
	}
	for _, name := range coord.CapsEnvs {
		if v, ok := os.LookupEnv(name); ok {
			return coord.ParseCaps(v)
		}
	}
	return nil
}

// paths maps the paths a caller names to repository paths (after open).
func (e *env) paths() *workspace.Paths { return workspace.NewPaths(e.root, e.cwd) }

// where names the project for people: the tree's directory or the URL.
func (e *env) where() string {
	if e.be == nil {
		return e.root
	}
	return e.be.Where()
}

func (e *env) close() {
	if e.be != nil {
		e.be.Close()
	}
}

// useProjectDir takes the working directory the agent names for its
// session, when it names one (docs/AGENTS.md; workspace.ProjectDir).
func (e *env) useProjectDir() {
	if d := workspace.ProjectDir("", os.Getenv); d != "" {
		e.cwd = d
	}
}
