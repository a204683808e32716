# Tests of the scheduling engine (lib/sched): one Check executable per engine module, all built
# on the in-code fixtures of test/sched_fixtures.c.
foreach(m sched_quota sched_queue sched_assign sched_preempt sched_fair sched_kueue_examples
          sched_property sched_requeue sched_nodes sched_afs sched_checks sched_tasadmit)
  sluice_add_test(${m} LIBS sluice_sched SOURCES sched_fixtures.c)
endforeach()
# (sched_tasreplace also decodes a Workload: a topologyRequest's slice layers)
sluice_add_test(sched_tasreplace LIBS sluice_sched sluice_model SOURCES sched_fixtures.c)

# sched_tasadmit: topology-aware scheduling in flavor assignment (issue 17).
# sched_tasreplace: failed-node replacement of TAS workloads (Kueue's TASFailedNodeReplacement).
# test/oom_wrap.h: test_sched_oom fails each allocation of a scheduling cycle in turn.
sluice_add_test(sched_oom LIBS sluice_sched SOURCES sched_fixtures.c)
target_link_options(test_sched_oom PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
                    -Wl,--wrap=strdup)

# sched_clone: the copy the start-time estimate runs forward; test/oom_wrap.h for its OOM paths.
find_package(Threads REQUIRED)
sluice_add_test(sched_clone LIBS sluice_sched Threads::Threads SOURCES sched_fixtures.c)
target_link_options(test_sched_clone PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc
                    -Wl,--wrap=realloc -Wl,--wrap=strdup)

# Topology-aware placement (lib/sched/tas.c, issue 17): Kueue's algorithm on hand-made topologies.
sluice_add_test(sched_tas LIBS sluice_sched)
