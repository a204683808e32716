# Tests of the scheduling engine (lib/sched): one Check executable per engine module, all built
# on the in-code fixtures of test/sched_fixtures.c.
foreach(m sched_quota sched_queue sched_assign sched_preempt sched_fair sched_kueue_examples
          sched_property sched_requeue)
  sluice_add_test(${m} LIBS sluice_sched SOURCES sched_fixtures.c)
endforeach()
