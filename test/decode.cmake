# Decoders of typed objects (lib/model: jsonx, object, decode_*), requests, selectors and names.
sluice_add_test(decode LIBS sluice_model)
# Every allocation of lib/model passes through test_decode's wrappers (allocation-failure test).
target_link_options(test_decode PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
                    -Wl,--wrap=strdup)
sluice_add_test(requests LIBS sluice_model)
# The Configuration's `resources` section: decoding, validation, quota requests (issue 17).
sluice_add_test(transform LIBS sluice_model)
sluice_add_test(selector LIBS sluice_model)
sluice_add_fuzz(decode LIBS sluice_model)
