# Decoders of typed objects (lib/model: jsonx, object, decode_*), requests, selectors and names.
sluice_add_test(decode LIBS sluice_model)
sluice_add_test(requests LIBS sluice_model)
sluice_add_test(selector LIBS sluice_model)
sluice_add_fuzz(decode LIBS sluice_model)
