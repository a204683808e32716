#!/bin/sh
# image.sh -- build the sluice image with .ci/build-image, unpack it, check its contents and run it.
# SPDX-License-Identifier: Apache-2.0
#
# Checks: `cmake --install` layout (bin, crds, manifests, docs); the archive reads back with
# skopeo (digests verified); index annotations and image config (user 65532, entrypoint, cmd,
# workdir, labels); the root filesystem holds exactly the libraries `ldd` lists (each resolving
# inside the image, identical to this machine's), no shell, /tmp 1777, the user, the CA bundle
# and a packages.txt naming every file; a second build gives the same image; and the image runs
# `sluice version` and `sluice run --help` as UID 65532 with the first container runtime that
# works here (runc, then crun, else chroot), which the output names.
# Exits 77 (CTest "Skipped") only when a tool cannot be had: umoci/jq/skopeo missing and
# `SLUICE_DEPS=image .ci/install-deps` unable to install them, or no way to enter the image.
# Environment: SLUICE_SOURCE_DIR, SLUICE_BINARY_DIR (set by CTest); SLUICE_IMAGE_WORKDIR (default
# $SLUICE_BINARY_DIR/image, kept between runs so the Release build is incremental);
# SLUICE_IMAGE_RUNTIMES (default "runc crun crun-nocgroup2 chroot", those installed).
# shellcheck shell=sh
# shellcheck disable=SC3043 # local: dash (Debian's sh), bash and busybox sh all have it
set -eu

src=${SLUICE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
work=${SLUICE_IMAGE_WORKDIR:-${SLUICE_BINARY_DIR:-$src/build}/image}
say() { echo "[image] $*"; }
fail() { echo "[image] FAIL: $*" >&2; exit 1; }
skip() { echo "[image] SKIPPED -- $*" >&2; exit 77; }

version=$(sed -n 's/^project(sluice VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project VERSION in $src/CMakeLists.txt"

# --- tools -----------------------------------------------------------------------------------
need="umoci jq skopeo"
missing=""
for t in $need; do command -v "$t" >/dev/null || missing="$missing $t"; done
if [ -n "$missing" ]; then
    say "missing:$missing; running SLUICE_DEPS=image .ci/install-deps"
    if ! SLUICE_DEPS=image "$src/.ci/install-deps" >"${TMPDIR:-/tmp}/sluice-image-deps.$$" 2>&1; then
        reason=$(tail -n 3 "${TMPDIR:-/tmp}/sluice-image-deps.$$" | tr '\n' ' ')
        rm -f "${TMPDIR:-/tmp}/sluice-image-deps.$$"
        skip "IMAGE TOOLS UNAVAILABLE:$missing not installed, and install-deps failed: $reason"
    fi
    rm -f "${TMPDIR:-/tmp}/sluice-image-deps.$$"
    for t in $need; do command -v "$t" >/dev/null || skip "IMAGE TOOLS UNAVAILABLE: $t"; done
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-image.XXXXXX")
containers=""
cleanup() {
    for c in $containers; do
        runc --root "$tmp/runc" delete -f "$c" >/dev/null 2>&1 || true
        crun --root "$tmp/crun" delete -f "$c" >/dev/null 2>&1 || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

# --- build (twice: the second must give the same image) -------------------------------------
# One SOURCE_DATE_EPOCH for both, and the second packages the first's binary: others may commit
# or edit sources meanwhile, and that must not look like a reproducibility failure.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
archive=$work/sluice-$version.oci.tar
start=$(date +%s)
"$src/.ci/build-image" --workdir "$work" --output "$archive" >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log" >&2; fail ".ci/build-image failed"; }
say "built $archive in $(($(date +%s) - start)) s: $(sed -n 's/^build-image:  *sizes: //p' "$tmp/build.log")"
cp "$work/stage/bin/sluice" "$tmp/sluice"
"$src/.ci/build-image" --workdir "$tmp/again" --binary "$tmp/sluice" --output "$tmp/again.oci.tar" \
    >"$tmp/build2.log" 2>&1 || { cat "$tmp/build2.log" >&2; fail ".ci/build-image --binary failed"; }
cmp -s "$archive" "$tmp/again.oci.tar" || fail "two builds of the same binary differ (not reproducible)"
say "packaging the same binary again (other work directory) gave the same archive, byte for byte"

# --- cmake --install (build-image installs into DIR/stage) ------------------------------------
stage=$work/stage
[ -x "$stage/bin/sluice" ] || fail "cmake --install put no executable at bin/sluice"
for d in crds manifests; do
    (cd "$src/$d" && find . -type f | LC_ALL=C sort) >"$tmp/want"
    (cd "$stage/share/sluice/$d" && find . -type f | LC_ALL=C sort) >"$tmp/got" ||
        fail "cmake --install: no share/sluice/$d"
    diff "$tmp/want" "$tmp/got" >/dev/null || fail "cmake --install: share/sluice/$d differs from $d/"
done
[ -f "$stage/share/doc/sluice/README.md" ] && [ -f "$stage/share/doc/sluice/docs/testing.md" ] ||
    fail "cmake --install: README.md and docs/ not under share/doc/sluice"
# The tree this test belongs to installs too (its own build type), wherever it is told.
if [ -n "${SLUICE_BINARY_DIR:-}" ] && [ -x "$SLUICE_BINARY_DIR/sluice" ]; then
    cmake --install "$SLUICE_BINARY_DIR" --prefix "$tmp/x" >"$tmp/install.log" 2>&1 ||
        fail "cmake --install $SLUICE_BINARY_DIR --prefix $tmp/x: $(cat "$tmp/install.log")"
    [ "$("$tmp/x/bin/sluice" version | head -n 1)" = "sluice $version" ] ||
        fail "the installed sluice does not run"
    diff -r "$src/crds" "$tmp/x/share/sluice/crds" >/dev/null || fail "$tmp/x/share/sluice/crds differs from crds/"
    say "cmake --install $SLUICE_BINARY_DIR --prefix DIR: its sluice runs from DIR/bin"
else
    say "no sluice built in '${SLUICE_BINARY_DIR:-}': only the Release tree's install is checked"
fi
say "cmake --install: bin/sluice, share/sluice/crds and manifests, share/doc/sluice"

# --- the archive, as skopeo reads it ------------------------------------------------------------
skopeo inspect "oci-archive:$archive" >"$tmp/inspect.json" 2>"$tmp/skopeo.err" ||
    fail "skopeo inspect oci-archive: $(cat "$tmp/skopeo.err")"
skopeo --insecure-policy copy -q "oci-archive:$archive:$version" "oci:$tmp/copy:$version" \
    2>"$tmp/skopeo.err" || fail "skopeo copy (digest verification): $(cat "$tmp/skopeo.err")"
say "skopeo reads the archive (with and without the tag) and verifies its digests"

mkdir "$tmp/layout"
tar -C "$tmp/layout" -xf "$archive"
index=$tmp/layout/index.json
[ "$(jq '.manifests | length' "$index")" = 1 ] || fail "index.json holds more than one image"
jq -e --arg t "$version" '.manifests[0].annotations["org.opencontainers.image.ref.name"] == $t' \
    "$index" >/dev/null || fail "index: ref.name is not $version"
jq -e --arg n "docker.io/library/sluice:$version" \
    '.manifests[0].annotations["io.containerd.image.name"] == $n' "$index" >/dev/null ||
    fail "index: io.containerd.image.name is not docker.io/library/sluice:$version"
manifest=$tmp/layout/blobs/sha256/$(jq -r '.manifests[0].digest' "$index" | cut -d: -f2)
config=$tmp/layout/blobs/sha256/$(jq -r '.config.digest' "$manifest" | cut -d: -f2)
[ "$(jq '.layers | length' "$manifest")" = 1 ] || fail "the image has more than one layer"
arch=$(dpkg --print-architecture)
jq -e --arg v "$version" --arg a "$arch" '
    .os == "linux" and .architecture == $a and
    .config.User == "65532:65532" and .config.Entrypoint == ["/usr/bin/sluice"] and
    .config.Cmd == ["run"] and .config.WorkingDir == "/" and
    .config.Labels["org.opencontainers.image.title"] == "sluice" and
    .config.Labels["org.opencontainers.image.version"] == $v and
    .config.Labels["org.opencontainers.image.licenses"] == "Apache-2.0" and
    (.config.Labels | length) == 3' "$config" \
    >/dev/null || fail "image config: $(jq -c .config "$config")"
say "config: user 65532:65532, entrypoint [/usr/bin/sluice], cmd [run], workdir /, 3 OCI labels, $arch"

# --- the root filesystem, unpacked by umoci ---------------------------------------------------
unpack_opts=""
[ "$(id -u)" -eq 0 ] || unpack_opts="--rootless"
# shellcheck disable=SC2086
umoci unpack $unpack_opts --image "$tmp/layout:$version" "$tmp/bundle" >/dev/null 2>"$tmp/umoci.err" ||
    fail "umoci unpack: $(cat "$tmp/umoci.err")"
root=$tmp/bundle/rootfs

# resolve PATH: PATH resolved inside $root the way the kernel would after chroot (absolute
# symlinks point into the image, not at this machine); fails when a component is missing.
resolve() {
    local rest out comp link hops
    rest=${1#/}
    out=""
    hops=0
    while [ -n "$rest" ]; do
        comp=${rest%%/*}
        case "$rest" in */*) rest=${rest#*/} ;; *) rest="" ;; esac
        case "$comp" in "" | .) continue ;; ..) out=${out%/*}; continue ;; esac
        if [ -L "$root$out/$comp" ]; then
            hops=$((hops + 1))
            [ "$hops" -le 40 ] || return 1
            link=$(readlink "$root$out/$comp")
            case "$link" in
            /*) out="" rest=${link#/}${rest:+/$rest} ;;
            *) rest=$link${rest:+/$rest} ;;
            esac
        elif [ -e "$root$out/$comp" ]; then
            out=$out/$comp
        else
            return 1
        fi
    done
    echo "${out:-/}"
}

# Every library ldd lists (and the loader) resolves inside the image to this machine's file...
ldd "$root/usr/bin/sluice" >"$tmp/ldd" || fail "ldd of the image's sluice failed"
grep -q 'not found' "$tmp/ldd" && fail "ldd: $(grep 'not found' "$tmp/ldd")"
awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' "$tmp/ldd" >"$tmp/libs"
nlibs=0
: >"$tmp/libfiles"
while read -r lib; do
    inside=$(resolve "$lib") || fail "$lib (listed by ldd) is not in the image"
    [ -f "$root$inside" ] || fail "$lib resolves to $inside in the image, not a file"
    cmp -s "$root$inside" "$(readlink -f "$lib")" || fail "$lib in the image differs from $(readlink -f "$lib")"
    echo "$inside" >>"$tmp/libfiles"
    nlibs=$((nlibs + 1))
done <"$tmp/libs"
# ...and the image holds no other library: every file under /usr/lib is one of them.
(cd "$root" && find usr/lib usr/lib64 -type f 2>/dev/null | sed 's|^|/|' | LC_ALL=C sort) >"$tmp/have"
LC_ALL=C sort -u "$tmp/libfiles" >"$tmp/want"
extra=$(LC_ALL=C comm -23 "$tmp/have" "$tmp/want" | tr '\n' ' ')
[ -z "$extra" ] || fail "files under /usr/lib that ldd does not list: $extra"
say "all $nlibs libraries ldd lists (loader included) resolve inside the image, identical; no other"

# No shell, no tools.
for sh in sh bash dash ash busybox; do
    found=$(find "$root" -name "$sh" 2>/dev/null | head -n 1)
    [ -z "$found" ] || fail "the image contains ${found#"$root"}"
done
[ ! -e "$root/bin" ] && [ ! -L "$root/bin" ] || fail "the image has /bin"
[ "$(find "$root/usr/bin" ! -type d | sed "s|^$root||")" = /usr/bin/sluice ] ||
    fail "/usr/bin holds more than sluice: $(ls "$root/usr/bin")"
[ "$(stat -c %a "$root/tmp")" = 1777 ] || fail "/tmp is $(stat -c %a "$root/tmp"), not 1777"
grep -qx 'sluice:x:65532:65532:sluice:/nonexistent:/sbin/nologin' "$root/etc/passwd" ||
    fail "/etc/passwd has no sluice user 65532"
grep -qx 'sluice:x:65532:' "$root/etc/group" || fail "/etc/group has no sluice group 65532"
ncerts=$(dpkg-query -L ca-certificates | grep -c '^/usr/share/ca-certificates/.*\.crt$')
[ "$(grep -c 'BEGIN CERTIFICATE' "$root/etc/ssl/certs/ca-certificates.crt")" = "$ncerts" ] ||
    fail "ca-certificates.crt does not hold the package's $ncerts certificates"
# packages.txt names every file and symlink, and nothing that is not there.
pkgs=$root/usr/share/doc/sluice/packages.txt
(cd "$root" && find . ! -type d | sed 's|^\.||' | grep -vx /usr/share/doc/sluice/packages.txt |
    LC_ALL=C sort) >"$tmp/files"
grep -v '^#' "$pkgs" | cut -f1 | LC_ALL=C sort >"$tmp/listed"
diff "$tmp/files" "$tmp/listed" >"$tmp/pkgdiff" || fail "packages.txt vs the files: $(cat "$tmp/pkgdiff")"
grep -q "^/usr/lib/x86_64-linux-gnu/libc.so.6	libc6:amd64 " "$pkgs" || [ "$arch" != amd64 ] ||
    fail "packages.txt does not name libc6 as libc.so.6's package"
[ ! -f "$src/LICENSE" ] || cmp -s "$src/LICENSE" "$root/usr/share/doc/sluice/LICENSE" ||
    fail "the image has no copy of LICENSE"
say "no shell, /tmp 1777, user and group 65532, $ncerts CA certificates," \
    "packages.txt names all $(wc -l <"$tmp/files") files; $(du -sk "$root" | cut -f1) KiB unpacked"

# --- run it ---------------------------------------------------------------------------------
[ "$(jq '.process.user.uid, .process.user.gid' "$tmp/bundle/config.json" | tr '\n' ' ')" = "65532 65532 " ] ||
    fail "umoci's runtime config does not run as 65532:65532"
cp "$tmp/bundle/config.json" "$tmp/config.orig.json"
n=0
# run_in RUNTIME PROGRAM ARGS...: run PROGRAM (a path inside the image) with ARGS in the image;
# stdout and stderr go to $tmp/out, the exit status (the program's, or the runtime's when it
# failed first) to $rc.
run_in() {
    local rt argv a
    rt=$1
    shift
    # (not jq --args: jq 1.6 still takes an argument such as --help as its own option)
    argv='[]'
    for a in "$@"; do argv=$(echo "$argv" | jq -c --arg a "$a" '. + [$a]'); done
    n=$((n + 1))
    id=sluice-image-test-$$-$n
    jq --argjson argv "$argv" '.process.terminal = false | .process.args = $argv' \
        "$tmp/config.orig.json" >"$tmp/bundle/config.json"
    set +e
    case "$rt" in
    runc)
        containers="$containers $id"
        runc --root "$tmp/runc" run --bundle "$tmp/bundle" "$id" </dev/null >"$tmp/out" 2>&1 ;;
    crun)
        containers="$containers $id"
        crun --root "$tmp/crun" run --bundle "$tmp/bundle" "$id" </dev/null >"$tmp/out" 2>&1 ;;
    crun-nocgroup2)
        containers="$containers $id"
        unshare -m --propagation private sh -c 'umount /sys/fs/cgroup/unified && exec "$@"' \
            sh crun --root "$tmp/crun" run --bundle "$tmp/bundle" "$id" </dev/null >"$tmp/out" 2>&1 ;;
    chroot)
        env -i PATH=/usr/bin HOME=/nonexistent "$(command -v chroot || echo chroot)" \
            --userspec=65532:65532 "$root" "$@" </dev/null >"$tmp/out" 2>&1 ;;
    esac
    rc=$?
    set -e
}

# A runtime "works" when `sluice version` runs in it. When it fails before sluice starts (its
# own error, not the loader's or sluice's), the next one is tried and the reason printed.
runtime=""
candidates=""
command -v runc >/dev/null && candidates="$candidates runc"
command -v crun >/dev/null && candidates="$candidates crun"
# crun 1.8 refuses a cgroup v1+v2 hybrid whose v2 hierarchy has controllers; it works with that
# hierarchy unmounted in a mount namespace of its own.
if command -v crun >/dev/null && [ "$(id -u)" -eq 0 ] && [ -d /sys/fs/cgroup/unified ] &&
    command -v unshare >/dev/null; then
    candidates="$candidates crun-nocgroup2"
fi
candidates="$candidates chroot"
# SLUICE_IMAGE_RUNTIMES="crun chroot" tries only those, in that order.
candidates=${SLUICE_IMAGE_RUNTIMES:-$candidates}
for rt in $candidates; do
    run_in "$rt" /usr/bin/sluice version
    if [ "$rc" -eq 0 ]; then
        [ "$(head -n 1 "$tmp/out")" = "sluice $version" ] ||
            fail "$rt: sluice version printed '$(head -n 1 "$tmp/out")', want 'sluice $version'"
        runtime=$rt
        break
    fi
    if grep -q 'error while loading shared libraries\|^sluice' "$tmp/out"; then
        fail "$rt: sluice version exited $rc in the image: $(cat "$tmp/out")"
    fi
    say "runtime $rt cannot run containers here (exit $rc): $(tr '\n' ' ' <"$tmp/out" | cut -c1-300)"
done
[ -n "$runtime" ] || skip "NO WAY TO ENTER THE IMAGE: none of '$candidates' works as $(id -un) here"
case "$runtime" in
runc | crun) say "RUNTIME: $runtime ($($runtime --version | head -n 1)), with the runtime config" \
    "umoci generated from the image (user 65532:65532, own pid/mount/ipc/uts/network namespaces)" ;;
crun-nocgroup2) say "RUNTIME: crun ($(crun --version | head -n 1)) in a mount namespace without" \
    "the cgroup v2 hierarchy (cgroups are hybrid here), with umoci's runtime config" ;;
chroot) say "RUNTIME: chroot --userspec=65532:65532 (no container runtime works here)" ;;
esac
say "sluice version: $(tr '\n' ' ' <"$tmp/out")"

run_in "$runtime" /usr/bin/sluice run --help
[ "$rc" -eq 0 ] || fail "$runtime: sluice run --help exited $rc: $(cat "$tmp/out")"
head -n 1 "$tmp/out" | grep -qx 'usage: sluice run \[options\]' ||
    fail "$runtime: sluice run --help: $(head -n 3 "$tmp/out")"
grep -q -- '--kubeconfig FILE' "$tmp/out" || fail "$runtime: sluice run --help lists no --kubeconfig"
say "sluice run --help: exit 0, $(wc -l <"$tmp/out") lines of usage"

# The loader, inside the image, finds every library (there is no /etc/ld.so.cache).
interp=$(awk '$1 ~ /^\// { print $1 }' "$tmp/ldd")
run_in "$runtime" "$interp" --list /usr/bin/sluice
[ "$rc" -eq 0 ] || fail "$runtime: loader trace exited $rc: $(cat "$tmp/out")"
if grep -q 'not found' "$tmp/out"; then
    fail "$runtime: the loader inside the image misses: $(grep 'not found' "$tmp/out")"
fi
[ "$(grep -c '=> /' "$tmp/out")" -eq "$(grep -c '=> /' "$tmp/ldd")" ] ||
    fail "$runtime: the loader inside the image loads $(grep -c '=> /' "$tmp/out") libraries, ldd here $(grep -c '=> /' "$tmp/ldd")"
say "the loader inside the image resolves all $(grep -c '=> /' "$tmp/out") libraries"
say "PASS (runtime: $runtime)"
