# What the git demos (demo-land.sh, demo-many.sh) share; sourced, with
# DEMO (the name in messages) set. It gives: COORD (the binary, built by
# make), DIR (a temporary directory, removed at exit unless KEEP is
# set), pids (background processes killed at exit), c (coord), g (git
# without the user's hooks), say, fail, until_ok, and an environment
# free of the caller's coord settings and git identity.
COORD=${COORD:-"$(cd "$(dirname "$0")/.." && pwd)/bin/coord"}
[ -x "$COORD" ] || { echo "$DEMO: $COORD not built; run 'make $DEMO'" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/coord-$DEMO.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$DIR" "$DIR"-*
}
trap cleanup EXIT
c() { "$COORD" "$@"; }
if [ -t 1 ]; then
	say() { printf '\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '== %s\n' "$*"; }
fi
fail() { echo "$DEMO: $*" >&2; exit 1; }
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-demo} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-demo@example.com}
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-demo} GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-demo@example.com}
unset COORD_AGENT COORD_TASK COORD_ROOT COORD_BACKEND
g() { git -c core.hooksPath=/dev/null "$@"; }
# until CMD…: wait (at most a minute) until CMD succeeds
until_ok() { for _ in $(seq 600); do "$@" && return 0; sleep 0.1; done; return 1; }
