# lib/obs tests: the metrics registry and its Prometheus text exposition.
sluice_add_test(obs_metrics LIBS sluice_obs)
# test/oom_wrap.h: every allocation fails in turn.
target_link_options(test_obs_metrics PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc -Wl,--wrap=strdup)
sluice_add_test(obs_logfmt LIBS sluice_obs PkgConfig::JANSSON)
