# lib/acct: the accounting record, its log, `sluice report`'s aggregation, the simulator's log.
sluice_add_test(acct LIBS sluice_acct sluice_sim)
# lib/acct: the accounting log reader of sluice report over arbitrary bytes.
sluice_add_fuzz(acct LIBS sluice_acct)
# `sluice report` and `sluice sim --accounting/--compare`: the built binary end to end.
sluice_add_test(acct_cmd SOURCES sluice_exec.c)
add_dependencies(test_acct_cmd sluice)
