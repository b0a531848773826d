package coord

// The environment variables coord reads and sets, by name: this is their
// one home (docs/COMMANDS.md describes them; a test in this package
// refuses a "COORD_…" name written anywhere else in the product's code).
const (
	// EnvAgent names the agent a command acts as (after --agent).
	EnvAgent = "COORD_AGENT"
	// EnvAgentROTD is the ROTD spelling of EnvAgent, read after it.
	EnvAgentROTD = "ROTD_AGENT_ID"
	// EnvCaps lists the agent's capabilities, comma-separated.
	EnvCaps = "COORD_AGENT_CAPS"
	// EnvCapsROTD is the ROTD spelling of EnvCaps, read after it.
	EnvCapsROTD = "ROTD_AGENT_CAPS"
	// EnvRoot is the project's root (after --root).
	EnvRoot = "COORD_ROOT"
	// EnvBackend is the registry's URL (after --backend): file://… or
	// nats://….
	EnvBackend = "COORD_BACKEND"
	// EnvAllowUnsafeFS=1 runs on file systems whose locks and renames
	// are not trustworthy (after --allow-unsafe-fs).
	EnvAllowUnsafeFS = "COORD_ALLOW_UNSAFE_FS"
	// EnvTask names the task `coord run` runs its command for; inside,
	// verify, release, progress, block and the hooks act on it.
	EnvTask = "COORD_TASK"
	// EnvEpoch is that task's claim epoch.
	EnvEpoch = "COORD_EPOCH"
	// EnvReview=1 marks a `coord run --review` command.
	EnvReview = "COORD_REVIEW"
	// EnvReviewNotes carries a sent-back task's review notes to its
	// command.
	EnvReviewNotes = "COORD_REVIEW_NOTES"
	// EnvLeaseTTL overrides the configured stale_after for one process.
	EnvLeaseTTL = "COORD_LEASE_TTL"
	// EnvDashboardToken is the page's token (after --token).
	EnvDashboardToken = "COORD_DASHBOARD_TOKEN"
	// EnvRunSupervisor marks the supervising process `coord run` starts
	// around its command (internal).
	EnvRunSupervisor = "COORD_RUN_SUPERVISOR"
	// The land check's environment: the task, the target, the candidate
	// commit checked, the task's head and the target's tip it merged on.
	EnvLandTarget = "COORD_LAND_TARGET"
	EnvLandCommit = "COORD_LAND_COMMIT"
	EnvLandHead   = "COORD_LAND_HEAD"
	EnvLandBase   = "COORD_LAND_BASE"
)

// AgentEnvs are the variables naming the agent, in the order read.
var AgentEnvs = []string{EnvAgent, EnvAgentROTD}

// CapsEnvs are the variables listing capabilities, in the order read.
var CapsEnvs = []string{EnvCaps, EnvCapsROTD}

// SessionEnvs are the variables an agent's session passes through to
// the coord processes its MCP client starts (Codex's env_vars).
var SessionEnvs = []string{EnvAgent, EnvCaps, EnvRoot, EnvBackend, EnvAgentROTD, EnvCapsROTD}
