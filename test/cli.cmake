# The command line (cmd/sluice): the option parser every subcommand uses.
sluice_add_test(cli LIBS sluice_cmds)
