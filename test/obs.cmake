# lib/obs tests: the metrics registry and its Prometheus text exposition.
sluice_add_test(obs_metrics LIBS sluice_obs)
# test/oom_wrap.h: every allocation fails in turn.
target_link_options(test_obs_metrics PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc -Wl,--wrap=strdup)
sluice_add_test(obs_logfmt LIBS sluice_obs PkgConfig::JANSSON)
# bench/bench_metrics.c: scrape and tick cost at scale over the in-memory API server (a benchmark
# run by hand, not a test; it needs the fakeapi sources listed here).
if(TARGET sluice_ctrl)
  add_executable(bench_metrics ${PROJECT_SOURCE_DIR}/bench/bench_metrics.c ${SLUICE_FAKEAPI_SOURCES})
  target_include_directories(bench_metrics PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(bench_metrics PRIVATE sluice_ctrl sluice_flags PkgConfig::CHECK)
endif()
# The start-time estimate over the engine (in-code fixtures of test/sched_fixtures.c).
sluice_add_test(obs_estimate LIBS sluice_obs sluice_sched SOURCES sched_fixtures.c)
