package coord

import (
	"encoding/json"
	"time"
)

// Config is a project's settings (config.json on the file backend). Every
// key is optional; DefaultConfig says what an absent one means.
type Config struct {
	StaleAfter   time.Duration // stale_after: a lock whose agent is silent this long is freed
	BeatInterval time.Duration // beat_interval: how often run and wait beat
	LockWait     time.Duration // lock_wait: how long a commit waits for exclusion
	ReviewGate   bool          // review_gate: release goes to review, approve to done
	OnStale      StalePolicy   // on_stale: what the sweep does with a dead agent's task
	Quota        QuotaLimits   // quota_daily_tokens, quota_daily_requests
	// RequireVerified makes release refuse a task whose newest receipt
	// did not pass on the tree being released (require_verified;
	// docs/GIT.md, Txn.CheckVerified).
	RequireVerified bool
	// ArchiveAfter, when set, makes maintenance archive done tasks
	// completed longer ago than this (archive_after).
	ArchiveAfter time.Duration
	// Roster lists agent names per lease cadence ("daily", "weekly") for
	// 'coord lease check' (lease_roster).
	Roster map[string][]string
	// SweepOnClaim makes claim, run and wait free stale locks themselves
	// before they look for work (sweep_on_claim, default true), so a dead
	// agent's task does not wait for a watcher or cron.
	SweepOnClaim bool
	// Scheduling is "pull" (default: claim takes the best eligible task) or
	// "push" (claim without a task takes from the caller's inbox, which a
	// scheduler fills: docs/SCHEDULING.md).
	Scheduling Scheduling
	// Backend, in a project's local config.json, names where the project's
	// state lives when neither --backend nor COORD_BACKEND does
	// (docs/MANY-MACHINES.md); "" is the local tree itself.
	Backend string
	// LeaseTTL is the lifetime of a lease acquired without one
	// (lease_ttl, default DefaultLeaseTTL); COORD_LEASE_TTL overrides it.
	LeaseTTL time.Duration
	// MaxRejections is how many rejections a task may take since its
	// claim before a rejection blocks it instead of returning it to its
	// owner (max_rejections, default 3, at least 1): a reviewer and an
	// implementer that disagree for good stop at a person, not in a loop.
	MaxRejections int
	// Target is the branch work lands on (target, default "main"):
	// a task's base is its branch's merge base with it, and a task's
	// work has landed once its head is reachable from it.
	Target string
	// LandCheck is the shell command line coord land runs (sh -c) on
	// each candidate merge before it moves the target (land_check; ""
	// none): exit 0 passes.
	LandCheck string
	// LandParallel is how many candidates coord land checks at once
	// (land_parallel, 1..MaxLandParallel, default 1): each on the target
	// merged with the candidates ahead of it, landed in order.
	LandParallel int
	// WriteClaims is what the edit hooks do at a task's first write to a
	// path (write_claims: exclusive, warn, off; default exclusive).
	WriteClaims ClaimMode
	// WriteClaimsUntasked is what a write by an agent holding no task
	// meets at another task's write claim (write_claims_untasked: guard,
	// warn, off; default guard).
	WriteClaimsUntasked UntaskedMode
	// Supervisors, when set, are the only agents that may act on work
	// they do not hold (supervisors: requeue, assign, unblock another's
	// task, approve for a human, decide a review routed to another
	// reviewer; docs/COMMANDS.md#supervising). Unset, any agent may: the acts are logged
	// with who asked, and a project that wants them kept to people says
	// so.
	Supervisors []string
	// PredictedFiles is whether eligibility and the scheduler weigh the
	// paths coord plan predicts (predicted_files: weigh, off; default
	// weigh; enforce and warn, of earlier versions, mean weigh), and
	// PredictFloor the probability below which a prediction is shown,
	// never weighed (predict_floor, 0..1, default DefaultPredictFloor).
	// Plan says whether seed-tasks plans its batch (plan: auto, manual;
	// default auto).
	PredictedFiles PredictMode
	PredictFloor   float64
	Plan           PlanMode
	// TaskBranch is the pattern of a task's own branch (task_branch,
	// default DefaultTaskBranch; TaskBranchOff: coord never switches
	// branches): taking a task in a linked worktree checks it out.
	TaskBranch string
	// Remote is the git remote that holds the target for many machines
	// (remote, default none: one repository). With it the target is the
	// remote's branch: task branches start from its tip, releases push
	// their branch there, and the lander moves it by compare-and-swap.
	Remote string
}

// DefaultMaxRejections is max_rejections when config.json does not say.
const DefaultMaxRejections = 3

// MaxLandParallel bounds land_parallel and land --parallel: more checks
// at once than this is a mistake, not a machine.
const MaxLandParallel = 64

// Scheduling is how agents get work.
type Scheduling string

// The scheduling modes of config.json's "scheduling".
const (
	Pull Scheduling = "pull"
	Push Scheduling = "push"
)

// Valid reports whether s is pull or push.
func (s Scheduling) Valid() bool { return s == Pull || s == Push }

// DefaultConfig is what an absent config.json means.
func DefaultConfig() Config {
	return Config{
		StaleAfter:   15 * time.Minute,
		BeatInterval: 60 * time.Second,
		LockWait:     30 * time.Second,
		OnStale:      Requeue,
		SweepOnClaim: true,
		Scheduling:   Pull,
		LeaseTTL:     DefaultLeaseTTL,

		MaxRejections: DefaultMaxRejections,

		Target:              DefaultTarget,
		LandParallel:        1,
		WriteClaims:         ClaimsExclusive,
		WriteClaimsUntasked: UntaskedGuard,

		PredictedFiles: PredictWeigh,
		PredictFloor:   DefaultPredictFloor,
		Plan:           PlanAuto,
		TaskBranch:     DefaultTaskBranch,
	}
}

// Setting is one setting of a project as people see it (coord config
// show and get): its key, its value in force, and where that comes from.
type Setting struct {
	Key string
	// Value is its JSON value in force: as stored, else the default
	// (null for a setting that is off when unset).
	Value json.RawMessage
	// Set says it is stored (not a default); Known that it is one of
	// coord's settings (a stored key of another tool is not).
	Set, Known bool
}
