# lib/jobs: Job -> Workload.
sluice_add_test(job_workload LIBS sluice_jobs)
# The integration framework and its Job, JobSet and Kubeflow entries (fixtures in test/data/jobs/).
sluice_add_test(jobs_framework LIBS sluice_jobs)
sluice_add_test(jobs_jobset LIBS sluice_jobs SOURCES jobs_fixtures.c)
sluice_add_test(jobs_kubeflow LIBS sluice_jobs SOURCES jobs_fixtures.c)
# oom_wrap.h: test_jobs_jobset fails each allocation of build, start and stop in turn.
target_link_options(test_jobs_jobset PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc
                    -Wl,--wrap=realloc -Wl,--wrap=strdup)
