# Model area: exact quantities and the YAML loader (lib/model/quantity.c, lib/model/yaml.c).
sluice_add_test(quantity LIBS sluice_model)
sluice_add_test(yaml LIBS sluice_model)
sluice_add_fuzz(quantity LIBS sluice_model)
sluice_add_fuzz(yaml LIBS sluice_model)
