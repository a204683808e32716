# lib/kube tests: unit tests (pure code and a scripted loopback server) and, with
# SLUICE_INTEGRATION, tests against the real kube-apiserver of the test environment.
if(TARGET sluice_kube)
  sluice_add_test(kube_kubeconfig LIBS sluice_kube)
  sluice_add_test(kube_bucket LIBS sluice_kube)
  sluice_add_test(kube_backoff LIBS sluice_kube)
  sluice_add_test(kube_lines LIBS sluice_kube)
  sluice_add_test(kube_client LIBS sluice_kube SOURCES kube_testsrv.c)
  sluice_add_test(kube_informer LIBS sluice_kube SOURCES kube_testsrv.c)
  # the saturation tests run the Lease against test/fakeapi
  sluice_add_test(kube_lease LIBS sluice_kube SOURCES kube_testsrv.c fakeapi.c fakeapi_store.c)
  sluice_add_test(kube_problem LIBS sluice_kube)
  sluice_add_fuzz(watch_line LIBS sluice_kube)
  sluice_add_fuzz(kubeconfig LIBS sluice_kube)
endif()

# Integration: test_kube_it talks to the real kube-apiserver of test/kube-env (see
# docs/testing.md) through the env file the kube_env fixture writes (test/integration.cmake).
if(TARGET sluice_kube AND SLUICE_INTEGRATION)
  add_executable(test_kube_it test_kube_it.c kube_itenv.c)
  target_link_libraries(test_kube_it PRIVATE sluice_kube sluice_util sluice_flags PkgConfig::CHECK)
  target_include_directories(test_kube_it PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  add_test(NAME integration_kube_client COMMAND test_kube_it)
  set_tests_properties(integration_kube_client PROPERTIES LABELS integration
    FIXTURES_REQUIRED kube_env RESOURCE_LOCK kube_env SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "SLUICE_KUBE_ENV=${PROJECT_BINARY_DIR}/kube-env/env")
endif()
