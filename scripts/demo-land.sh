#!/usr/bin/env bash
# A live demo of coord land (contract §10): three agents work in their
# own worktrees of one repository; alice and bob change the same line.
# The lander lands alice's and carol's work on main behind a check and
# sends bob's back naming the file; bob merges main, resolves, releases
# again, and the next landing takes it. Ends with main's history; exits
# non-zero if any step did not go as said.
set -euo pipefail

COORD=${COORD:-"$(cd "$(dirname "$0")/.." && pwd)/bin/coord"}
[ -x "$COORD" ] || { echo "demo-land: $COORD not built; run 'make demo-land'" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/coord-demo-land.XXXXXX")
cleanup() { [ -n "${KEEP:-}" ] || rm -rf "$DIR"; }
trap cleanup EXIT
c() { "$COORD" "$@"; }
if [ -t 1 ]; then
	say() { printf '\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '== %s\n' "$*"; }
fi
fail() { echo "demo-land: $*" >&2; exit 1; }
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-demo} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-demo@example.com}
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-demo} GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-demo@example.com}
g() { git -c core.hooksPath=/dev/null "$@"; }

say "repository: $DIR/app (main), a coord project in it"
g init -q -b main "$DIR/app"
cd "$DIR/app"
printf 'greeting = "hello"\nfarewell = "bye"\n' >config.txt
g add . && g commit -q -m "first commit"
c init >/dev/null
printf '{"id":"1","title":"Friendlier greeting"}\n{"id":"2","title":"Formal greeting"}\n{"id":"3","title":"Add a README"}\n' | c seed-tasks --stdin
c config set land_check 'test -s config.txt && grep -q farewell config.txt'

say "a worktree per agent (coord worktree add)"
for a in alice bob carol; do c worktree add "$a"; done

work() { # work AGENT TASK FILE CONTENT MESSAGE
	(cd "$DIR/app-$1" && c --agent "$1" claim --task "$2" >/dev/null &&
		printf '%b' "$4" >"$3" && g add "$3" && g commit -q -m "$5" &&
		c --agent "$1" release "$2" --summary "$5")
}
say "alice and bob change the same line of config.txt; carol writes a README"
work alice 1 config.txt 'greeting = "hi there"\nfarewell = "bye"\n' "friendlier greeting"
work bob 2 config.txt 'greeting = "good day"\nfarewell = "bye"\n' "formal greeting"
work carol 3 README.md 'The app.\n' "add a README"

say "the landing queue (coord top)"
c top --once | sed -n '/^LANDING$/,/^$/p'

say "coord land: merge each, run the check on the merge, move main by compare-and-swap"
set +e
c --agent lander land
code=$?
set -e
[ $code = 3 ] || fail "land exited $code, want 3 (bob's task sent back)"
g log --format=%s main | grep -q "friendlier greeting" || fail "alice's work is not on main"
g show main:README.md >/dev/null || fail "carol's work is not on main"

say "bob's task is his again, with why (coord status)"
(cd "$DIR/app-bob" && c --agent bob status | grep -i 'landing on main conflicts in config.txt') || fail "bob was not told"

say "bob merges main, resolves, releases again; the next landing takes it"
(cd "$DIR/app-bob" && { g merge -q main >/dev/null 2>&1 || true; } &&
	printf 'greeting = "good day, hi there"\nfarewell = "bye"\n' >config.txt &&
	g add config.txt && g commit -q -m "merge main: both greetings" &&
	c --agent bob release 2 --summary "both greetings")
c --agent lander land
g show main:config.txt | grep -q "good day, hi there" || fail "bob's resolution is not on main"

say "main: every landing whole, nothing rewritten"
g log --graph --format='%h %s' main
c ls
[ -z "$(git worktree list --porcelain | grep coord-land || true)" ] || fail "a temporary worktree was left"
say "ok"
