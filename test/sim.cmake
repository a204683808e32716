# Simulator tests (lib/sim, `sluice sim`).
sluice_add_test(sim_events LIBS sluice_sim)
sluice_add_test(sim_record LIBS sluice_sim)
# test/oom_wrap.h: the record's allocations fail in turn.
target_link_options(test_sim_record PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
sluice_add_test(sim_scenario LIBS sluice_sim)
target_link_options(test_sim_scenario PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
sluice_add_test(sim_golden LIBS sluice_sim)
# The --report page: each example's story in its HTML, and the record behind it.
sluice_add_test(sim_report LIBS sluice_sim)
# `sluice sim --metrics` (lib/sim/simmetrics.c) on the shipped examples.
sluice_add_test(sim_metrics LIBS sluice_sim)
# Runs the sluice binary itself (exit codes, where outputs go).
sluice_add_test(sim_cmd)
add_dependencies(test_sim_cmd sluice)
# The HTML report in a real browser (headless Chromium; install with SLUICE_DEPS=browser).
add_test(NAME sim_report_browser
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sim_report_browser.sh $<TARGET_FILE:sluice> ${PROJECT_SOURCE_DIR})
set_tests_properties(sim_report_browser PROPERTIES LABELS "browser" TIMEOUT 300)
# Fuzz targets (replayed over their checked-in corpus with -DSLUICE_FUZZ=ON).
sluice_add_fuzz(sim_scenario LIBS sluice_sim)
# test/oom_wrap.h: every allocation of a whole simulator run fails in turn (issue 15).
sluice_add_test(sim_oom LIBS sluice_sim)
target_link_options(test_sim_oom PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
