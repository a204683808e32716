# lib/ctrl tests: unit tests of the pure parts, and end-to-end tests of `sluice run` against the
# real kube-apiserver of the integration environment (label integration; fixture kube_env from
# test/integration.cmake, which CTest resolves whatever the include order).
if(NOT TARGET sluice_ctrl)
  return()
endif()

sluice_add_test(ctrl_cond LIBS sluice_ctrl)
sluice_add_test(ctrl_podset LIBS sluice_ctrl)
sluice_add_test(ctrl_wlstatus LIBS sluice_ctrl)
sluice_add_test(ctrl_queuestatus LIBS sluice_ctrl)
sluice_add_test(ctrl_config LIBS sluice_ctrl)
sluice_add_test(ctrl_podsready LIBS sluice_ctrl)
sluice_add_test(ctrl_problems LIBS sluice_ctrl)
sluice_add_test(ctrl_writer LIBS sluice_ctrl)
sluice_add_test(ctrl_workqueue LIBS sluice_ctrl)
sluice_add_test(ctrl_podindex LIBS sluice_ctrl)
# Its allocations go through the test's wrappers (test/oom_wrap.h: allocation-failure test).
target_link_options(test_ctrl_podindex PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc
                    -Wl,--wrap=realloc -Wl,--wrap=strdup)
sluice_add_test(ctrl_records LIBS sluice_ctrl)
sluice_add_test(ctrl_provreq LIBS sluice_ctrl)

if(SLUICE_INTEGRATION AND TARGET sluice)
  # sluice_add_ctrl_e2e(<name>): test/integration/ctrl_<name>.sh, one `sluice run` (or two).
  function(sluice_add_ctrl_e2e name)
    add_test(NAME integration_ctrl_${name}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/integration/ctrl_${name}.sh)
    set_tests_properties(integration_ctrl_${name} PROPERTIES LABELS integration
      SKIP_RETURN_CODE 77 TIMEOUT 600 RESOURCE_LOCK kube_env FIXTURES_REQUIRED kube_env
      ENVIRONMENT "SLUICE_KUBE_ENV=${PROJECT_BINARY_DIR}/kube-env/env;SLUICE_SOURCE_DIR=${PROJECT_SOURCE_DIR};SLUICE_BINARY_DIR=${PROJECT_BINARY_DIR};SLUICE_JOB_RUNNER=$<TARGET_FILE:job-runner>")
  endfunction()
  sluice_add_ctrl_e2e(admit)
  sluice_add_ctrl_e2e(preempt)
  sluice_add_ctrl_e2e(cohort)
  sluice_add_ctrl_e2e(failover)
  sluice_add_ctrl_e2e(webhook)
  sluice_add_ctrl_e2e(webhook_auth)
  sluice_add_ctrl_e2e(rbac)
  sluice_add_ctrl_e2e(podsready)
  sluice_add_ctrl_e2e(diagnose)
  sluice_add_ctrl_e2e(jobset)
  sluice_add_ctrl_e2e(kubeflow)
  # TrainJob: pod sets from its training runtime, admission in its runtimePatches.
  sluice_add_ctrl_e2e(trainjob)
  sluice_add_ctrl_e2e(metrics)
  sluice_add_ctrl_e2e(visibility)
  sluice_add_ctrl_e2e(lws)
  sluice_add_ctrl_e2e(transform) # issue 17: resources.transformations, excludeResourcePrefixes
  sluice_add_ctrl_e2e(checks) # issue 17: admission checks, the test playing the check controller
  sluice_add_ctrl_e2e(provreq) # issue 17: the ProvisioningRequest check, the test as autoscaler
  sluice_add_ctrl_e2e(reclaim) # issue 14: reclaimable pods of a Job give their quota back
  sluice_add_ctrl_e2e(acct) # issue 18: the accounting log of sluice run, read by sluice report
  # issue 15's API faults: sluice run through test/faultproxy.c (5 % of the requests faulted)
  find_package(Threads REQUIRED)
  add_executable(faultproxy faultproxy.c)
  target_link_libraries(faultproxy PRIVATE CURL::libcurl Threads::Threads sluice_flags)
  sluice_add_ctrl_e2e(faults)
  set_property(TEST integration_ctrl_faults APPEND PROPERTY ENVIRONMENT
               "SLUICE_FAULTPROXY=$<TARGET_FILE:faultproxy>")
  # issue 15's forced 410 Gone: etcd compacted under a stopped operator (an API server of its own)
  sluice_add_ctrl_e2e(compact)
  set_property(TEST integration_ctrl_compact APPEND PROPERTY ENVIRONMENT
               "SLUICE_FAULTPROXY=$<TARGET_FILE:faultproxy>")
  # issue 15's connection and body floods against sluice run (bench/flood.c)
  sluice_add_ctrl_e2e(flood)
  set_property(TEST integration_ctrl_flood APPEND PROPERTY ENVIRONMENT
               "SLUICE_FLOOD=$<TARGET_FILE:flood>")
  # idle reclaim against a canned Prometheus on loopback (test/promcanned.c)
  add_executable(promcanned promcanned.c)
  target_link_libraries(promcanned PRIVATE sluice_flags)
  sluice_add_ctrl_e2e(idle)
  set_property(TEST integration_ctrl_idle APPEND PROPERTY ENVIRONMENT
               "SLUICE_PROMCANNED=$<TARGET_FILE:promcanned>")
  # issue 18: Nodes and bound Pods watched; NoFittingNode, QuotaExceedsCapacity, capacity metrics
  sluice_add_ctrl_e2e(nodes)
  sluice_add_ctrl_e2e(tas)
  # test/integration/ctrl_kinds.sh KIND: the same live story for each object kind not covered
  # above (integration_ctrl_kinds_<kind>).
  foreach(kind tfjob xgboostjob paddlejob jaxjob mpijob rayjob raycluster)
    add_test(NAME integration_ctrl_kinds_${kind}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/integration/ctrl_kinds.sh ${kind})
    set_tests_properties(integration_ctrl_kinds_${kind} PROPERTIES LABELS integration
      SKIP_RETURN_CODE 77 TIMEOUT 600 RESOURCE_LOCK kube_env FIXTURES_REQUIRED kube_env
      ENVIRONMENT "SLUICE_KUBE_ENV=${PROJECT_BINARY_DIR}/kube-env/env;SLUICE_SOURCE_DIR=${PROJECT_SOURCE_DIR};SLUICE_BINARY_DIR=${PROJECT_BINARY_DIR};SLUICE_JOB_RUNNER=$<TARGET_FILE:job-runner>")
  endforeach()
endif()

# The reconcilers against the in-memory API server (test/fakeapi.h): no kube-apiserver needed.
sluice_add_test(ctrl_reconcile LIBS sluice_ctrl SOURCES ctrl_fixture.c ${SLUICE_FAKEAPI_SOURCES})
sluice_add_test(ctrl_tas LIBS sluice_ctrl SOURCES ctrl_fixture.c ${SLUICE_FAKEAPI_SOURCES})
# /metrics of the operator (lib/ctrl/metrics.c) against the in-memory API server.
sluice_add_test(ctrl_metrics LIBS sluice_ctrl SOURCES ctrl_fixture.c ${SLUICE_FAKEAPI_SOURCES})
sluice_add_test(ctrl_race LIBS sluice_ctrl SOURCES ctrl_fixture.c ${SLUICE_FAKEAPI_SOURCES})
# test/oom_wrap.h: a reconcile pass with each of its allocations failing in turn (the API server
# on its own thread, whose allocations never fail).
sluice_add_test(ctrl_oom LIBS sluice_ctrl SOURCES ${SLUICE_FAKEAPI_SOURCES})
target_link_options(test_ctrl_oom PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
                    -Wl,--wrap=strdup)
# The same pass failing libcurl's allocations alone (~2,900 of them), every 17th.
add_test(NAME ctrl_oom_curl COMMAND test_ctrl_oom)
set_tests_properties(ctrl_oom_curl PROPERTIES LABELS "unit"
  ENVIRONMENT "SLUICE_OOM_CURL=only;SLUICE_OOM_STRIDE=17")
sluice_add_test(ctrl_pods LIBS sluice_ctrl SOURCES ctrl_fixture.c ${SLUICE_FAKEAPI_SOURCES})
# The accounting log written by the operator (lib/ctrl/acctlog.c).
sluice_add_test(ctrl_acct LIBS sluice_ctrl SOURCES ctrl_fixture.c ${SLUICE_FAKEAPI_SOURCES})
sluice_add_test(ctrl_visibility LIBS sluice_ctrl SOURCES ctrl_fixture.c ${SLUICE_FAKEAPI_SOURCES})
# The operator's periodic start-time estimates (lib/ctrl/estimate.c).
sluice_add_test(ctrl_estimate LIBS sluice_ctrl SOURCES ctrl_fixture.c ${SLUICE_FAKEAPI_SOURCES})
sluice_add_test(ctrl_metricsauth LIBS sluice_ctrl SOURCES ${SLUICE_FAKEAPI_SOURCES})
# Idle reclaim (lib/ctrl/idle*.c, promq.c): policy, state machine, configuration, the Prometheus
# answer and its transport on a loopback server; then the controller against the in-memory API
# server with a canned Prometheus.
sluice_add_test(ctrl_idle LIBS sluice_ctrl SOURCES kube_testsrv.c)
sluice_add_test(ctrl_idlectl LIBS sluice_ctrl SOURCES ctrl_fixture.c crd_schema.c crd_structural.c
                ${SLUICE_FAKEAPI_SOURCES})
sluice_add_fuzz(promq LIBS sluice_ctrl)
