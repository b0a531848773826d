#!/usr/bin/env bash
# The README's picture of the page: a small web-shop project as a team
# would run it (four agents in worktrees, work landed, one task sent back
# for a conflict, one blocked, one in review), served by
# `coord dashboard` and photographed by headless Chromium.
# Usage: scripts/dashboard-screenshot.sh [OUT.png] (default
# docs/img/dashboard.png); needs chromium on PATH and bin/coord.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/docs/img/dashboard.png}
case $out in /*) ;; *) out=$PWD/$out ;; esac
COORD=${COORD:-$top/bin/coord}
[ -x "$COORD" ] || { echo "screenshot: $COORD not built; run 'make build'" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "screenshot: no chromium on PATH" >&2; exit 1; }
# A fixed, plain directory, so the page's header reads like a project's
# (a temporary name would show in the picture); refused if it exists.
base=${SHOT_DIR:-/tmp/demo}
mkdir "$base" || { echo "screenshot: $base exists; remove it or set SHOT_DIR" >&2; exit 1; }
repo=$base/shop-api
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$base"; }
trap cleanup EXIT
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
unset COORD_AGENT COORD_ROOT COORD_BACKEND ROTD_AGENT_ID
mkdir -p "$repo/src/cart" "$repo/src/checkout" "$repo/src/catalog" "$repo/docs"
cd "$repo"
git init -q -b main
for f in src/cart/cart.go src/checkout/payment.go src/catalog/search.go docs/API.md README.md; do printf 'package x\n// %s\n' "$f" >"$f"; done
git add . && git commit -qm "shop-api: first import"
c() { "$COORD" "$@" >/dev/null; }
c init
cat <<'TASKS' | "$COORD" seed-tasks --stdin >/dev/null
{"id":"SHOP-101","title":"Cart: keep items when a guest signs in","priority":"high","files":["src/cart/*"]}
{"id":"SHOP-102","title":"Checkout: retry a declined card once","priority":"high","files":["src/checkout/*"]}
{"id":"SHOP-103","title":"Search: rank in-stock products first","files":["src/catalog/*"]}
{"id":"SHOP-104","title":"API docs for the cart endpoints","priority":"low","files":["docs/API.md"],"deps":["SHOP-101"]}
{"id":"SHOP-105","title":"Checkout: store the payment provider's receipt id","files":["src/checkout/*"]}
{"id":"SHOP-106","title":"Catalog: paginate the category listing","files":["src/catalog/*"],"deps":["SHOP-103"]}
{"id":"SHOP-107","title":"README: local setup with Docker","priority":"low","files":["README.md"]}
{"id":"SHOP-108","title":"Cart: show the saved-for-later list","files":["src/cart/*"],"deps":["SHOP-101"]}
TASKS
# Each agent takes a task in its own worktree, commits and releases.
work() { # agent task file line
	local wt=$repo-$1
	[ -d "$wt" ] || c worktree add "$1"
	(cd "$wt" && c claim --task "$2" && printf '// %s\n' "$4" >>"$3" && git add -A && git commit -qm "$2: $4" && c release "$2")
}
work claude-code SHOP-101 src/cart/cart.go "guest cart merged at sign-in"
work codex SHOP-103 src/catalog/search.go "in-stock first"
"$COORD" land --check true >/dev/null
work claude-code SHOP-107 README.md "docker compose up"
"$COORD" land --check true >/dev/null
# Two agents on the checkout: the second lands on top of the first and is sent back.
(cd "$repo" && c worktree add gemini && c worktree add jules)
(cd "$repo-gemini" && c claim --task SHOP-102 && printf 'retry once\n' >>src/checkout/payment.go && git commit -qam "SHOP-102: retry a declined card" && c progress SHOP-102 80)
(cd "$repo-codex" && c claim --task SHOP-106 && c progress SHOP-106 40)
(cd "$repo-claude-code" && c claim --task SHOP-104 && c block SHOP-104 --reason "which auth header do the cart endpoints take?")
(cd "$repo-jules" && c claim --task SHOP-108 && c progress SHOP-108 25)
(cd "$repo-gemini" && c beat)
addr=127.0.0.1:$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
"$COORD" dashboard --addr "$addr" --doctor-every 0 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do curl -fsS "http://$addr/api/state.json" >/dev/null 2>&1 && break; sleep 0.1; done
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1200 \
	--timeout=5000 --screenshot="$out" "http://$addr/" >/dev/null 2>&1 || true
echo "screenshot: $out"
