# Kueue's kueue.x-k8s.io v1beta1 <-> v1beta2 conversion: lib/model convert + yamlw, the
# ConversionReview webhook (lib/hook conversion) and `sluice convert`.
sluice_add_test(convert LIBS sluice_model)
# lib/model's own allocations go through test_convert's wrappers (allocation-failure test).
target_link_options(test_convert PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
sluice_add_fuzz(convert LIBS sluice_model)
sluice_add_test(yamlw LIBS sluice_model)
sluice_add_test(convert_review LIBS sluice_hook)
target_link_options(test_convert_review PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc
                    -Wl,--wrap=realloc)
sluice_add_fuzz(convert_review LIBS sluice_hook)
# Runs the built binary ($SLUICE_BINARY_DIR/sluice) on test/data/convert/; `sluice check` checks
# the output.
if(TARGET sluice)
  sluice_add_test(convert_cmd SOURCES sluice_exec.c)
  add_dependencies(test_convert_cmd sluice)
endif()
