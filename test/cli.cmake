# The command line (cmd/sluice): the option parser every subcommand uses, and every command run
# with bad, = and -h arguments from its own option table (the built binary).
sluice_add_test(cli LIBS sluice_cmds)
sluice_add_test(cli_cmds LIBS sluice_cmds SOURCES sluice_exec.c)
add_dependencies(test_cli_cmds sluice)
sluice_add_fuzz(cli LIBS sluice_cmds)
