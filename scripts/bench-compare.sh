#!/bin/sh
# bench-compare.sh REV... — build coord at each git revision REV (from
# `git archive`, so the work tree is untouched) and measure them side by
# side with the current work tree's bin/coord, interleaved run by run
# (coordbench -compare). The first binary is the base of every ratio.
#
#   scripts/bench-compare.sh 5aa3d5f dc4b142     # before the seam, the seam, now
#   scripts/bench-compare.sh 5aa3d5f 5aa3d5f     # the same twice as well: the noise floor
#
# COORDBENCH_FLAGS are passed on (e.g. -quick). Needs bin/coord and
# bin/coordbench (make bench-compare builds both).
set -eu
[ $# -ge 1 ] || { echo "usage: $0 REV... (e.g. 5aa3d5f)" >&2; exit 2; }
[ -x bin/coord ] && [ -x bin/coordbench ] || { echo "$0: run 'make build' and build bin/coordbench first (make bench-compare does)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/coord-bench-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
bins=""
for rev in "$@"; do
	short=$(git rev-parse --short "$rev^{commit}")
	if [ ! -x "$work/coord-$short" ]; then # a revision named twice is built once: an A/A column
		mkdir -p "$work/src-$short"
		git archive "$short" | tar -x -C "$work/src-$short"
		(cd "$work/src-$short" && go build -tags urfave_cli_no_docs -o "$work/coord-$short" ./cmd/coord)
		echo "built $short: $(git log -1 --format='%s' "$short" | cut -c1-70)"
	fi
	bins="$bins${bins:+,}$work/coord-$short"
done
now=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then now="$now+dirty"; fi
echo "now: bin/coord ($now)"
echo "machine: $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
# shellcheck disable=SC2086
bin/coordbench ${COORDBENCH_FLAGS:-} -compare "$bins" -bin bin/coord -name "$now"
echo "after: $(uptime | sed 's/.*load average/load average/')"
