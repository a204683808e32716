#!/bin/sh
# dockerfile-sync.sh -- check that the Dockerfile and .ci/build-image describe the same image.
# SPDX-License-Identifier: Apache-2.0
#
# Usage: dockerfile-sync.sh [DOCKERFILE BUILD-IMAGE]
# Reads both files (Docker cannot run here) and compares the facts that make the two images the
# same: the build stage's base (this machine's Debian release) and build (Release, --strip),
# the root filesystem made by .ci/image-rootfs, a final stage FROM scratch holding only that,
# and the configuration: user, entrypoint, cmd, working directory, and the labels with their
# values (version = CMakeLists.txt's project VERSION).
# Without arguments it checks the repository's two files, then checks that it does notice a
# drift: each of a few altered copies of the Dockerfile must fail.
# shellcheck shell=sh
set -eu

src=${SLUICE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
say() { echo "[dockerfile-sync] $*"; }
fail() { echo "[dockerfile-sync] FAIL: $*" >&2; exit 1; }

# check DOCKERFILE BUILD-IMAGE: prints the first difference and returns 1, or returns 0.
check() (
    df=$1
    bi=$2
    bad() { echo "$*"; exit 1; }
    version=$(sed -n 's/^project(sluice VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
    var() { sed -n "s/^$1=//p" "$bi" | head -n 1; }
    user=$(var IMAGE_USER)
    entrypoint=$(var IMAGE_ENTRYPOINT)
    cmd=$(var IMAGE_CMD)
    workdir=$(var IMAGE_WORKDIR)
    [ -n "$user" ] && [ -n "$entrypoint" ] && [ -n "$cmd" ] && [ -n "$workdir" ] ||
        bad "$bi: IMAGE_USER, IMAGE_ENTRYPOINT, IMAGE_CMD or IMAGE_WORKDIR not found"

    # The Dockerfile with continuation lines joined and comments dropped.
    flat=$(sed -e '/^[[:space:]]*#/d' "$df" | awk '/\\$/ { sub(/\\$/, ""); printf "%s", $0; next } { print }')
    final=$(echo "$flat" | awk '/^FROM / { n++ } n >= 2')
    build=$(echo "$flat" | awk '/^FROM / { n++ } n == 1')
    [ "$(echo "$flat" | grep -c '^FROM ')" = 2 ] || bad "the Dockerfile has not two stages"

    # Build stage: this machine's Debian release, install-deps, the same build, image-rootfs.
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    base=$(echo "$build" | sed -n 's/^FROM \([^ ]*\).*/\1/p')
    [ -z "$codename" ] || [ "$base" = "debian:$codename" ] ||
        bad "build stage FROM $base, but .ci/build-image uses this machine's debian:$codename packages"
    echo "$build" | grep -q '^RUN .*\./\.ci/install-deps' || bad "the build stage does not run .ci/install-deps"
    for flag in -DCMAKE_BUILD_TYPE=Release -DSLUICE_INTEGRATION=OFF -DSLUICE_SANITIZE=OFF \
        -DSLUICE_FUZZ=OFF -ffile-prefix-map= '--target sluice' '--strip'; do
        echo "$build" | grep -q -- "$flag" || bad "the Dockerfile's build lacks '$flag'"
        grep -q -- "$flag" "$bi" || bad "$bi lacks '$flag'"
    done
    grep -q '"$top/.ci/image-rootfs" "$binary" "$work/rootfs"' "$bi" || bad "$bi does not run .ci/image-rootfs"
    rootfs=$(echo "$build" | sed -n 's|^RUN \./\.ci/image-rootfs [^ ]* \([^ ]*\)$|\1|p')
    [ -n "$rootfs" ] || bad "the build stage does not run ./.ci/image-rootfs BINARY DIR"
    stage_bin=$(echo "$build" | sed -n 's|^RUN \./\.ci/image-rootfs \([^ ]*\) .*|\1|p')
    prefix=$(echo "$build" | sed -n 's|.*cmake --install [^ ]* --prefix \([^ ]*\) --strip.*|\1|p')
    [ "$stage_bin" = "$prefix/bin/sluice" ] ||
        bad "image-rootfs packages $stage_bin, but cmake --install puts sluice at $prefix/bin/sluice"

    # Final stage: scratch plus the root filesystem, nothing else.
    [ "$(echo "$final" | sed -n 's/^FROM //p')" = scratch ] || bad "the final stage is not FROM scratch"
    [ "$(echo "$final" | grep -c '^\(COPY\|ADD\|RUN\) ')" = 1 ] ||
        bad "the final stage must only COPY the root filesystem"
    echo "$final" | grep -qx "COPY --from=build ${rootfs%/}/ /" || bad "the final stage does not COPY --from=build $rootfs/ /"

    got=$(echo "$final" | sed -n 's/^USER //p')
    [ "$got" = "$user" ] || bad "USER $got, .ci/build-image $user"
    got=$(echo "$final" | sed -n 's/^WORKDIR //p' | tail -n 1)
    [ "$got" = "$workdir" ] || bad "WORKDIR $got, .ci/build-image $workdir"
    got=$(echo "$final" | sed -n 's/^ENTRYPOINT //p')
    [ "$got" = "[\"$entrypoint\"]" ] || bad "ENTRYPOINT $got, .ci/build-image [\"$entrypoint\"]"
    got=$(echo "$final" | sed -n 's/^CMD //p')
    [ "$got" = "[\"$cmd\"]" ] || bad "CMD $got, .ci/build-image [\"$cmd\"]"

    # Labels: the same keys, and the same values once .ci/build-image's variables are expanded.
    echo "$final" | sed -n 's/^LABEL //p' | grep -o '[a-z.]*="[^"]*"' | sed 's/="/=/; s/"$//' |
        LC_ALL=C sort >"$tmpd/docker-labels"
    IMAGE_TITLE=$(var IMAGE_TITLE) IMAGE_LICENSES=$(var IMAGE_LICENSES) \
        version=$version awk '
        /--config.label "/ {
            s = $0; sub(/.*--config.label "/, "", s); sub(/".*/, "", s)
            while (match(s, /\$[A-Za-z_]+/)) {
                name = substr(s, RSTART + 1, RLENGTH - 1)
                s = substr(s, 1, RSTART - 1) ENVIRON[name] substr(s, RSTART + RLENGTH)
            }
            print s
        }' "$bi" | LC_ALL=C sort >"$tmpd/umoci-labels"
    [ -s "$tmpd/umoci-labels" ] || bad "$bi sets no --config.label"
    diff "$tmpd/docker-labels" "$tmpd/umoci-labels" >"$tmpd/label-diff" ||
        bad "labels differ (< Dockerfile, > .ci/build-image): $(grep '^[<>]' "$tmpd/label-diff" | tr '\n' ' ')"
    grep -qx "org.opencontainers.image.version=$version" "$tmpd/docker-labels" ||
        bad "the Dockerfile's version label is not the project VERSION $version"
)

tmpd=$(mktemp -d "${TMPDIR:-/tmp}/sluice-dockerfile-sync.XXXXXX")
trap 'rm -rf "$tmpd"' EXIT

if [ $# -eq 2 ]; then
    out=$(check "$1" "$2") || fail "$out"
    say "$1 and $2 agree"
    exit 0
fi
[ $# -eq 0 ] || { echo "usage: $0 [DOCKERFILE BUILD-IMAGE]" >&2; exit 2; }

out=$(check "$src/Dockerfile" "$src/.ci/build-image") || fail "$out"
say "Dockerfile and .ci/build-image agree: $(grep -c '' "$tmpd/docker-labels") labels, user," \
    "entrypoint, cmd, workdir, image-rootfs, Release build, final stage FROM scratch"

# The check must notice each of these drifts.
n=0
while IFS='|' read -r what from to; do
    sed "s|$from|$to|" "$src/Dockerfile" >"$tmpd/Dockerfile.drift"
    cmp -s "$src/Dockerfile" "$tmpd/Dockerfile.drift" && fail "self-test '$what': the edit changed nothing"
    if out=$(check "$tmpd/Dockerfile.drift" "$src/.ci/build-image"); then
        fail "self-test: a Dockerfile with $what passed"
    fi
    n=$((n + 1))
done <<'EOF'
another user|^USER .*|USER 0:0
another entrypoint|^ENTRYPOINT .*|ENTRYPOINT ["/bin/sluice"]
another cmd|^CMD .*|CMD ["sim"]
another version label|image.version="[^"]*"|image.version="9.9.9"
another licence label|image.licenses="[^"]*"|image.licenses="MIT"
no image-rootfs|^RUN ./.ci/image-rootfs|RUN ./.ci/other-rootfs
a Debug build|-DCMAKE_BUILD_TYPE=Release|-DCMAKE_BUILD_TYPE=Debug
a shell in the final stage|^FROM scratch|FROM debian:bookworm
EOF
say "the check catches all $n kinds of drift it was shown"
