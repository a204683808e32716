# Validation (lib/model validate, crosscheck) and the `sluice check` command.
sluice_add_test(validate LIBS sluice_model)
sluice_add_test(crosscheck LIBS sluice_model)
# Runs the built binary ($SLUICE_BINARY_DIR/sluice) on test/data/check/ and examples/platform/.
sluice_add_test(check_cmd SOURCES sluice_exec.c LIBS PkgConfig::JANSSON)
add_dependencies(test_check_cmd sluice)
