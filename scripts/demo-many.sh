#!/usr/bin/env bash
# Many machines, one target: two clones stand for two machines, a
# `coord hub` carries the claims and a real git server (git daemon,
# serving a bare repository over TCP on a loopback port) carries the
# commits. Two agents per machine run `coord run --loop` in worktrees of
# their own; one lander (on machine 1) lands onto the server's main.
# Task 1 (machine 1) and task 2 (machine 2) change the same line: the
# second to land is sent back across machines, its owner merges
# origin/main and resolves, and it lands. Nothing is shared between the
# two clones but the hub and the server. Exits non-zero if any step did
# not go as said.
set -euo pipefail

DEMO=demo-many
. "$(dirname "$0")/demo-lib.sh"
git daemon --help >/dev/null 2>&1 || [ -x "$(git --exec-path)/git-daemon" ] || { echo "demo-many: git daemon is not installed" >&2; exit 1; }

say "the git server: git daemon serving $DIR/srv/app.git over TCP"
g init -q -b main "$DIR/seed"
printf 'greeting = "hello"\nfarewell = "bye"\n' >"$DIR/seed/config.txt"
g -C "$DIR/seed" add . && g -C "$DIR/seed" commit -q -m "first commit"
mkdir "$DIR/srv"
g clone -q --bare "$DIR/seed" "$DIR/srv/app.git"
URL=
for _ in 1 2 3 4 5; do # a free port: try one, take the next if it is taken
	port=$((30000 + RANDOM % 20000))
	git daemon --reuseaddr --export-all --enable=receive-pack --base-path="$DIR/srv" \
		--listen=127.0.0.1 --port="$port" >"$DIR/daemon.log" 2>&1 &
	daemon=$!
	if until_ok sh -c "kill -0 $daemon 2>/dev/null && git ls-remote git://127.0.0.1:$port/app.git >/dev/null 2>&1"; then
		URL=git://127.0.0.1:$port/app.git
		pids+=($daemon)
		break
	fi
	kill "$daemon" 2>/dev/null || true
done
[ -n "$URL" ] || { cat "$DIR/daemon.log" >&2; fail "git daemon did not start"; }
echo "remote: $URL"

say "the hub: coord hub carries the claims"
# "$COORD", not c: $! must be the hub itself, or the clean-up stops only
# the shell around it and the hub outlives the demo.
"$COORD" hub --dir "$DIR/hub" --listen 127.0.0.1:0 >"$DIR/hub.out" 2>"$DIR/hub.err" &
pids+=($!)
until_ok grep -q '^COORD_BACKEND=' "$DIR/hub.out" || { cat "$DIR/hub.err" >&2; fail "the hub did not start"; }
export COORD_BACKEND="$(sed -n 's/^COORD_BACKEND=//p' "$DIR/hub.out")/demo"
echo "COORD_BACKEND=$COORD_BACKEND"

say "two machines: a clone each of $URL"
g clone -q "$URL" "$DIR/m1/app"
g clone -q "$URL" "$DIR/m2/app"
cd "$DIR/m1/app"
c init >/dev/null
c config set remote origin
# The stand-in agents write with the shell (no edit hooks claim files):
# the conflict is the lander's to find, so write claims only warn.
c config set write_claims warn
c config set land_check 'test -s config.txt && grep -q farewell config.txt'
# Capabilities pin the tasks to agents, so the demo goes the same way every time.
cat <<'EOF' | c seed-tasks --stdin
{"id":"1","title":"Friendlier greeting","capability":"alice"}
{"id":"2","title":"Formal greeting","capability":"carol"}
{"id":"3","title":"Add a README","capability":"bob"}
{"id":"4","title":"Add a changelog","capability":"dave"}
EOF
c worktree add alice >/dev/null && c worktree add bob >/dev/null
cd "$DIR/m2/app"
c worktree add carol >/dev/null && c worktree add dave >/dev/null
git worktree list

standin_agent "$DIR/agent.sh" origin/main

say "four agents, two per machine: coord run --loop (each release pushes its task's branch)"
loops=()
for m in m1:alice m1:bob m2:carol m2:dave; do
	a=${m#*:}
	(cd "$DIR/${m%%:*}/app-$a" && COORD_AGENT_CAPS=$a c run --loop --beat 1s -- sh "$DIR/agent.sh" >"$DIR/$a.out" 2>"$DIR/$a.err") &
	loops+=($!)
	pids+=($!)
done
until_ok sh -c "test \"\$('$COORD' ls --json | grep -o '\"status\":\"done\"' | wc -l)\" = 4" || fail "the four tasks were not released"
c ls
g --git-dir="$DIR/srv/app.git" for-each-ref --format='  on the server: %(refname:short)' refs/heads/

say "machine 2 sees the conflict with machine 1's work before anything lands"
c conflicts
c conflicts --json | grep -q '"files":\["config.txt"\]' || fail "the conflict between tasks 1 and 2 was not found"

say "one lander, on machine 1: coord land --watch moves the server's main by compare-and-swap"
cd "$DIR/m1/app"
"$COORD" land --watch >"$DIR/lander.out" 2>&1 &
lander=$!
pids+=($lander)
for p in "${loops[@]}"; do wait "$p" || fail "a loop failed"; done
kill -TERM "$lander"
wait "$lander" || true
cat "$DIR/lander.out"
grep -q '^sent back [12] to \(alice\|carol\): landing on main conflicts in config.txt: merge origin/main' "$DIR/lander.out" ||
	fail "the conflict was not sent back"
cat "$DIR/alice.err" "$DIR/carol.err"
grep -q 'came back' "$DIR/alice.err" "$DIR/carol.err" || fail "the owner did not take the task up again"
for a in alice bob carol dave; do grep -q '"status":"drained"' "$DIR/$a.out" || fail "$a's loop did not drain"; done

say "the server's main: every task landed, the resolution included"
g --git-dir="$DIR/srv/app.git" log --first-parent --format='%h %s' main
g --git-dir="$DIR/srv/app.git" show main:config.txt | grep -q "good day, hi there" || fail "the resolution is not on the server's main"
for f in README.md CHANGELOG.md; do g --git-dir="$DIR/srv/app.git" show "main:$f" >/dev/null || fail "$f is not on the server's main"; done
c ls
say "ok"
