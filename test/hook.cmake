# lib/hook tests.
find_package(Threads REQUIRED)
sluice_add_test(hook_server LIBS sluice_hook Threads::Threads)
sluice_add_test(hook_admission LIBS sluice_hook)
sluice_add_test(hook_audit LIBS sluice_hook)
