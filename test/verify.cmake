# lib/verify: the invariant checker on hand-made histories (each rule broken once, and kept).
sluice_add_test(verify LIBS sluice_verify)
