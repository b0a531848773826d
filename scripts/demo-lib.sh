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

# standin_agent FILE TARGET writes the demos' stand-in agent to FILE, a
# script for `coord run -- sh FILE`: it works on the branch run checked
# out and names the task in its commit; tasks 1 and 2 change the same
# line. Sent back (COORD_REVIEW_NOTES), it merges TARGET (main, or
# origin/main after a fetch) and keeps both greetings.
standin_agent() {
	local fetch=:
	case $2 in origin/*) fetch='git fetch -q origin' ;; esac
	cat >"$1" <<EOF
set -e
t=\$COORD_TASK
if [ -n "\$COORD_REVIEW_NOTES" ]; then
	echo "  \$COORD_AGENT: task \$t came back: \$COORD_REVIEW_NOTES" >&2
	$fetch
	git merge -q -m "task \$t: merge $2" $2 >/dev/null 2>&1 || {
		printf 'greeting = "good day, hi there"\\nfarewell = "bye"\\n' >config.txt
		git add config.txt
		git commit -q -m "task \$t: merge $2, keep both greetings"
	}
	exit 0
fi
case \$t in
1) printf 'greeting = "hi there"\\nfarewell = "bye"\\n' >config.txt ;;
2) printf 'greeting = "good day"\\nfarewell = "bye"\\n' >config.txt ;;
3) echo "The app." >README.md ;;
4) echo "- first release" >CHANGELOG.md ;;
esac
git add -A
git commit -q -m "task \$t: the work"
EOF
}
