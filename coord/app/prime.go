package app

// Prime is the short text that tells an agent how to use coord: printed by
// 'coord prime', offered as an MCP prompt and injected by the agents'
// session-start hooks.
const Prime = `coord: shared task registry for agents in this repo. Exit codes: 0 ok, 1 usage, 2 io, 3 conflict/not eligible, 4 lock timeout, 6 lost (stop working on that task).

Simplest loop: coord run --loop -- <your command>
  takes task after task (work sent back first) on its own branch task/<id>,
  sets COORD_TASK/COORD_AGENT (COORD_REVIEW_NOTES: why it came back),
  releases on exit 0 (75: gives it back), blocks on failure; ends once
  all it released has landed.
Inside it: commit your work (git add -A && git commit); verify, release,
  progress, block act on COORD_TASK. Sent back for a conflict: git merge
  main, resolve, commit.

By hand:
  coord claim            -> {"id":"4.2",...,"epoch":17} or {"status":"no_eligible_task"|"drained"}
  coord beat             (every few minutes while working)
  coord release 4.2 --epoch 17 --summary "what changed"
  coord block 4.2 --reason "why" --epoch 17

Nothing eligible? coord wait --timeout 10m. "drained": no work left; stop.
A dead agent's task is freed after stale_after (15m).
Files you write are your task's until it lands; a refusal names the holder.
Identity: --agent ID or COORD_AGENT (a worktree from coord worktree add is its agent's).
See also: coord ls, coord ready --explain, coord log -n 20.
`
