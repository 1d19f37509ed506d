#!/usr/bin/env bash
# make bench, load runs: 50 concurrent MCP sessions calling a mix of tools for 60 s against
# guide-mcp --http (all-in-one over testdata/content), with throughput, p50/p99 and the
# server's memory over time. AREA=load (the default) is view, search and get_content;
# AREA=sessions is the mix with session churn of the reliability target, 6% attach and
# detach (list=31,focus=16,get_summary=16,view=16,search=15,attach=3,detach=3); every run
# ends its sessions and reports the session documents left. The report goes to stdout and to
# .bench/AREA.txt; the run becomes the area's record in BENCHMARKS.json and BENCHMARKS.md is
# rendered again, unless RECORD=0 (make bench-quick). MIX and SESSIONS change the workload.
set -euo pipefail
cd "$(dirname "$0")/.."
AREA=${AREA:-load}
SESSIONS=${SESSIONS:-50}
DURATION=${DURATION:-60s}
RECORD=${RECORD:-1}
case "$AREA" in
  load) default_mix=view=5,search=3,get_content=2 ;;
  sessions) default_mix=list=31,focus=16,get_summary=16,view=16,search=15,attach=3,detach=3 ;;
  *) echo "bench-load: AREA is load or sessions, not $AREA" >&2; exit 2 ;;
esac
MIX=${MIX:-$default_mix}
# The command the record states: this script, with what differs from its defaults.
command=scripts/bench-load.sh
[ "$DURATION" != 60s ] && command="DURATION=$DURATION $command"
[ "$SESSIONS" != 50 ] && command="SESSIONS=$SESSIONS $command"
[ "$MIX" != "$default_mix" ] && command="MIX=$MIX $command"
[ "$AREA" != load ] && command="AREA=$AREA $command"
record=()
[ "$RECORD" = 1 ] && record=(--record "$AREA" --command "$command" --corpus "guide-mcp --root testdata/content --http on loopback")
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
    --mix "$MIX" --names guidelines,dev,lang --words python,style,review,"code review",intro ${record[@]+"${record[@]}"}
} | tee ".bench/$AREA.txt"
