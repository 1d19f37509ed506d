#!/usr/bin/env bash
# The web page of guide-mcp --http in a real browser: Debian's chromium, driven by
# playwright-core (which never downloads a browser of its own), against the built
# bin/guide-mcp. Screenshots at desktop and phone widths land in screenshots/.
set -euo pipefail
cd "$(dirname "$0")"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
CHROMIUM="${CHROMIUM:-$(command -v chromium || true)}"
if [ -z "$CHROMIUM" ]; then
  echo "browser tests need Debian's chromium: apt-get install -y chromium" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
GUIDE_BIN="$(cd ../.. && pwd)/bin" CHROMIUM="$CHROMIUM" node --test --test-concurrency=1 --test-reporter=spec web.test.mjs
