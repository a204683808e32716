# CRDs (crds/*.yaml): structural-schema checker and instance validator (test-only, crd_schema.c),
# applied to the shipped CRDs and to every example manifest under examples/.
sluice_add_test(crds LIBS sluice_model SOURCES crd_schema.c crd_structural.c)
