# lib/jobs: Job -> Workload.
sluice_add_test(job_workload LIBS sluice_jobs)
# The integration framework and its Job, JobSet and Kubeflow entries (fixtures in test/data/jobs/).
sluice_add_test(jobs_framework LIBS sluice_jobs)
sluice_add_test(jobs_jobset LIBS sluice_jobs)
