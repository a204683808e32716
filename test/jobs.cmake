# lib/jobs: Job -> Workload.
sluice_add_test(job_workload LIBS sluice_jobs)
