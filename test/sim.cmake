# Simulator tests (lib/sim, `sluice sim`).
sluice_add_test(sim_duration LIBS sluice_sim)
sluice_add_test(sim_events LIBS sluice_sim)
sluice_add_test(sim_record LIBS sluice_sim)
sluice_add_test(sim_scenario LIBS sluice_sim)
sluice_add_test(sim_golden LIBS sluice_sim)
