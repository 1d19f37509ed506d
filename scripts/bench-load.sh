#!/usr/bin/env bash
# make bench, load run: 50 concurrent MCP sessions issuing a mix of view, search and
# get_content for 60 s against guide-mcp --http (all-in-one over testdata/content), with
# throughput, p50/p99 and the server's memory over time. The report goes to stdout and to
# .bench/load.txt. MIX picks another mix of tools; the session churn of the reliability
# targets is MIX=list=31,focus=16,get_summary=16,view=16,search=15,attach=3,detach=3
# (6% attach/detach); every run ends its sessions and reports the session documents left.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-50}
DURATION=${DURATION:-60s}
MIX=${MIX:-view=5,search=3,get_content=2}
mkdir -p .bench
data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bin/guide-mcp --root testdata/content --data "$data" --http "127.0.0.1:$port" --log-level warn &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 1 300); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
{
  echo "guide-load: $SESSIONS sessions, $DURATION, mix $MIX over testdata/content; $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  bin/guide-load --url "http://127.0.0.1:$port/mcp" --sessions "$SESSIONS" --duration "$DURATION" \
    --mix "$MIX" --names guidelines,dev,lang --words python,style,review,"code review",intro
} | tee .bench/load.txt
