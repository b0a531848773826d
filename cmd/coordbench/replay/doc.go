// Package replay measures coord's planner (coord/plan) on real histories
// replayed as work: the commit metadata of public repositories
// (the histories data set outside this repository, PLAN_DATA: subject,
// body, date, paths, hunk ranges; no
// contents), each history's last commits seeded as tasks (title = subject,
// description = body) in commit order, and drained by N simulated agents.
//
// The simulation is event-driven in simulated time and uses coord's own
// domain: each task is a coord.Task whose Files are the paths a policy
// declares (the planner's policies record them as predicted_files with
// their predicted_confidence, as coord plan does, so the rule measured is
// the weighing coord applies, with the default predict_floor), and an
// idle agent claims with coord.Txn.Claim (coord's eligibility, weighing
// and priority rules: a task whose declared files meet a claimed task's
// waits, one likely to meet the work in flight waits, and among the rest
// the least likely goes first) and releases with coord.Txn.Release.
// A task lasts Duration(lines changed). Two tasks in flight at once whose
// real changes meet (see Meet: overlapping or adjacent hunks of a file, or
// a file one adds, deletes or renames) are one merge conflict.
//
// Policies: first come, first served (no files), the oracle (each task's
// real files: no conflict, the best makespan a file-level scheduler
// reaches), a naive word-overlap predictor (two files per task), coord's planner
// run once when the tasks are seeded, and the planner run again after
// every few landings (the landed commits join the history and the
// unclaimed tasks are predicted again, the tasks in flight planned beside
// them), as coord watch and land do (app.ReplanAfter).
// Options.WriteClaims models claims taken at first write (claims.go): an
// agent writes its task's files one by one over the
// task's duration; a write to a file another task in flight wrote is
// refused and the agent waits until that task lands (two that wait on
// each other: the one claimed last hands its task back). BenchClaims
// replays the histories first come, first served without claims, with
// claims recorded only (warn) and enforced, and counts the conflicts
// left, the refused edits and the waits (coordbench -replay-claims).
//
// By default the planner runs exactly as on a user's repository: the
// earlier commits are written into a git repository with git fast-import
// (real paths, messages and dates, synthetic contents that keep renames
// detectable) and read back with package gitrepo; re-plans append the
// landed commits and refresh the index incrementally. Direct feeds the
// commits as data instead (faster, for tests and sweeps).
//
// Own reads a git repository's own history in the data set's form
// (package gitrepo's commits, the newest with their diffs from
// gitrepo.Diffs; merges and empty commits left out), and BenchCommits
// replays it as the data set's histories are replayed: coordbench -plan
// replays the repository it runs in as a fifth history. A history with
// files (this repository's, unlike the data set's) can also be replayed
// with Contents: each plan looks the identifiers its batch names up in
// the files (coordbench: as they were before the first task, a clone
// made with Checkout), as coord plan does.
package replay
