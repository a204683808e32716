# lib/jobs: Job -> Workload.
sluice_add_test(job_workload LIBS sluice_jobs)
# The integration framework and its Job, JobSet and Kubeflow entries (fixtures in test/data/jobs/).
sluice_add_test(jobs_framework LIBS sluice_jobs)
sluice_add_test(jobs_jobset LIBS sluice_jobs SOURCES jobs_fixtures.c)
sluice_add_test(jobs_kubeflow LIBS sluice_jobs SOURCES jobs_fixtures.c)
# oom_wrap.h: test_jobs_jobset fails each allocation of build, start and stop in turn.
target_link_options(test_jobs_jobset PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc
                    -Wl,--wrap=realloc -Wl,--wrap=strdup)
# TrainJob: pod sets from its training runtime, start / stop in runtimePatches (oom_wrap.h).
sluice_add_test(jobs_trainjob LIBS sluice_jobs SOURCES jobs_fixtures.c)
target_link_options(test_jobs_trainjob PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc
                    -Wl,--wrap=realloc)
# Any JSON object through every kind's entry (corpus: test/fuzz/corpus/jobs/).
sluice_add_fuzz(jobs LIBS sluice_jobs)
# Ray, plain Pods and pod groups, serving (fixtures in test/data/jobs/; oom_wrap.h fails each
# allocation of the kinds' code in turn).
foreach(t jobs_ray jobs_pod jobs_podgroup jobs_serving)
  sluice_add_test(${t} LIBS sluice_jobs SOURCES jobs_fixtures.c)
endforeach()
foreach(t jobs_ray jobs_pod jobs_podgroup)
  target_link_options(test_${t} PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
endforeach()
