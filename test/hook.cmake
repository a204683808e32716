# lib/hook tests.
find_package(Threads REQUIRED)
sluice_add_test(hook_server LIBS sluice_hook Threads::Threads)
sluice_add_test(hook_admission LIBS sluice_hook)
# Allocation-failure test: every allocation of a review, jansson's included, is counted.
target_link_options(test_hook_admission PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc
                    -Wl,--wrap=realloc)
sluice_add_test(hook_audit LIBS sluice_hook)
sluice_add_test(hook_tls LIBS sluice_hook)
sluice_add_test(hook_limits LIBS sluice_hook)

# The API server calls sluice's webhooks over TLS (test/integration/webhooks.sh).
if(COMMAND sluice_add_integration)
  add_executable(webhook_serve webhook_serve.c)
  target_link_libraries(webhook_serve PRIVATE sluice_hook sluice_flags)
  sluice_add_integration(webhooks)
  set_property(TEST integration_webhooks APPEND PROPERTY ENVIRONMENT
               "SLUICE_WEBHOOK_SERVE=$<TARGET_FILE:webhook_serve>")
endif()
sluice_add_fuzz(admission LIBS sluice_hook)
sluice_add_fuzz(http LIBS sluice_hook)
