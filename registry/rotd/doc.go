// Package rotd imports the task list of ROTD's planner (tasks.jsonl, in
// ROTD's own dialect of statuses, priorities and phase dependencies) as a
// batch of coord seed lines. It reads, maps and validates; it writes
// nothing: the caller seeds the batch through the application, where the
// batch is checked against the registry (ids new, deps known, no cycle).
//
// The mapping is in ParseTasks and docs/FORMATS.md ("ROTD planner tasks").
// Limits: a phase is known only from the batch and the registry the caller
// describes (registryPhase, registryHas); a line is at most
// format.MaxSeedLine bytes.
package rotd
