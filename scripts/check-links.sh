#!/usr/bin/env bash
# Checks that every relative link in the Markdown documentation resolves: the file or folder
# exists, and a #anchor names a heading of the target page (GitHub's slugs: lower case,
# punctuation dropped, spaces as hyphens, -1, -2 … for repeats; non-ASCII letters are dropped
# too, which is stricter than GitHub). Links in code blocks and code spans are not links.
# Usage: scripts/check-links.sh [FILE.md …]   (default: README.md and docs/*.md)
# Prints each broken link as FILE:LINE: TARGET and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- README.md docs/*.md

# anchors FILE: the heading slugs of FILE, one a line.
anchors() {
  awk '
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence || !/^#+[ \t]/ { next }
    {
      h = $0; sub(/^#+[ \t]+/, "", h); sub(/[ \t]+#*[ \t]*$/, "", h)
      h = tolower(h); gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
      n = seen[h]++; print (n ? h "-" n : h)
    }' "$1"
}

# links FILE: LINE<TAB>TARGET for every inline link or image outside code.
links() {
  awk '
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
      s = $0; gsub(/`[^`]*`/, "", s)
      while (match(s, /\]\([^) \t]+[) \t]/)) {
        t = substr(s, RSTART + 2, RLENGTH - 3); s = substr(s, RSTART + RLENGTH)
        print NR "\t" t
      }
    }' "$1"
}

bad=0
for f in "$@"; do
  dir=$(dirname "$f")
  while IFS=$'\t' read -r line target; do
    case "$target" in
      http://* | https://* | mailto:*) continue ;;
    esac
    path=${target%%#*}
    anchor=
    [[ "$target" == *#* ]] && anchor=${target#*#}
    if [ -z "$path" ]; then
      file=$f
    else
      file=$dir/$path
      if [ ! -e "$file" ]; then
        echo "$f:$line: $target (no such file)"; bad=1; continue
      fi
    fi
    if [ -n "$anchor" ]; then
      if [ -d "$file" ] || ! anchors "$file" | grep -qxF -- "$anchor"; then
        echo "$f:$line: $target (no such heading)"; bad=1
      fi
    fi
  done < <(links "$f")
done
exit $bad
