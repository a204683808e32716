# test/fakeapi: the in-memory Kubernetes API server on loopback for unit tests of the reconcilers
# (docs/testing.md). A test that uses it lists its sources:
#   sluice_add_test(<module> LIBS sluice_kube ... SOURCES ${SLUICE_FAKEAPI_SOURCES})
set(SLUICE_FAKEAPI_SOURCES kube_testsrv.c fakeapi.c fakeapi_store.c)
if(NOT TARGET sluice_kube)
  return()
endif()

sluice_add_test(fakeapi LIBS sluice_kube SOURCES ${SLUICE_FAKEAPI_SOURCES})
