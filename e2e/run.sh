#!/usr/bin/env bash
# End-to-end suites against the built binaries (bin/ at the repository root):
#   1. the official MCP TypeScript SDK client drives every tool and resource, over stdio
#      and over Streamable HTTP (sdk-client.test.mjs, node --test);
#   2. the official conformance suite runs its server scenarios against guide-mcp --http,
#      with the scenarios that cannot apply listed in conformance-expected-failures.yml.
# Node 22 (the npm package node@22, installed by npm ci) runs both: the conformance suite
# needs it.
set -euo pipefail
cd "$(dirname "$0")"
BIN="$(cd .. && pwd)/bin"
npm ci --no-audit --no-fund --loglevel=error
NODE="$PWD/node_modules/node/bin/node"
"$NODE" --version

GUIDE_BIN="$BIN" "$NODE" --test --test-reporter=spec sdk-client.test.mjs

work="$(mktemp -d)"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(( 20000 + RANDOM % 20000 ))
"$BIN/guide-mcp" --root ../testdata/sample --data "$work/data" --http "127.0.0.1:$port" --log-level warn &
pid=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
"$NODE" node_modules/@modelcontextprotocol/conformance/dist/index.js server \
  --url "http://127.0.0.1:$port/mcp" --expected-failures conformance-expected-failures.yml \
  -o "$work/results"
