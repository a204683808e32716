/* test_ctrl_metricsauth -- the secure /metrics filter against the in-memory API server: requests
 * without a bearer token are refused without a review, a new token is answered "being reviewed"
 * while one review runs, a failed review is forgotten and retried, reviews in flight are
 * bounded, and freeing the filter with reviews in flight is safe. (Verdicts -- 200, 401, 403
 * from real TokenReview and SubjectAccessReview answers -- are checked live by
 * integration_ctrl_metrics: the in-memory server does not review tokens.) */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/metricsauth.h"

#include "fakeapi.h"
#include "kube/client.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fx_s {
    uv_loop_t loop;
    fakeapi_t *fa;
    kube_config_t kcfg;
    kube_client_t *client;
    metricsauth_t *auth;
    int closed;
} fx_t;

static void fx_start(fx_t *fx)
{
    kube_client_opts_t co;
    err_msg_t msg = {{0}};

    memset(fx, 0, sizeof(*fx));
    ck_assert_int_eq(uv_loop_init(&fx->loop), 0);
    ck_assert_int_eq(fakeapi_start(&fx->loop, &fx->fa), ERR_OK);
    ck_assert_int_eq(fakeapi_register(fx->fa, "authentication.k8s.io", "v1", "tokenreviews",
                                      "TokenReview", false, false),
                     ERR_OK);
    kube_config_init(&fx->kcfg);
    fx->kcfg.server = strdup(fakeapi_url(fx->fa));
    memset(&co, 0, sizeof(co));
    co.http1 = true;
    co.qps_milli = 1000000;
    co.burst = 1000;
    ck_assert_int_eq(kube_client_new(&fx->loop, &fx->kcfg, &co, &fx->client, &msg), ERR_OK);
    fx->auth = metricsauth_new(fx->client, "/metrics");
    ck_assert_ptr_nonnull(fx->auth);
}

static void on_closed(void *data)
{
    ((fx_t *)data)->closed++;
}

static void on_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void fx_stop(fx_t *fx)
{
    metricsauth_free(fx->auth);
    kube_client_close(fx->client, on_closed, fx);
    fakeapi_stop(fx->fa);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(fx->closed, 1);
    uv_walk(&fx->loop, on_walk, NULL);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&fx->loop), 0);
    kube_config_fini(&fx->kcfg);
}

/* Run the loop until `n` TokenReviews have been answered (or 5 s pass). */
static void answered(fx_t *fx, size_t n)
{
    uint64_t deadline = uv_now(&fx->loop) + 5000;
    size_t done;

    for (;;) {
        done = 0;
        for (size_t i = 0; i < fakeapi_log_len(fx->fa); i++) {
            const fakeapi_logent_t *e = fakeapi_log_at(fx->fa, i);
            done += strcmp(e->resource, "tokenreviews") == 0 && e->status != 0;
        }
        if (done >= n)
            break;
        ck_assert_msg(uv_now(&fx->loop) < deadline, "%zu of %zu reviews answered", done, n);
        uv_run(&fx->loop, UV_RUN_ONCE);
    }
    /* The client's callback runs after the answer is logged: let it. */
    for (int i = 0; i < 20; i++)
        uv_run(&fx->loop, UV_RUN_NOWAIT);
}

START_TEST(no_bearer_token_no_review)
{
    fx_t fx;
    char why[256];
    static const char *const bad[] = {NULL,       "",           "Basic dXNlcjpwYXNz", "Bearer ",
                                      "Bearer  ", "Bearer a b", "bearer\tx"};

    fx_start(&fx);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(metricsauth_check(fx.auth, bad[i], why, sizeof(why)),
                         METRICSAUTH_UNAUTHENTICATED);
        ck_assert_ptr_nonnull(strstr(why, "Bearer token is required"));
    }
    for (int i = 0; i < 20; i++)
        uv_run(&fx.loop, UV_RUN_NOWAIT);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "create", "tokenreviews"), 0);
    fx_stop(&fx);
}
END_TEST

/* One review per token at a time; a review that fails (here: the server's 422) is forgotten, so
 * the next request with the token reviews again. The token itself is only in the request. */
START_TEST(one_review_per_token_and_retry_after_failure)
{
    fx_t fx;
    char why[256];

    fx_start(&fx);
    ck_assert_int_eq(metricsauth_check(fx.auth, "Bearer secret-1", why, sizeof(why)),
                     METRICSAUTH_PENDING);
    ck_assert_ptr_nonnull(strstr(why, "being reviewed"));
    ck_assert_int_eq(metricsauth_check(fx.auth, "bearer secret-1", why, sizeof(why)),
                     METRICSAUTH_PENDING);
    answered(&fx, 1);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "create", "tokenreviews"), 1);
    ck_assert_int_eq(metricsauth_check(fx.auth, "Bearer secret-1", why, sizeof(why)),
                     METRICSAUTH_PENDING);
    answered(&fx, 2);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "create", "tokenreviews"), 2);
    fx_stop(&fx);
}
END_TEST

/* At most 8 reviews in flight: a flood of distinct tokens costs the API server no more. Freeing
 * the filter with reviews in flight drops their answers safely. */
START_TEST(reviews_bounded_and_detached)
{
    fx_t fx;
    char why[256], tok[64];
    fakeapi_fault_t slow = {0};
    int pending_reviewed = 0, refused = 0;

    fx_start(&fx);
    slow.delay_ms = 300;
    fakeapi_fault_next(fx.fa, "create", "tokenreviews", &slow, 100);
    for (int i = 0; i < 12; i++) {
        snprintf(tok, sizeof(tok), "Bearer flood-%d", i);
        ck_assert_int_eq(metricsauth_check(fx.auth, tok, why, sizeof(why)), METRICSAUTH_PENDING);
        pending_reviewed += strstr(why, "being reviewed") != NULL;
        refused += strstr(why, "too many token reviews in flight") != NULL;
    }
    ck_assert_int_eq(pending_reviewed, 8);
    ck_assert_int_eq(refused, 4);
    metricsauth_free(fx.auth); /* 8 reviews in flight */
    fx.auth = NULL;
    answered(&fx, 8);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "create", "tokenreviews"), 8);
    fx_stop(&fx);
}
END_TEST

typedef struct verdicts_s {
    int calls;
    metricsauth_result_t last;
    char why[256];
} verdicts_t;

static void on_verdict(void *ud, metricsauth_result_t res, const char *why)
{
    verdicts_t *v = ud;

    v->calls++;
    v->last = res;
    snprintf(v->why, sizeof(v->why), "%s", why);
}

/* A request with a new token waits for the review instead of being told to retry: the verdict
 * comes through the callback once the review has ended (never from within the check), every
 * request waiting on the token gets it, and at most 64 wait per token. Here the in-memory
 * server fails the review (422), so the verdict is "retry" with the reason. */
START_TEST(new_token_waits_for_its_review)
{
    fx_t fx;
    char why[256];
    verdicts_t v[66] = {{0}};
    bool waiting = false;
    int waited = 0;

    fx_start(&fx);
    for (int i = 0; i < 66; i++) {
        ck_assert_int_eq(metricsauth_check_wait(fx.auth, "Bearer secret-2", why, sizeof(why),
                                                on_verdict, &v[i], &waiting),
                         METRICSAUTH_PENDING);
        waited += waiting;
    }
    ck_assert_int_eq(waited, 64);
    ck_assert_int_eq(v[0].calls, 0); /* not from within the call */
    answered(&fx, 1);
    for (int i = 0; i < 64; i++) {
        ck_assert_int_eq(v[i].calls, 1);
        ck_assert_int_eq(v[i].last, METRICSAUTH_PENDING);
        ck_assert_ptr_nonnull(strstr(v[i].why, "the token review failed"));
    }
    ck_assert_int_eq(v[64].calls + v[65].calls, 0);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "create", "tokenreviews"), 1);
    /* No bearer token: answered at once, nothing to wait for. */
    ck_assert_int_eq(
        metricsauth_check_wait(fx.auth, NULL, why, sizeof(why), on_verdict, &v[0], &waiting),
        METRICSAUTH_UNAUTHENTICATED);
    ck_assert(!waiting);
    fx_stop(&fx);
}
END_TEST

/* Freeing the filter answers the requests still waiting ("shutting down"), so their deferred
 * HTTP answers are released. */
START_TEST(free_answers_waiters)
{
    fx_t fx;
    char why[256];
    verdicts_t v = {0};
    bool waiting = false;

    fx_start(&fx);
    ck_assert_int_eq(metricsauth_check_wait(fx.auth, "Bearer secret-3", why, sizeof(why),
                                            on_verdict, &v, &waiting),
                     METRICSAUTH_PENDING);
    ck_assert(waiting);
    metricsauth_free(fx.auth);
    fx.auth = NULL;
    ck_assert_int_eq(v.calls, 1);
    ck_assert_int_eq(v.last, METRICSAUTH_PENDING);
    ck_assert_str_eq(v.why, "shutting down\n");
    answered(&fx, 1);
    ck_assert_int_eq(v.calls, 1);
    fx_stop(&fx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ctrl_metricsauth");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, no_bearer_token_no_review);
    tcase_add_test(tc, one_review_per_token_and_retry_after_failure);
    tcase_add_test(tc, reviews_bounded_and_detached);
    tcase_add_test(tc, new_token_waits_for_its_review);
    tcase_add_test(tc, free_answers_waiters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
