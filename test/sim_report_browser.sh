#!/bin/sh
# sim_report_browser -- render `sluice sim --report` in headless Chromium (Debian's `chromium`)
# and check that the page a person opens really shows its charts: the DOM after parsing holds
# every chart's <svg> with its data marks, and a screenshot is produced.
# Usage: sim_report_browser.sh SLUICE_BINARY SOURCE_DIR
set -eu
sluice=$1
src=$2
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
    echo "sim_report_browser: chromium is not installed (SLUICE_DEPS=browser ./.ci/install-deps)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

"$sluice" sim --quiet --report "$work/report.html" "$src/examples/01-gpu-platform.yaml"

# No network, no first-run work, a throwaway profile: the page must render from the file alone.
browse() {
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/profile" --window-size=1200,2400 "$@" \
        "file://$work/report.html" 2>"$work/chromium.log"
}
browse --dump-dom >"$work/dom.html" || { cat "$work/chromium.log" >&2; exit 1; }
browse --screenshot="$work/report.png" >/dev/null || { cat "$work/chromium.log" >&2; exit 1; }

fail=0
expect() { # expect COUNT-AT-LEAST PATTERN WHAT
    n=$(grep -o "$2" "$work/dom.html" | wc -l)
    if [ "$n" -lt "$1" ]; then
        echo "FAIL: $3: found $n, want at least $1 (pattern $2)" >&2
        fail=1
    else
        echo "ok: $3 ($n)"
    fi
}
expect 1 '<svg id="chart-pending" class="chart chart-lines"' "pending-workloads chart"
expect 3 '<path class="series pending"' "one pending line per ClusterQueue"
expect 6 '<svg id="chart-usage-[0-9]*" class="chart chart-usage"' "usage charts (flavor x resource)"
expect 6 '<path class="series nominal"' "nominal-quota lines"
expect 1 '<svg id="chart-waits" class="chart chart-boxes"' "wait-time chart"
expect 3 '<g class="box">' "one box per priority class"
expect 1 '<svg id="chart-preemptions" class="chart chart-timeline"' "preemption timeline"
expect 5 '<circle class="preemption"' "one dot per preemption"
expect 1 '<pre id="summary">' "text summary"
# The browser must not have replaced the page with an error page.
if grep -q 'ERR_FILE_NOT_FOUND\|This page has crashed' "$work/dom.html"; then
    echo "FAIL: chromium showed an error page" >&2
    fail=1
fi
size=$(wc -c <"$work/report.png")
if [ "$size" -lt 20000 ]; then
    echo "FAIL: screenshot is only $size bytes" >&2
    fail=1
else
    echo "ok: screenshot ($size bytes)"
fi
exit $fail
