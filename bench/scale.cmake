# The short version of bench/scale.sh for CI: shape "smoke" (1 cohort x 2 ClusterQueues x 40
# Workloads) against the shared test API server of the integration tests (fixture kube_env), with
# a random name prefix and clean-up; passes when the runner ran end to end and the quota check
# found nothing. A replay of a synthetic overcommitting trace checks that the checker can fail.
add_test(NAME bench_scale_trace_overcommit
  COMMAND sh -c "o=$(\"$1\" --shape smoke --check-trace \"$2\" 2>&1); r=$?; echo \"$o\"; [ $r -eq 1 ] && echo \"$o\" | grep -q 'cohort cohort-0 holds 41 cpu'" sh
          $<TARGET_FILE:scale_runner> ${CMAKE_CURRENT_SOURCE_DIR}/testdata/overcommit.jsonl)
set_tests_properties(bench_scale_trace_overcommit PROPERTIES LABELS "unit")
# The records of a real run (sluice 4c1cfcb, baseline) that held 121 cpu in a 120-cpu cohort: the
# admissions in force at the violating record, in resourceVersion order.
add_test(NAME bench_scale_trace_overcommit_4c1cfcb
  COMMAND sh -c "o=$(\"$1\" --shape baseline --check-trace \"$2\" 2>&1); r=$?; echo \"$o\"; [ $r -eq 1 ] && echo \"$o\" | grep -q 'resourceVersion 115152.*cohort cohort-2 holds 121 cpu'" sh
          $<TARGET_FILE:scale_runner> ${CMAKE_CURRENT_SOURCE_DIR}/testdata/baseline-overcommit-4c1cfcb.jsonl)
set_tests_properties(bench_scale_trace_overcommit_4c1cfcb PROPERTIES LABELS "unit")

if(NOT SLUICE_INTEGRATION)
  return()
endif()
add_test(NAME bench_scale_smoke
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale.sh --shape smoke --build ${PROJECT_BINARY_DIR}
          --kube-env ${PROJECT_BINARY_DIR}/kube-env/env --random-prefix --cleanup --trace
          --out ${PROJECT_BINARY_DIR}/bench-scale-smoke --runner-args "--timeout 120")
set_tests_properties(bench_scale_smoke PROPERTIES LABELS "bench-smoke;integration"
  FIXTURES_REQUIRED kube_env RESOURCE_LOCK kube_env SKIP_RETURN_CODE 77 TIMEOUT 300)
# The same with issue 15's crash test in short: `sluice run` killed with SIGKILL at random moments
# (about every 2 s) and started again; passes when at least one kill happened, every Workload
# finished and the quota check found nothing. The long version (20 kills in the baseline shape)
# is in docs/reliability.md.
add_test(NAME bench_scale_smoke_kill
  COMMAND sh -c "sh \"$1\" --shape smoke --build \"$2\" --kube-env \"$2/kube-env/env\" --random-prefix --cleanup --trace --out \"$2/bench-scale-smoke-kill\" --runner-args '--timeout 120' --kill 3 --kill-every 2 2>&1 | tee \"$2/bench-scale-smoke-kill.log\"; r=$?; [ $r -ne 0 ] && exit $r; grep -q 'kill -9: [1-9][0-9]* of 3 done' \"$2/bench-scale-smoke-kill.log\"" sh
          ${CMAKE_CURRENT_SOURCE_DIR}/scale.sh ${PROJECT_BINARY_DIR})
set_tests_properties(bench_scale_smoke_kill PROPERTIES LABELS "bench-smoke;integration"
  FIXTURES_REQUIRED kube_env RESOURCE_LOCK kube_env SKIP_RETURN_CODE 77 TIMEOUT 300)
