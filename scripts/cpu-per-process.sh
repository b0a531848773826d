#!/usr/bin/env bash
# CPU per fresh coord process, files beside NATS: the process's task-clock
# (perf stat) and the hub's CPU (its /proc counters), the five kinds
# interleaved round by round. Usage: scripts/cpu-per-process.sh [BIN] [ROUNDS]
# Needs perf. Lays down a tree and a hub namespace of 1,000 tasks with 16
# agents holding 3 each (as in the drains), in a temporary directory.
set -euo pipefail
B=$(realpath "${1:-bin/coord}"); N=${2:-80}
dir=$(mktemp -d); trap 'kill $hub 2>/dev/null; rm -rf "$dir"' EXIT
for i in $(seq 0 999); do
  printf '{"id":"b%d","title":"bench task %d","priority":"%s"}\n' "$i" "$i" "$(echo urgent high medium low | cut -d' ' -f$((i % 4 + 1)))"
done >"$dir/seed.jsonl"
mkdir "$dir/tree"; cd "$dir/tree"; git init -q .
"$B" init >/dev/null; "$B" seed-tasks "$dir/seed.jsonl" >/dev/null
"$B" hub --dir "$dir/hub" --listen 127.0.0.1:0 >"$dir/hub.out" 2>/dev/null & hub=$!
until grep -q COORD_BACKEND= "$dir/hub.out" 2>/dev/null; do sleep 0.1; done
U=$(sed -n 's/^COORD_BACKEND=//p' "$dir/hub.out")/cpu
"$B" --backend "$U" init >/dev/null; "$B" --backend "$U" seed-tasks "$dir/seed.jsonl" >/dev/null
for a in $(seq 0 15); do for _ in 1 2 3; do
  "$B" --agent "d$a" claim >/dev/null; "$B" --backend "$U" --agent "d$a" claim >/dev/null
done; done
hubcpu() { awk '{print $14+$15}' "/proc/$hub/stat"; }
declare -A C H
kinds=("start|--version" "beat, files|--agent d3 beat" "beat, NATS|--backend $U --agent d3 beat"
  "claim, files|--agent dX claim" "claim, NATS|--backend $U --agent dX claim")
for i in $(seq "$N"); do
  for k in "${kinds[@]}"; do
    name=${k%%|*}; args=${k#*|}; args=${args//dX/d$((i % 16))}
    h0=$(hubcpu)
    # shellcheck disable=SC2086
    t=$(perf stat -x, -e task-clock "$B" $args 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
    h1=$(hubcpu)
    C[$name]=$(echo "${C[$name]:-0} + $t" | bc -l); H[$name]=$((${H[$name]:-0} + h1 - h0))
  done
done
echo "| process | coord process | hub (idle ticks included) |"
echo "|---|---|---|"
for k in "${kinds[@]}"; do
  name=${k%%|*}
  printf '| %s | %.1f ms | %.2f ms |\n' "$name" "$(echo "${C[$name]}/$N" | bc -l)" "$(echo "${H[$name]}*1000/$(getconf CLK_TCK)/$N" | bc -l)"
done
