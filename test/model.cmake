# Model area: exact quantities, the YAML loader and its field positions (lib/model/quantity.c,
# lib/model/yaml.c, lib/model/yamlmark.c).
sluice_add_test(quantity LIBS sluice_model)
sluice_add_test(yaml LIBS sluice_model)
sluice_add_test(yamlmark LIBS sluice_model)
sluice_add_fuzz(quantity LIBS sluice_model)
sluice_add_fuzz(yaml LIBS sluice_model)
# waitForPodsReady's configuration and rules, shared by sluice run and sluice sim
# (lib/model/waitready.c).
sluice_add_test(waitready LIBS sluice_model)
