#!/usr/bin/env bash
# A live demo of coord: four agent processes share one temporary
# .rotd/coordination tree, claim/beat/release concurrently, one of them is
# SIGKILLed while holding a task, and `coord clean-stale` frees that task
# so the survivors finish it. Ends with the log, the final table and
# `coord doctor`; exits non-zero if any invariant failed.
set -euo pipefail

COORD=${COORD:-"$(cd "$(dirname "$0")/.." && pwd)/bin/coord"}
[ -x "$COORD" ] || { echo "demo: $COORD not built; run 'make demo'" >&2; exit 1; }
ROOT=$(mktemp -d "${TMPDIR:-/tmp}/coord-demo.XXXXXX")
export COORD_ROOT=$ROOT
PIDS=()
BEATERS=$(mktemp "${TMPDIR:-/tmp}/coord-demo-beaters.XXXXXX")
cleanup() {
	local all=("${PIDS[@]}" $(cat "$BEATERS" 2>/dev/null))
	for p in "${all[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	# beaters are grandchildren: let them finish before the tree goes
	for _ in $(seq 40); do
		alive=0
		for p in "${all[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.05
	done
	rm -f "$BEATERS"
	[ -n "${KEEP:-}" ] || rm -rf "$ROOT"
}
trap cleanup EXIT
c() { "$COORD" "$@"; }
# Bold headings on a terminal only: piped or redirected, no escape sequence.
if [ -t 1 ]; then
	say() { printf '\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '== %s\n' "$*"; }
fi

say "tree: $ROOT/.rotd/coordination"
c init >/dev/null

say "seeding 16 tasks (priorities, deps, a conflict group)"
{
	printf '{"id":"1.1","title":"Schema migration","priority":"urgent"}\n'
	printf '{"id":"1.2","title":"Auth tokens","priority":"high","deps":["1.1"]}\n'
	printf '{"id":"2.1","title":"Editor modal","conflict_group":"editor","files":["src/editor/*.ts"]}\n'
	printf '{"id":"2.2","title":"Editor toolbar","conflict_group":"editor"}\n'
	printf '{"id":"2.3","title":"Editor shortcuts","conflict_group":"editor","deps":["2.1"]}\n'
	for i in 1 2 3 4 5 6 7 8 9 10 11; do
		printf '{"id":"3.%d","title":"Endpoint %d","priority":"%s"}\n' "$i" "$i" "$([ $((i % 3)) = 0 ] && echo low || echo medium)"
	done
} | c seed-tasks --stdin
TOTAL=16

field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p"; }
done_count() { c ls --status done --json | grep -o '"id":' | wc -l | tr -d ' '; }

# stop_beater NAME PID: end an agent's background heartbeat on purpose.
# SIGTERM makes 'beat --every' say "interrupted by SIGTERM" and exit 130:
# that is the expected end, so it is kept out of the demo's output; any
# other line it wrote is shown.
stop_beater() {
	kill "$2" 2>/dev/null || true
	wait "$2" 2>/dev/null || true
	grep -v '^coord: interrupted by SIGTERM$' "$ROOT/$1.beat.err" >&2 || true
}

# agent NAME: the whole loop an agent runs: claim, beat while working,
# progress, release with the fencing epoch; stop when everything is done.
agent() {
	local me=$1
	"$COORD" --agent "$me" beat --every 1s 2>"$ROOT/$me.beat.err" &
	beater=$!
	echo "$beater" >> "$BEATERS"
	trap 'stop_beater "$me" "$beater"' EXIT
	while :; do
		local out id epoch
		out=$(c --agent "$me" claim) || { echo "$me: claim failed ($?)"; return 1; }
		case $out in
		*'"status":"drained"'*) # every task done: nothing left
			printf '  %-8s nothing left (claim says drained): stops beating and exits\n' "$me"
			return 0
			;;
		*no_eligible_task*) # work remains that others hold: try again soon
			sleep 0.3
			continue
			;;
		esac
		id=$(printf '%s' "$out" | field id)
		epoch=$(printf '%s' "$out" | field epoch)
		printf '  %-8s claimed %-4s (epoch %s)\n' "$me" "$id" "$epoch"
		sleep "0.$((RANDOM % 4 + 2))"
		c --agent "$me" progress "$id" 50 --epoch "$epoch" >/dev/null
		sleep "0.$((RANDOM % 4 + 1))"
		if ! c --agent "$me" release "$id" --epoch "$epoch" --summary "demo work on $id" >/dev/null; then
			printf '  %-8s lost %s: it was reclaimed\n' "$me" "$id"
		fi
	done
}

say "starting agents alice, bob, carol and mallory (mallory will crash)"
for a in alice bob carol; do
	agent "$a" &
	PIDS+=($!)
done
# mallory claims a task, beats once, then hangs until it is SIGKILLed.
# It is disowned: bash would otherwise report the kill as "Killed", which
# reads like a failure of the demo; the demo says it in its own words.
( out=$(c --agent mallory claim); printf '  %-8s claimed %-4s and hangs\n' mallory "$(printf '%s' "$out" | field id)"; exec sleep 600 ) &
MALLORY=$!
disown "$MALLORY"
PIDS+=($MALLORY)
sleep 1.5
say "crash on purpose: SIGKILL mallory (pid $MALLORY) while it holds a task"
kill -9 "$MALLORY"
echo "  mallory  killed; it will never release its task. Its heartbeat is"
echo "           still fresh, so for now it counts as alive:"
c agents || true
sleep 2.5
say "cron: coord clean-stale --timeout 2s"
c clean-stale --timeout 2s

for p in "${PIDS[@]}"; do
	[ "$p" = "$MALLORY" ] && continue
	wait "$p"
done

say "coordination.log"
c log -n 0
say "final registry"
c ls
say "coord doctor"
c doctor
n=$(done_count)
[ "$n" -eq $TOTAL ] || { echo "demo: only $n of $TOTAL tasks done" >&2; exit 1; }
say "demo ok: $TOTAL tasks done by 3 agents, mallory's task freed by clean-stale"
