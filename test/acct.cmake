# lib/acct: the accounting record, its log, `sluice report`'s aggregation, the simulator's log.
sluice_add_test(acct LIBS sluice_acct sluice_sim)
# lib/acct: the accounting log reader of sluice report over arbitrary bytes.
sluice_add_fuzz(acct LIBS sluice_acct)
