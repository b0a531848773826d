#!/usr/bin/env bash
# End-to-end smoke of `coord mcp` with a second, independent MCP client:
# the MCP Inspector's CLI mode (npm package @modelcontextprotocol/inspector).
# It lists the tools and calls claim twice (the second, by another agent,
# must be a refusal). The Inspector exits 0 even on a tool error, so its
# JSON is checked. Without npx it says "skipped" and exits 0.
#
# Usage: scripts/mcp-smoke.sh [COORD_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
INSPECTOR="@modelcontextprotocol/inspector@${MCP_INSPECTOR_VERSION:-0.15.0}"
if ! command -v npx >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "mcp smoke: skipped (no npx/node on PATH: the MCP Inspector cannot run)"
	exit 0
fi
bin=${1:-bin/coord}
[ -x "$bin" ] || go build -o "$bin" ./cmd/coord
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d "${TMPDIR:-/tmp}/coord-mcp-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin" init >/dev/null
printf '%s\n' '{"id":"4.2","title":"Preamble Editor Modal","priority":"high"}' | "$bin" seed-tasks --stdin >/dev/null
inspect() { npx -y "$INSPECTOR" --cli "$@"; }
# check FILE JS: evaluate JS with j = the Inspector's JSON; it must be true.
check() {
	node -e '
		const fs = require("fs");
		const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
		if (!('"$2"')) { console.error("mcp smoke: check failed: " + process.argv[2] + "\n" + JSON.stringify(j, null, 2)); process.exit(1); }
	' "$1" "$2"
}
inspect -e COORD_AGENT=smoke-a "$bin" mcp --method tools/list >list.json
check list.json '["status","ready","claim","release","progress","block","wait","files","log"].every(n => j.tools.some(t => t.name === n)) && j.tools.length === 9'
inspect -e COORD_AGENT=smoke-a "$bin" mcp --method tools/call --tool-name claim --tool-arg task=4.2 >claim.json
check claim.json '!j.isError && j.structuredContent.id === "4.2" && j.structuredContent.status === "claimed" && j.structuredContent.claimed_by === "smoke-a" && j.structuredContent.epoch >= 1'
inspect -e COORD_AGENT=smoke-b "$bin" mcp --method tools/call --tool-name claim --tool-arg task=4.2 >refused.json
check refused.json 'j.isError === true && j.structuredContent.code === 3 && j.structuredContent.name === "conflict" && j.structuredContent.holder === "smoke-a"'
echo "mcp smoke: ok (MCP Inspector $INSPECTOR: tools/list, claim, a refused claim)"
