# lib/verify: the invariant checker on hand-made histories (each rule broken once, and kept).
sluice_add_test(verify LIBS sluice_verify)
# lib/verify/replay: the checker fed with API watch records (sluice verify, the end-to-end tests).
sluice_add_test(verify_replay LIBS sluice_verify_replay)
