#!/usr/bin/env bash
# A live demo of the whole lifecycle, claim to main: three agents run
# `coord run --loop` in worktrees of their own, each task on its own
# branch (task/<id>); alice's task 1 and bob's task 2 change the same
# line. A watching lander lands the work behind a check, one task per
# landing: it sends task 2 back to bob naming the file; bob's loop takes
# it up again on its own branch, merges main and resolves, while his next
# task (4) lands on its own. Every loop ends once all its work has
# landed. Ends with main's history; exits non-zero if any step did not
# go as said.
set -euo pipefail

DEMO=demo-land
. "$(dirname "$0")/demo-lib.sh"

say "repository: $DIR/app (main), a coord project in it"
g init -q -b main "$DIR/app"
cd "$DIR/app"
printf 'greeting = "hello"\nfarewell = "bye"\n' >config.txt
g add . && g commit -q -m "first commit"
c init >/dev/null
# Capabilities pin the tasks to agents, so the demo goes the same way every time.
cat <<'EOF' | c seed-tasks --stdin
{"id":"1","title":"Friendlier greeting","capability":"alice"}
{"id":"2","title":"Formal greeting","capability":"bob"}
{"id":"3","title":"Add a README","capability":"carol"}
{"id":"4","title":"Add a changelog","capability":"bob"}
EOF
c config set land_check 'sleep 1; test -s config.txt && grep -q farewell config.txt'
# Tasks 1 and 2 both change config.txt. Under the default (exclusive
# write claims) the second release would be refused at once, naming the
# first; this demo shows the other net, the landing: claims only warn,
# and the lander finds the conflict and sends the task back.
c config set write_claims warn

say "a worktree per agent (coord worktree add: the worktree is the agent)"
for a in alice bob carol; do c worktree add "$a"; done

standin_agent "$DIR/agent.sh" main

say "three agents: coord run --loop -- sh agent.sh, each in its worktree"
for a in alice bob carol; do
	(cd "$DIR/app-$a" && COORD_AGENT_CAPS=$a c run --loop --beat 1s -- sh "$DIR/agent.sh" >"$DIR/$a.out" 2>"$DIR/$a.err") &
	pids+=($!)
done
until_ok sh -c "test \"\$('$COORD' ls --json | grep -o '\"status\":\"done\"' | wc -l)\" = 4" || fail "the four tasks were not released"
c ls
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || fail "a loop ended before its work landed"; done
echo "(every loop still runs: its released work has not landed yet)"

say "coord land --watch: merge each, check the merge, move main by compare-and-swap"
"$COORD" land --watch >"$DIR/lander.out" 2>&1 &
lander=$!
for p in "${pids[@]}"; do wait "$p" || fail "a loop failed"; done
pids=($lander)
kill -TERM "$lander"
wait "$lander" || true
cat "$DIR/lander.out"
grep -q '^sent back 2 to bob: landing on main conflicts in config.txt' "$DIR/lander.out" || fail "task 2 was not sent back"
cat "$DIR/bob.err"
grep -q 'task 2 came back' "$DIR/bob.err" || fail "bob did not take task 2 up again"
for a in alice bob carol; do grep -q '"status":"drained"' "$DIR/$a.out" || fail "$a's loop did not drain"; done
g show main:config.txt | grep -q "good day, hi there" || fail "bob's resolution is not on main"

say "main, first parents: one task per landing"
g log --first-parent --format='%h %s' main
for c1 in $(g rev-list --first-parent main~4..main); do
	n=$(g log --format=%s "$c1^1..$c1" | grep -o 'task [0-9]' | sort -u | wc -l)
	[ "$n" = 1 ] || fail "landing $c1 holds the work of $n tasks"
done
c ls
[ -z "$(git worktree list --porcelain | grep coord-land || true)" ] || fail "a temporary worktree was left"
say "ok"
