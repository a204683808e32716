#!/bin/sh
# sim_report_browser -- render `sluice sim --report` of every shipped example in headless Chromium
# (Debian's `chromium`) and check that the page a person opens really shows its story: the DOM
# after parsing holds every chart's <svg> with its data marks (per ClusterQueue, per LocalQueue,
# the timeline's bars and arrows, the preemption table), a screenshot is produced at a desktop and
# at a narrow window width, and the page prints (print stylesheet) to a PDF.
# Usage: sim_report_browser.sh SLUICE_BINARY SOURCE_DIR [OUT_DIR]
#   OUT_DIR (optional) keeps the pages, screenshots and PDFs to look at.
set -eu
sluice=$1
src=$2
keep=${3:-}
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
    echo "sim_report_browser: chromium is not installed (SLUICE_DEPS=browser ./.ci/install-deps)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# No network, no first-run work, a throwaway profile: the page must render from the file alone.
browse() { # browse PAGE WIDTH CHROMIUM-ARGS...
    page=$1
    width=$2
    shift 2
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$work/profile" --window-size="$width,3000" "$@" \
        "file://$page" 2>"$work/chromium.log"
}

fail=0
expect() { # expect COUNT-AT-LEAST PATTERN WHAT
    n=$(grep -o "$2" "$dom" | wc -l)
    if [ "$n" -lt "$1" ]; then
        echo "FAIL: $name: $3: found $n, want at least $1 (pattern $2)" >&2
        fail=1
    else
        echo "ok: $name: $3 ($n)"
    fi
}
bigger() { # bigger FILE BYTES WHAT
    size=$(wc -c <"$1")
    if [ "$size" -lt "$2" ]; then
        echo "FAIL: $name: $3 is only $size bytes" >&2
        fail=1
    else
        echo "ok: $name: $3 ($size bytes)"
    fi
}

for example in "$src"/examples/0*.yaml; do
    name=$(basename "$example" .yaml)
    page="$work/$name.html"
    dom="$work/$name.dom.html"
    "$sluice" sim --quiet --report "$page" "$example"
    browse "$page" 1200 --dump-dom >"$dom" || { cat "$work/chromium.log" >&2; exit 1; }
    browse "$page" 1200 --screenshot="$work/$name.png" >/dev/null ||
        { cat "$work/chromium.log" >&2; exit 1; }
    browse "$page" 700 --screenshot="$work/$name-narrow.png" >/dev/null ||
        { cat "$work/chromium.log" >&2; exit 1; }

    # Every page: key figures, the cohort tree, usage per ClusterQueue, waits per ClusterQueue
    # and LocalQueue, the timeline, the explanations and the text summary.
    expect 1 '<div id="key-figures">' "key figures"
    expect 1 '<ul id="cohort-tree" class="tree">' "cohort tree"
    expect 1 '<li class="cq">' "ClusterQueues in the tree"
    expect 1 '<svg id="chart-usage-[0-9]*" class="chart chart-usage"' "usage chart per ClusterQueue"
    expect 1 'path class="band flavor"' "usage stacked per flavor"
    expect 1 '<path class="series nominal"' "nominal-quota lines"
    expect 1 '<svg id="chart-pending" class="chart chart-lines"' "pending-workloads chart"
    expect 1 '<svg id="chart-waits-cq" class="chart chart-boxes"' "waits per ClusterQueue"
    expect 1 '<svg id="chart-waits-lq" class="chart chart-boxes"' "waits per LocalQueue"
    expect 1 '<svg id="chart-timeline" class="chart chart-gantt"' "timeline"
    expect 3 '<rect class="span"' "admissions in the timeline"
    expect 1 '<pre id="summary">' "text summary"
    case $name in
    01-gpu-platform)
        expect 3 'data-resource="nvidia.com/gpu"' "a GPU chart per ClusterQueue"
        expect 3 '<g class="cq">' "one band per ClusterQueue in the cluster chart"
        expect 1 'class="band borrowed"' "borrowing shown"
        expect 1 '<svg id="chart-preemptions" class="chart chart-buckets"' "preemptions per bucket"
        expect 1 '<path class="arrow"' "preemption arrows"
        expect 1 '<tr class="preemption">' "who preempted whom"
        expect 1 'class="cap deactivated"' "the deactivated notebook"
        expect 2 '<details class="fold"><summary>' "CPU and memory folded"
        ;;
    02-quota-change)
        expect 1 '<b>16</b> → <b>8</b> at 3h' "the quota cut in the tree"
        expect 1 'class="band borrowed"' "usage above the new quota"
        ;;
    03-fair-sharing)
        expect 4 '<g class="cq">' "one band per team in the cluster chart"
        expect 1 'weight 4</span>' "weights in the tree"
        expect 4 'data-cq="[a-z]*" data-resource="nvidia.com/gpu"' "a GPU chart per team"
        expect 5 '<path class="arrow"' "preemption arrows"
        expect 5 '<tr class="preemption">' "who preempted whom"
        expect 1 'InCohortFairSharing' "the fair-sharing reason"
        ;;
    04-jobset-pytorch)
        expect 1 '<svg id="chart-lq-0" class="chart chart-lq"' "usage per LocalQueue"
        expect 2 '<g class="lq">' "one band per team's LocalQueue"
        expect 1 '<path class="arrow"' "the preemption arrow"
        expect 1 'pod set trials: insufficient quota' "the explanation naming the pod set"
        ;;
    esac
    # The browser must not have replaced the page with an error page.
    if grep -q 'ERR_FILE_NOT_FOUND\|This page has crashed' "$dom"; then
        echo "FAIL: $name: chromium showed an error page" >&2
        fail=1
    fi
    bigger "$work/$name.png" 20000 "screenshot"
    bigger "$work/$name-narrow.png" 20000 "narrow screenshot"
done

# The print stylesheet: the page prints to a PDF.
name=03-fair-sharing
browse "$work/$name.html" 1200 --no-pdf-header-footer --print-to-pdf="$work/$name.pdf" >/dev/null ||
    { cat "$work/chromium.log" >&2; exit 1; }
bigger "$work/$name.pdf" 20000 "printed PDF"
if [ "$(head -c 4 "$work/$name.pdf")" != "%PDF" ]; then
    echo "FAIL: $name: the print is not a PDF" >&2
    fail=1
fi
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    cp "$work"/*.html "$work"/*.png "$work"/*.pdf "$keep"/
fi
exit $fail
