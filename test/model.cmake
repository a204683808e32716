# Model area: exact quantities, the YAML loader and its field positions (lib/model/quantity.c,
# lib/model/yaml.c, lib/model/yamlmark.c).
sluice_add_test(quantity LIBS sluice_model)
sluice_add_test(yaml LIBS sluice_model)
sluice_add_test(yamlmark LIBS sluice_model)
sluice_add_fuzz(quantity LIBS sluice_model)
sluice_add_fuzz(yaml LIBS sluice_model)
