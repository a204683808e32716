# Validation (lib/model validate, crosscheck) and the `sluice check` command.
sluice_add_test(validate LIBS sluice_model)
sluice_add_test(crosscheck LIBS sluice_model)
