# Decoders of typed objects (lib/model: jsonx, object, decode_*), requests, selectors.
sluice_add_test(decode LIBS sluice_model)
