#!/usr/bin/env bash
# The many-machines demo: one `coord hub`, two agents in two separate
# working directories (two clones, as two hosts would have) sharing one
# project through it. Each drains tasks; the hub is stopped and restarted
# on its directory halfway, and nothing is lost. Exits non-zero if a task
# was granted twice or lost.
set -euo pipefail

COORD=${COORD:-"$(cd "$(dirname "$0")/.." && pwd)/bin/coord"}
[ -x "$COORD" ] || { echo "demo-hub: $COORD not built; run 'make demo-hub'" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/coord-demo-hub.XXXXXX")
HUB=
cleanup() {
	[ -n "$HUB" ] && kill "$HUB" 2>/dev/null && wait "$HUB" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

start_hub() { # on a fixed port, so agents keep their URL across the restart
	# --namespace demo: the printed URL names the project's namespace
	# (nats://HOST:PORT/demo), so following it reaches this project.
	"$COORD" hub --dir "$WORK/hub" --listen "127.0.0.1:${PORT:-0}" --namespace demo >"$WORK/hub.out" 2>"$WORK/hub.err" &
	HUB=$!
	for _ in $(seq 300); do
		grep -q '^COORD_BACKEND=' "$WORK/hub.out" 2>/dev/null && break
		sleep 0.1
	done
	URL=$(sed -n 's/^COORD_BACKEND=//p' "$WORK/hub.out")
	[ -n "$URL" ] || { cat "$WORK/hub.err" >&2; exit 1; }
	local hostport=${URL#nats://}
	hostport=${hostport%%/*}
	PORT=${hostport##*:}
}
start_hub
echo "hub: $URL (data in $WORK/hub)"
export COORD_BACKEND=$URL

mkdir -p "$WORK/laptop" "$WORK/server"
(cd "$WORK/laptop" && git init -q && "$COORD" init >/dev/null)
for i in $(seq 1 12); do echo "{\"id\":\"t$i\",\"title\":\"task $i\"}"; done >"$WORK/tasks.jsonl"
(cd "$WORK/laptop" && "$COORD" seed-tasks "$WORK/tasks.jsonl")

work() { # agent dir n: claim and release n tasks from dir
	local agent=$1 dir=$2 n=$3
	cd "$WORK/$dir"
	for _ in $(seq "$n"); do
		out=$("$COORD" --agent "$agent" claim)
		id=$(printf '%s' "$out" | sed -n 's/.*"id":"\([^"]*\)".*"epoch":\([0-9]*\).*/\1 \2/p')
		[ -n "$id" ] || return 0
		set -- $id
		echo "$agent ($dir) claimed $1 epoch $2"
		"$COORD" --agent "$agent" release "$1" --epoch "$2" --summary "done by $agent" >/dev/null
	done
}
work alice laptop 3 & A=$!
work bob server 3 & B=$!
wait "$A" "$B"

echo "--- the hub is stopped on purpose (SIGTERM) and started again on its directory"
kill "$HUB"; wait "$HUB" || true
start_hub
work alice laptop 10 & A=$!
work bob server 10 & B=$!
wait "$A" "$B"

echo "--- every task done once (seen from either directory)"
(cd "$WORK/server" && "$COORD" ls)
done=$("$COORD" ls --json | grep -o '"status":"done"' | wc -l)
claims=$("$COORD" log -n 0 | grep -c 'claimed task' || true)
echo "done: $done of 12; claims in the log: $claims"
[ "$done" = 12 ] && [ "$claims" = 12 ] || { echo "demo-hub: FAILED" >&2; exit 1; }
"$COORD" doctor
