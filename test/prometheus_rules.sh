#!/bin/sh
# manifests/prometheus/sluice-gpu-rules.yaml: `promtool check rules`, then `promtool test rules`
# on canned DCGM and kube-state-metrics series (test/data/prometheus/sluice-gpu-rules-test.yaml).
# promtool comes with Debian's prometheus package (.ci/install-deps, SLUICE_DEPS=integration);
# without it the test is skipped (exit 77).
# SPDX-License-Identifier: Apache-2.0
set -eu
src=${SLUICE_SOURCE_DIR:?}
command -v promtool >/dev/null || { echo "skip: promtool not installed (Debian package prometheus)"; exit 77; }
promtool check rules "$src/manifests/prometheus/sluice-gpu-rules.yaml"
promtool test rules "$src/test/data/prometheus/sluice-gpu-rules-test.yaml"
