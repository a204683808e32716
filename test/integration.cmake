# Integration tests: shell scripts in test/integration/ run against a real kube-apiserver 1.20 +
# etcd on loopback (test/kube-env, see docs/testing.md). Label "integration" (ctest -L integration).
# The fixture pair kube_env_up / kube_env_down starts the server once for all of them and stops it
# even when tests fail; `ctest -R <name>` pulls the fixture in automatically.
# A test exits 77 (reported "Skipped", with the reason in its output) only when the environment
# cannot be built on this machine (e.g. no deb-src reachable).
if(NOT SLUICE_INTEGRATION)
  return()
endif()

find_program(SLUICE_SH sh REQUIRED)
set(SLUICE_KUBE_ENV_DIR ${PROJECT_BINARY_DIR}/kube-env)
set(_kube_env ${CMAKE_CURRENT_SOURCE_DIR}/kube-env)

# The test job runner (scheduler + kubelet stand-in for test Jobs).
add_executable(job-runner kube-env/job-runner.c)
target_link_libraries(job-runner PRIVATE sluice_util sluice_flags CURL::libcurl PkgConfig::JANSSON)

# Fixture: a stale environment of an interrupted run is stopped first. The first run on a machine
# builds kube-apiserver from source (minutes), hence the long timeout.
add_test(NAME kube_env_up
  COMMAND ${SLUICE_SH} -c "\"$1/down\" \"$2\" && exec \"$1/up\" \"$2\"" up ${_kube_env} ${SLUICE_KUBE_ENV_DIR})
set_tests_properties(kube_env_up PROPERTIES FIXTURES_SETUP kube_env LABELS integration
  SKIP_RETURN_CODE 77 TIMEOUT 3600 RESOURCE_LOCK kube_env)
add_test(NAME kube_env_down COMMAND ${_kube_env}/down ${SLUICE_KUBE_ENV_DIR})
set_tests_properties(kube_env_down PROPERTIES FIXTURES_CLEANUP kube_env LABELS integration
  TIMEOUT 120 RESOURCE_LOCK kube_env)

# sluice_add_integration(<name> [NO_FIXTURE]): test/integration/<name>.sh
function(sluice_add_integration name)
  cmake_parse_arguments(I "NO_FIXTURE" "" "" ${ARGN})
  add_test(NAME integration_${name} COMMAND ${SLUICE_SH} ${CMAKE_CURRENT_SOURCE_DIR}/integration/${name}.sh)
  set_tests_properties(integration_${name} PROPERTIES LABELS integration SKIP_RETURN_CODE 77
    TIMEOUT 600 RESOURCE_LOCK kube_env
    ENVIRONMENT "SLUICE_KUBE_ENV=${SLUICE_KUBE_ENV_DIR}/env;SLUICE_SOURCE_DIR=${PROJECT_SOURCE_DIR};SLUICE_BINARY_DIR=${PROJECT_BINARY_DIR};SLUICE_JOB_RUNNER=$<TARGET_FILE:job-runner>")
  if(I_NO_FIXTURE)
    # may build kube-apiserver itself when run alone on a fresh machine
    set_tests_properties(integration_${name} PROPERTIES TIMEOUT 3600 DEPENDS kube_env_up)
  else()
    set_tests_properties(integration_${name} PROPERTIES FIXTURES_REQUIRED kube_env)
  endif()
endfunction()

sluice_add_integration(kube_env)
sluice_add_integration(crds)
# The test CRDs of JobSet, the Kubeflow jobs, Ray and LeaderWorkerSet (test/data/crds-integrations).
sluice_add_integration(crds_integrations)
sluice_add_integration(examples)
# v1beta1 <-> v1beta2 through sluice's conversion webhook (needs the sluice binary).
sluice_add_integration(conversion)
sluice_add_integration(job_runner)
# The shipped install (manifests/, kustomize-rendered) and the operator under it.
sluice_add_integration(install)
# Starts and stops environments of its own; the shared one is not needed (but the lock is: the
# machine should not run three API servers at once).
sluice_add_integration(kube_env_lifecycle NO_FIXTURE)
