package app

// Prime is the short text that tells an agent how to use coord: printed by
// 'coord prime', offered as an MCP prompt and injected by the agents'
// session-start hooks.
const Prime = `coord: shared task registry for agents in this repo. Exit codes: 0 ok, 1 usage, 2 io, 3 conflict/not eligible, 4 lock timeout, 6 lost (stop working on that task).

Simplest loop: coord run --loop -- <your command>
  claims task after task (waiting while none is eligible), sets
  COORD_TASK/COORD_EPOCH/COORD_AGENT, beats, releases on exit 0, blocks on
  failure; stops the command if the claim is lost or cannot be kept alive;
  exit 0 when no work is left, 130 on INT/TERM/HUP (task handed back).

By hand:
  coord claim            -> {"id":"4.2",...,"epoch":17} or {"status":"no_eligible_task"|"drained"}
  coord beat             (at least every few minutes while working; or
                          coord beat --every 60s &, which stops with its parent)
  coord progress 4.2 50 --epoch 17
  coord release 4.2 --epoch 17 --summary "what changed"
  coord block 4.2 --reason "why" --epoch 17

Nothing eligible? coord wait --timeout 10m (exit 0 when there is work).
"drained": no work is left at all; stop then.
A dead agent's task is freed once its heartbeat is older than stale_after
(15m): the next claim, run or wait frees it, as do coord watch/clean-stale.
Files you write are your task's until it lands; lock ahead: coord
lock-file PATH... (a refusal names the holder).
Push mode (a scheduler assigns): coord agents register; coord run --inbox -- <cmd>.
Identity: --agent ID or COORD_AGENT. Capabilities: --capability a,b.
See also: coord ls, coord ready --explain, coord log -n 20.
`
