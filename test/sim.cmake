# Simulator tests (lib/sim, `sluice sim`).
sluice_add_test(sim_duration LIBS sluice_sim)
sluice_add_test(sim_events LIBS sluice_sim)
sluice_add_test(sim_record LIBS sluice_sim)
sluice_add_test(sim_scenario LIBS sluice_sim)
sluice_add_test(sim_golden LIBS sluice_sim)
# Runs the sluice binary itself (exit codes, where outputs go).
sluice_add_test(sim_cmd)
add_dependencies(test_sim_cmd sluice)
