# lib/kube tests: unit tests (pure code and a scripted loopback server) and, with
# SLUICE_INTEGRATION, tests against the real kube-apiserver of the test environment.
if(TARGET sluice_kube)
  sluice_add_test(kube_kubeconfig LIBS sluice_kube)
  sluice_add_test(kube_bucket LIBS sluice_kube)
  sluice_add_test(kube_backoff LIBS sluice_kube)
  sluice_add_test(kube_lines LIBS sluice_kube)
  sluice_add_test(kube_client LIBS sluice_kube SOURCES kube_testsrv.c)
  sluice_add_test(kube_informer LIBS sluice_kube SOURCES kube_testsrv.c)
  sluice_add_test(kube_lease LIBS sluice_kube)
endif()
