#!/bin/sh
# screenshot_report.sh REPORT.html SHOT.png [WIDTH HEIGHT] - a PNG of a dcsim
# report (dcsim report / analysis/dcsim_report.py) as headless Chromium
# renders it (Debian: apt install chromium). The page is drawn in a window
# WIDTH x HEIGHT pixels (default 1200 x 8000, tall enough for a report of one
# trace); what falls below HEIGHT is cut off. A SHOT ending in .pdf is the
# whole report printed to PDF instead (A4 pages, the report's print style
# sheet; WIDTH and HEIGHT are not used). Exit status: Chromium's, or 2 for
# bad arguments, 3 when Chromium is not installed.
#
# The command it runs:
#   chromium --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --hide-scrollbars \
#            --window-size=1200,8000 --screenshot=SHOT.png file:///ABS/REPORT.html
set -eu
if [ $# -ne 2 ] && [ $# -ne 4 ]; then
    echo "usage: screenshot_report.sh REPORT.html SHOT.png [WIDTH HEIGHT]" >&2
    exit 2
fi
report=$1
shot=$2
width=${3:-1200}
height=${4:-8000}
[ -f "$report" ] || { echo "screenshot_report.sh: error: $report: no such file" >&2; exit 2; }
browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
    for b in chromium chromium-browser google-chrome; do
        if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
    done
fi
[ -n "$browser" ] || { echo "screenshot_report.sh: error: no chromium (Debian: apt install chromium)" >&2; exit 3; }
abs=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
case "$shot" in /*) out=$shot ;; *) out=$(pwd)/$shot ;; esac
# --no-sandbox: Chromium refuses to run as root (CI containers) with its sandbox;
# the page is a local file dcsim wrote. --disable-dev-shm-usage: containers
# often give /dev/shm only 64 MB. A private profile keeps runs apart.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
case "$out" in
*.pdf)
    "$browser" --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --no-first-run \
        --user-data-dir="$profile" --no-pdf-header-footer --print-to-pdf="$out" \
        "file://$abs" >/dev/null 2>&1 ;;
*)
    "$browser" --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --hide-scrollbars \
        --no-first-run \
        --user-data-dir="$profile" --window-size="$width,$height" --screenshot="$out" \
        "file://$abs" >/dev/null 2>&1 ;;
esac
[ -s "$out" ] || { echo "screenshot_report.sh: error: chromium wrote no $out" >&2; exit 1; }
