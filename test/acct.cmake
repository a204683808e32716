# lib/acct: the accounting record, its log, `sluice report`'s aggregation, the simulator's log.
sluice_add_test(acct LIBS sluice_acct sluice_sim)
