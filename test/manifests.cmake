# manifests/ (the kustomize base) and manifests/release/sluice.yaml, the single-file release
# rendered from it by .ci/render-release: test_release_in_sync re-renders with `kubectl kustomize`
# and compares (skipped, exit 77, only when there is no kubectl).
sluice_add_test(release_in_sync LIBS sluice_model)
target_compile_definitions(test_release_in_sync PRIVATE SLUICE_PROJECT_VERSION="${PROJECT_VERSION}")
set_tests_properties(release_in_sync PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# The GPU utilisation recording rules (manifests/prometheus/, docs/idle-reclaim.md): promtool check
# and unit-test them (skipped, exit 77, without promtool).
add_test(NAME prometheus_rules COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/prometheus_rules.sh)
set_tests_properties(prometheus_rules PROPERTIES LABELS unit SKIP_RETURN_CODE 77
  ENVIRONMENT "SLUICE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
