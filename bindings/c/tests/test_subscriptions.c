/* Flexible-sync subscriptions through the C API, on files whose session starts paused against an
 * unreachable server: the rules for names and queries (an unnamed query once, a name with an
 * unnamed one's query added, a name with the same query nothing, with a new query updated),
 * unsubscribing, updates begun, changed, committed and cancelled, the set read back with its
 * state, queries and realms refused, a wait that times out keeping its subscription, and the
 * callback of cove_results_subscribe() called once, at a delivery, with its user data freed
 * once. Against the server the test command starts (COVE_SYNC_TEST_URL, COVE_SYNC_TEST_TOKEN;
 * without it the test fails): a subscription downloads what another file uploaded, a query the
 * server cannot answer leaves the set in error, and a write the server's rules refuse is undone
 * and reported (cove_sync_compensating_writes). */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* `nickname` is not in the test server's schema: a query on it is refused there, not here. */
static const char* SCHEMA =
    "{\"SubDog\": {\"primaryKey\": \"name\", \"properties\": {\"name\": \"string\", \"age\": \"int\","
    "   \"color\": \"string?\", \"toys\": \"string[]\", \"nickname\": \"string?\", \"owner\": \"SubPerson?\"}},"
    " \"SubPerson\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"dog\": \"SubDog?\"}},"
    " \"RuledNote\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"owner\": \"string\","
    "   \"text\": \"string\"}}}";

static char folder[] = "/tmp/cove-subscriptions-XXXXXX";

static int contains(const char* text, const char* part) { return text != NULL && strstr(text, part) != NULL; }

/* A file of the test folder, opened synced; `url` NULL: an unreachable server, paused. */
static cove_realm_t* open_synced(const char* file, const char* url, const char* token) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    cove_sync_config_t* sync = NULL;
    CHECK_OK(cove_sync_config_new(url ? url : "http://127.0.0.1:9", token ? token : "t", &sync));
    CHECK_OK(cove_sync_config_set_request_timeout(sync, 10));
    CHECK_OK(cove_sync_config_set_long_poll(sync, 2));
    CHECK_OK(cove_sync_config_set_starts_connected(sync, url != NULL));
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new(path, &config));
    CHECK_OK(cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC));
    CHECK_OK(cove_config_set_schema_json(config, SCHEMA, 1));
    CHECK_OK(cove_config_set_sync(config, sync));
    cove_realm_t* realm = NULL;
    CHECK_OK(cove_open(config, &realm));
    cove_release(config);
    cove_release(sync);
    return realm;
}

static cove_results_t* query(cove_realm_t* realm, const char* cls, const char* rql, cove_value_t* args, size_t n) {
    cove_results_t* r = NULL;
    CHECK_OK(cove_query(realm, cls, rql, args, n, &r));
    return r;
}

static uint64_t version_of(cove_realm_t* realm) {
    uint64_t v = 999;
    CHECK_OK(cove_subscriptions_get_version(realm, &v));
    return v;
}

static size_t count_of(cove_realm_t* realm) {
    size_t n = 999;
    CHECK_OK(cove_subscriptions_count(realm, &n));
    return n;
}

/* Whether subscription `i` has this name (NULL: unnamed), class and query. */
static int is_subscription(cove_realm_t* realm, size_t i, const char* name, const char* cls, const char* rql) {
    cove_subscription_t s;
    memset(&s, 0, sizeof s);
    if (cove_subscriptions_get(realm, i, &s) != COVE_OK) return 0;
    int same_name = name == NULL ? s.name == NULL : (s.name != NULL && strcmp(s.name, name) == 0);
    return same_name && strcmp(s.class_name, cls) == 0 && strcmp(s.query, rql) == 0;
}

static void test_names_and_queries(void) {
    cove_realm_t* realm = open_synced("names.cove", NULL, NULL);
    CHECK(version_of(realm) == 0);
    CHECK(count_of(realm) == 0);
    /* Unnamed twice: one subscription, one version. */
    cove_results_t* adults = query(realm, "SubDog", "age > 1", NULL, 0);
    CHECK_OK(cove_results_subscribe_blocking(adults, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1));
    CHECK_OK(cove_results_subscribe_blocking(adults, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1));
    CHECK(count_of(realm) == 1);
    CHECK(version_of(realm) == 1);
    CHECK(is_subscription(realm, 0, NULL, "SubDog", "age > 1"));
    int32_t state = -1;
    char* error = (char*)"untouched";
    CHECK_OK(cove_subscriptions_get_state(realm, &state, &error));
    CHECK(state == COVE_SUBSCRIPTION_PENDING);
    CHECK(error == NULL);
    /* Named with an unnamed one's query: added. */
    cove_results_t* named = query(realm, "SubDog", "age > 1", NULL, 0);
    CHECK_OK(cove_results_subscribe_blocking(named, "adults", COVE_WAIT_FOR_SYNC_NEVER, -1));
    CHECK_OK(cove_results_subscribe_blocking(named, "overOne", COVE_WAIT_FOR_SYNC_NEVER, -1));
    CHECK(count_of(realm) == 3);
    CHECK(is_subscription(realm, 1, "adults", "SubDog", "age > 1"));
    CHECK(is_subscription(realm, 2, "overOne", "SubDog", "age > 1"));
    /* The results remember the last subscription they made: overOne goes. */
    CHECK_OK(cove_results_unsubscribe(named));
    CHECK(count_of(realm) == 2);
    CHECK(is_subscription(realm, 1, "adults", "SubDog", "age > 1"));
    CHECK_OK(cove_results_unsubscribe(named)); /* nothing left to remove */
    CHECK(count_of(realm) == 2);
    /* Same name, same query: nothing. */
    uint64_t v = version_of(realm);
    CHECK_OK(cove_results_subscribe_blocking(named, "adults", COVE_WAIT_FOR_SYNC_ON_CREATION, 0));
    CHECK(version_of(realm) == v);
    cove_subscription_t before;
    CHECK_OK(cove_subscriptions_get(realm, 1, &before));
    cove_timestamp_t created = before.created_at;
    CHECK(created.seconds > 1600000000);
    /* Same name, new query: updated in place, created time kept. */
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    cove_value_t five = int_value(5);
    cove_results_t* older = query(realm, "SubDog", "age > $0", &five, 1);
    CHECK_OK(cove_results_subscribe_blocking(older, "adults", COVE_WAIT_FOR_SYNC_NEVER, -1));
    CHECK(version_of(realm) == v + 1);
    CHECK(count_of(realm) == 2);
    cove_subscription_t after;
    CHECK_OK(cove_subscriptions_get(realm, 1, &after));
    CHECK(strcmp(after.name, "adults") == 0 && strcmp(after.query, "age > $0") == 0);
    CHECK(after.created_at.seconds == created.seconds && after.created_at.nanoseconds == created.nanoseconds);
    CHECK(after.updated_at.seconds * 1000000000LL + after.updated_at.nanoseconds >
          created.seconds * 1000000000LL + created.nanoseconds);
    /* Sorts are left out and filters joined. */
    cove_value_t red = string_value("red");
    cove_results_t *sorted = NULL, *filtered = NULL;
    CHECK_OK(cove_results_sort(adults, "name", true, &sorted));
    CHECK_OK(cove_results_filter(sorted, "color == $0", &red, 1, &filtered));
    CHECK_OK(cove_results_subscribe_blocking(filtered, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1));
    CHECK(is_subscription(realm, 2, NULL, "SubDog", "(age > 1) AND (color == $0)"));
    CHECK_OK(cove_results_unsubscribe(filtered));
    CHECK_OK(cove_results_unsubscribe(adults));
    /* `named` made 'adults' with another query than it has now: it stays. */
    CHECK_OK(cove_results_unsubscribe(named));
    CHECK(count_of(realm) == 1);
    CHECK(is_subscription(realm, 0, "adults", "SubDog", "age > $0"));
    cove_subscription_t s;
    CHECK_FAILS(cove_subscriptions_get(realm, 1, &s), COVE_ERR_OUT_OF_RANGE, "index 1 is out of range");
    CHECK_FAILS(cove_subscriptions_get(realm, (size_t)-1, &s), COVE_ERR_OUT_OF_RANGE, "out of range");
    /* Results that subscribed to nothing have nothing to remove. */
    cove_results_t* people = query(realm, "SubPerson", "TRUEPREDICATE", NULL, 0);
    CHECK_OK(cove_results_unsubscribe(people));
    CHECK(count_of(realm) == 1);
    /* Persisted: another realm of the file reads the same set. */
    cove_realm_t* again = open_synced("names.cove", NULL, NULL);
    CHECK(count_of(again) == 1);
    CHECK(is_subscription(again, 0, "adults", "SubDog", "age > $0"));
    cove_release(again);
    cove_release(people);
    cove_release(filtered);
    cove_release(sorted);
    cove_release(older);
    cove_release(named);
    cove_release(adults);
    cove_release(realm);
}

static void test_updates(void) {
    cove_realm_t* realm = open_synced("updates.cove", NULL, NULL);
    CHECK_FAILS(cove_subscriptions_append(realm, "SubDog", NULL, NULL, 0, NULL), COVE_ERR_INVALID_ARGUMENT,
                "no subscription update is in progress");
    CHECK_FAILS(cove_subscriptions_update_commit(realm, NULL), COVE_ERR_INVALID_ARGUMENT, "no subscription update");
    CHECK_OK(cove_subscriptions_update_cancel(realm)); /* nothing to cancel */
    CHECK_OK(cove_subscriptions_update_begin(realm));
    CHECK_FAILS(cove_subscriptions_update_begin(realm), COVE_ERR_INVALID_ARGUMENT, "already in progress");
    cove_value_t two = int_value(2);
    CHECK_OK(cove_subscriptions_append(realm, "SubDog", "age > $0", &two, 1, "a"));
    CHECK_OK(cove_subscriptions_append(realm, "SubPerson", NULL, NULL, 0, NULL));
    CHECK_OK(cove_subscriptions_append(realm, "SubDog", "age > 9", NULL, 0, NULL));
    CHECK_OK(cove_subscriptions_append(realm, "SubDog", "age > 9", NULL, 0, NULL)); /* unnamed twice */
    CHECK_FAILS(cove_subscriptions_append(realm, "SubDog", NULL, NULL, 0, ""), COVE_ERR_INVALID_ARGUMENT, "name is empty");
    CHECK_FAILS(cove_subscriptions_append(realm, "Cat", NULL, NULL, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "no such class");
    CHECK_FAILS(cove_subscriptions_append(realm, NULL, NULL, NULL, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "class_name is NULL");
    CHECK_FAILS(cove_subscriptions_append(realm, "SubDog", "age > $0", NULL, 1, NULL), COVE_ERR_INVALID_ARGUMENT,
                "args is NULL");
    /* Reads inside the update show it; nothing is committed yet. */
    CHECK(count_of(realm) == 3);
    CHECK(version_of(realm) == 0);
    uint64_t v = 0;
    CHECK_OK(cove_subscriptions_update_commit(realm, &v));
    CHECK(v == 1);
    CHECK(version_of(realm) == 1);
    CHECK(count_of(realm) == 3);
    CHECK(is_subscription(realm, 0, "a", "SubDog", "age > $0"));
    CHECK(is_subscription(realm, 1, NULL, "SubPerson", "TRUEPREDICATE"));
    CHECK(is_subscription(realm, 2, NULL, "SubDog", "age > 9"));
    /* Cancelled: nothing changes. */
    CHECK_OK(cove_subscriptions_update_begin(realm));
    CHECK_OK(cove_subscriptions_remove_all(realm, NULL, false));
    CHECK(count_of(realm) == 0);
    CHECK_OK(cove_subscriptions_update_cancel(realm));
    CHECK(count_of(realm) == 3);
    CHECK(version_of(realm) == 1);
    /* An update that changes nothing commits no version. */
    CHECK_OK(cove_subscriptions_update_begin(realm));
    CHECK_OK(cove_subscriptions_append(realm, "SubPerson", NULL, NULL, 0, NULL));
    CHECK_OK(cove_subscriptions_update_commit(realm, &v));
    CHECK(v == 1);
    /* Removals: by name, a missing name, the unnamed ones of a class, a class, everything. */
    CHECK_OK(cove_subscriptions_update_begin(realm));
    CHECK_FAILS(cove_subscriptions_remove(realm, "zz"), COVE_ERR_NOT_FOUND, "no subscription is named 'zz'");
    CHECK_FAILS(cove_subscriptions_remove(realm, NULL), COVE_ERR_INVALID_ARGUMENT, "name is NULL");
    CHECK_OK(cove_subscriptions_append(realm, "SubDog", "age < 3", NULL, 0, "b"));
    CHECK_OK(cove_subscriptions_remove_all(realm, "SubDog", true));
    CHECK(count_of(realm) == 3);
    CHECK(is_subscription(realm, 0, "a", "SubDog", "age > $0"));
    CHECK(is_subscription(realm, 1, NULL, "SubPerson", "TRUEPREDICATE"));
    CHECK(is_subscription(realm, 2, "b", "SubDog", "age < 3"));
    CHECK_OK(cove_subscriptions_remove(realm, "a"));
    CHECK_OK(cove_subscriptions_update_commit(realm, &v));
    CHECK(v == 2);
    CHECK(count_of(realm) == 2);
    CHECK_OK(cove_subscriptions_update_begin(realm));
    CHECK_OK(cove_subscriptions_remove_all(realm, "SubDog", false));
    CHECK(count_of(realm) == 1 && is_subscription(realm, 0, NULL, "SubPerson", "TRUEPREDICATE"));
    CHECK_OK(cove_subscriptions_remove_all(realm, NULL, true));
    CHECK_OK(cove_subscriptions_update_commit(realm, &v));
    CHECK(v == 3 && count_of(realm) == 0);
    /* Outside an update, the changes are refused. */
    CHECK_FAILS(cove_subscriptions_remove(realm, "b"), COVE_ERR_INVALID_ARGUMENT, "no subscription update is in progress");
    CHECK_FAILS(cove_subscriptions_remove_all(realm, NULL, false), COVE_ERR_INVALID_ARGUMENT,
                "no subscription update is in progress");
    /* A write begun during an update: the commit is refused and ends the update. */
    CHECK_OK(cove_subscriptions_update_begin(realm));
    CHECK_OK(cove_subscriptions_append(realm, "SubDog", NULL, NULL, 0, NULL));
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_subscriptions_update_commit(realm, &v), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_cancel_write(realm));
    CHECK(count_of(realm) == 0 && version_of(realm) == 3);
    CHECK_FAILS(cove_subscriptions_update_commit(realm, &v), COVE_ERR_INVALID_ARGUMENT, "no subscription update");
    cove_release(realm);
}

/* A query subscriptions do not take fails with `status` or QUERY_SYNTAX, naming `text`. */
static void check_refused(cove_realm_t* realm, const char* rql, const char* text) {
    cove_results_t* r = query(realm, "SubDog", rql, NULL, 0);
    cove_status_t got = cove_results_subscribe_blocking(r, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1);
    CHECK(got == COVE_ERR_INVALID_ARGUMENT || got == COVE_ERR_QUERY_SYNTAX);
    if (!contains(cove_last_error_message(), text)) fprintf(stderr, "  %s: %s\n", rql, cove_last_error_message());
    CHECK(contains(cove_last_error_message(), text));
    CHECK_OK(cove_subscriptions_update_begin(realm));
    got = cove_subscriptions_append(realm, "SubDog", rql, NULL, 0, "x");
    CHECK(got == COVE_ERR_INVALID_ARGUMENT || got == COVE_ERR_QUERY_SYNTAX);
    CHECK(contains(cove_last_error_message(), text));
    CHECK_OK(cove_subscriptions_update_cancel(realm));
    cove_release(r);
}

static void test_what_is_refused(void) {
    cove_realm_t* realm = open_synced("refused.cove", NULL, NULL);
    check_refused(realm, "age > 1 SORT(name ASC)", "SORT");
    check_refused(realm, "owner.name == 'x'", "key path");
    check_refused(realm, "toys.@count > 1", "not allowed");
    CHECK(count_of(realm) == 0 && version_of(realm) == 0);
    cove_results_t* dogs = query(realm, "SubDog", "TRUEPREDICATE", NULL, 0);
    /* Arguments. */
    CHECK_FAILS(cove_results_subscribe_blocking(NULL, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1), COVE_ERR_INVALID_ARGUMENT,
                "results is NULL");
    CHECK_FAILS(cove_results_subscribe_blocking(dogs, "", COVE_WAIT_FOR_SYNC_NEVER, -1), COVE_ERR_INVALID_ARGUMENT,
                "name is empty");
    CHECK_FAILS(cove_results_subscribe_blocking(dogs, NULL, (cove_wait_for_sync_e)7, -1), COVE_ERR_INVALID_ARGUMENT,
                "mode 7");
    CHECK_FAILS(cove_results_subscribe_blocking(dogs, NULL, COVE_WAIT_FOR_SYNC_NEVER, -2), COVE_ERR_INVALID_ARGUMENT,
                "timeout_s -2");
    CHECK_FAILS(cove_results_subscribe_blocking(dogs, NULL, COVE_WAIT_FOR_SYNC_NEVER, NAN), COVE_ERR_INVALID_ARGUMENT,
                "timeout_s");
    CHECK_FAILS(cove_subscriptions_get_version(realm, NULL), COVE_ERR_INVALID_ARGUMENT, "out_version is NULL");
    CHECK_FAILS(cove_subscriptions_get_state(realm, NULL, NULL), COVE_ERR_INVALID_ARGUMENT, "out_state is NULL");
    /* Results of values. */
    cove_object_t* rex = NULL;
    cove_value_t pk = string_value("rex");
    cove_list_t* toys = NULL;
    cove_results_t* toy_results = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_with_primary_key(realm, "SubDog", &pk, &rex));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_get_list(rex, "toys", &toys));
    CHECK_OK(cove_list_as_results(toys, &toy_results));
    CHECK_FAILS(cove_results_subscribe_blocking(toy_results, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1),
                COVE_ERR_INVALID_ARGUMENT, "only results of a class's objects");
    /* Inside a write. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_results_subscribe_blocking(dogs, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1), COVE_ERR_IN_WRITE,
                "inside a write");
    CHECK_FAILS(cove_subscriptions_update_begin(realm), COVE_ERR_IN_WRITE, "inside a write");
    uint64_t v = 0;
    CHECK_FAILS(cove_subscriptions_get_version(realm, &v), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_subscriptions_wait(realm, 0, 0), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_results_unsubscribe(dogs), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_cancel_write(realm));
    /* A frozen realm. */
    cove_realm_t* frozen = NULL;
    CHECK_OK(cove_freeze(realm, &frozen));
    CHECK_FAILS(cove_subscriptions_get_version(frozen, &v), COVE_ERR_FROZEN, "frozen");
    CHECK_FAILS(cove_subscriptions_update_begin(frozen), COVE_ERR_FROZEN, "frozen");
    cove_release(frozen);
    /* A realm that does not sync. */
    cove_realm_t* plain = open_schema(NULL, SCHEMA, 1);
    cove_results_t* plain_dogs = query(plain, "SubDog", "TRUEPREDICATE", NULL, 0);
    CHECK_FAILS(cove_results_subscribe_blocking(plain_dogs, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1),
                COVE_ERR_INVALID_ARGUMENT, "synced realm");
    CHECK_FAILS(cove_subscriptions_update_begin(plain), COVE_ERR_INVALID_ARGUMENT, "synced realm");
    CHECK_FAILS(cove_subscriptions_get_version(plain, &v), COVE_ERR_INVALID_ARGUMENT, "synced realm");
    CHECK_FAILS(cove_subscriptions_wait(plain, 0, 0), COVE_ERR_INVALID_ARGUMENT, "synced realm");
    CHECK_OK(cove_results_unsubscribe(plain_dogs)); /* nothing to remove */
    cove_release(plain_dogs);
    cove_release(plain);
    cove_release(toy_results);
    cove_release(toys);
    cove_release(rex);
    cove_release(dogs);
    cove_release(realm);
}

/* A paused session downloads nothing: waits time out and keep the subscription. */
static void test_a_wait_that_times_out(void) {
    cove_realm_t* realm = open_synced("timeout.cove", NULL, NULL);
    cove_results_t* sevens = query(realm, "SubDog", "age == 7", NULL, 0);
    CHECK_FAILS(cove_results_subscribe_blocking(sevens, "sevens", COVE_WAIT_FOR_SYNC_ALWAYS, 0.2), COVE_ERR_SYNC,
                "within 0.2 s");
    CHECK(count_of(realm) == 1 && is_subscription(realm, 0, "sevens", "SubDog", "age == 7"));
    CHECK(version_of(realm) == 1);
    /* Already there: ON_CREATION does not wait, ALWAYS does. */
    CHECK_OK(cove_results_subscribe_blocking(sevens, "sevens", COVE_WAIT_FOR_SYNC_ON_CREATION, 0.1));
    CHECK_FAILS(cove_results_subscribe_blocking(sevens, "sevens", COVE_WAIT_FOR_SYNC_ALWAYS, 0.1), COVE_ERR_SYNC,
                "cove_results_subscribe_blocking");
    CHECK_FAILS(cove_subscriptions_wait(realm, 1, 0.1), COVE_ERR_SYNC, "within 0.1 s");
    CHECK_FAILS(cove_subscriptions_wait(realm, 2, 0.1), COVE_ERR_INVALID_ARGUMENT, "version 2");
    CHECK_FAILS(cove_subscriptions_wait(realm, 1, -3), COVE_ERR_INVALID_ARGUMENT, "timeout_s -3");
    CHECK(version_of(realm) == 1);
    cove_release(sevens);
    cove_release(realm);
}

/* What the async form's callback saw. */
typedef struct {
    int calls;
    int freed;
    cove_status_t status;
    char message[256];
    int had_message;
} outcome_t;

static void on_subscribed(void* userdata, cove_status_t status, const char* message) {
    outcome_t* o = userdata;
    o->calls++;
    o->status = status;
    o->had_message = message != NULL;
    snprintf(o->message, sizeof o->message, "%s", message ? message : "");
}

static void free_outcome(void* userdata) { ((outcome_t*)userdata)->freed++; }

/* Waits up to `seconds` for the realm's notification descriptor, then delivers. */
static int deliver_when_readable(cove_realm_t* realm, double seconds) {
    int fd = -1;
    CHECK_OK(cove_notification_fd(realm, &fd));
    struct pollfd p = {fd, POLLIN, 0};
    int ready = poll(&p, 1, (int)(seconds * 1000));
    CHECK_OK(cove_deliver(realm));
    return ready > 0;
}

static void test_the_async_form(void) {
    cove_realm_t* realm = open_synced("async.cove", NULL, NULL);
    cove_results_t* dogs = query(realm, "SubDog", "age == 3", NULL, 0);
    /* A wait that times out: called once, at a delivery, with the status and the message. */
    outcome_t timed = {0};
    CHECK_OK(cove_results_subscribe(dogs, "threes", COVE_WAIT_FOR_SYNC_ON_CREATION, 0.2, on_subscribed, &timed,
                                    free_outcome));
    CHECK(count_of(realm) == 1);
    CHECK(timed.calls == 0);
    for (int i = 0; i < 50 && timed.calls == 0; i++) deliver_when_readable(realm, 0.1);
    CHECK(timed.calls == 1);
    CHECK(timed.status == COVE_ERR_SYNC);
    CHECK(contains(timed.message, "within 0.2 s"));
    CHECK(timed.freed == 1);
    CHECK_OK(cove_deliver(realm));
    CHECK(timed.calls == 1 && timed.freed == 1);
    CHECK(count_of(realm) == 1);
    /* The descriptor woke the caller: the callback came with the first delivery after it. */
    outcome_t woke = {0};
    CHECK_OK(cove_results_subscribe(dogs, "threes", COVE_WAIT_FOR_SYNC_ALWAYS, 0.1, on_subscribed, &woke, free_outcome));
    CHECK(deliver_when_readable(realm, 5));
    for (int i = 0; i < 20 && woke.calls == 0; i++) deliver_when_readable(realm, 0.1);
    CHECK(woke.calls == 1 && woke.status == COVE_ERR_SYNC && woke.freed == 1);
    /* Nothing to wait for: OK, no message, at the next delivery. */
    outcome_t quick = {0};
    CHECK_OK(cove_results_subscribe(dogs, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1, on_subscribed, &quick, free_outcome));
    CHECK(quick.calls == 0);
    CHECK(deliver_when_readable(realm, 1));
    CHECK(quick.calls == 1 && quick.status == COVE_OK && !quick.had_message && quick.freed == 1);
    bool advanced = false;
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK(quick.calls == 1 && quick.freed == 1);
    /* Delivered by cove_refresh() too. */
    outcome_t refreshed = {0};
    CHECK_OK(cove_results_subscribe(dogs, "r", COVE_WAIT_FOR_SYNC_NEVER, 1, on_subscribed, &refreshed, NULL));
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK(refreshed.calls == 1 && refreshed.status == COVE_OK && refreshed.freed == 0);
    /* A call that fails calls neither the callback nor free_userdata. */
    outcome_t failed = {0};
    CHECK_FAILS(cove_results_subscribe(dogs, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1, NULL, &failed, free_outcome),
                COVE_ERR_INVALID_ARGUMENT, "callback is NULL");
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_results_subscribe(dogs, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1, on_subscribed, &failed, free_outcome),
                COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_cancel_write(realm));
    cove_results_t* sorted = query(realm, "SubDog", "age > 1 SORT(name ASC)", NULL, 0);
    CHECK(cove_results_subscribe(sorted, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1, on_subscribed, &failed, free_outcome) !=
          COVE_OK);
    CHECK_OK(cove_deliver(realm));
    CHECK(failed.calls == 0 && failed.freed == 0);
    /* Closed before the wait ends: called at the close with COVE_ERR_CLOSED. */
    outcome_t cut = {0};
    cove_results_t* fours = query(realm, "SubDog", "age == 4", NULL, 0);
    CHECK_OK(cove_results_subscribe(fours, NULL, COVE_WAIT_FOR_SYNC_ALWAYS, -1, on_subscribed, &cut, free_outcome));
    CHECK_OK(cove_close(realm));
    CHECK(cut.calls == 1 && cut.status == COVE_ERR_CLOSED && cut.freed == 1);
    CHECK(contains(cut.message, "closed"));
    outcome_t late = {0};
    CHECK_FAILS(cove_results_subscribe(dogs, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1, on_subscribed, &late, free_outcome),
                COVE_ERR_CLOSED, "cove_results_subscribe");
    CHECK(late.calls == 0 && late.freed == 0);
    cove_release(fours);
    cove_release(sorted);
    cove_release(dogs);
    cove_release(realm);
    /* Released with a wait in progress: called once, at the last release. */
    cove_realm_t* other = open_synced("async-release.cove", NULL, NULL);
    cove_results_t* all = query(other, "SubDog", "TRUEPREDICATE", NULL, 0);
    outcome_t dropped = {0};
    CHECK_OK(cove_results_subscribe(all, NULL, COVE_WAIT_FOR_SYNC_ALWAYS, 30, on_subscribed, &dropped, free_outcome));
    cove_release(all);
    cove_release(other);
    CHECK(dropped.calls == 1 && dropped.status == COVE_ERR_CLOSED && dropped.freed == 1);
}

/* With the test command's server: one file uploads a dog, another subscribes to it and has it
 * once the wait returns; a query on a property the server's schema lacks is refused there. */
static void test_with_the_server(const char* url, const char* token) {
    char name[64];
    snprintf(name, sizeof name, "c-sub-%ld-%d", (long)time(NULL), (int)getpid());
    cove_realm_t* writer = open_synced("server-a.cove", url, token);
    cove_value_t pk = string_value(name), age = int_value(41);
    cove_object_t* dog = NULL;
    CHECK_OK(cove_begin_write(writer));
    CHECK_OK(cove_object_create_with_primary_key(writer, "SubDog", &pk, &dog));
    CHECK_OK(cove_object_set(dog, "age", &age));
    CHECK_OK(cove_commit(writer));
    CHECK_OK(cove_sync_wait_for_upload(writer, 15));
    cove_release(dog);

    cove_realm_t* reader = open_synced("server-b.cove", url, token);
    cove_results_t* mine = query(reader, "SubDog", "name == $0", &pk, 1);
    CHECK_OK(cove_results_subscribe_blocking(mine, "mine", COVE_WAIT_FOR_SYNC_ALWAYS, 20));
    bool advanced = false;
    CHECK_OK(cove_refresh(reader, &advanced));
    size_t n = 0;
    CHECK_OK(cove_results_count(mine, &n));
    CHECK(n == 1);
    int32_t state = -1;
    CHECK_OK(cove_subscriptions_get_state(reader, &state, NULL));
    CHECK(state == COVE_SUBSCRIPTION_COMPLETE);
    /* Refused by the server: the wait says why, and so does the state. */
    cove_results_t* nicknamed = query(reader, "SubDog", "nickname == 'x'", NULL, 0);
    CHECK_FAILS(cove_results_subscribe_blocking(nicknamed, NULL, COVE_WAIT_FOR_SYNC_ON_CREATION, 20), COVE_ERR_SYNC,
                "refused");
    char* error = NULL;
    CHECK_OK(cove_subscriptions_get_state(reader, &state, &error));
    CHECK(state == COVE_SUBSCRIPTION_ERROR && error != NULL);
    cove_free(error);
    cove_release(nicknamed);
    cove_release(mine);
    cove_release(reader);
    cove_release(writer);
}

/* A note the write rule (owner == $user, the token's user alice) refuses: undone by the server's
 * compensating write, and reported. */
static void test_a_refused_write(const char* url, const char* token) {
    cove_realm_t* realm = open_synced("server-n.cove", url, token);
    /* Classes with read rules reach a file through its subscriptions. */
    cove_results_t* notes = query(realm, "RuledNote", "TRUEPREDICATE", NULL, 0);
    CHECK_OK(cove_results_subscribe_blocking(notes, NULL, COVE_WAIT_FOR_SYNC_ON_CREATION, 20));
    cove_release(notes);
    cove_value_t id = int_value((int64_t)time(NULL) * 1000 + getpid() % 1000), owner = string_value("bob");
    cove_object_t* note = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_with_primary_key(realm, "RuledNote", &id, &note));
    CHECK_OK(cove_object_set(note, "owner", &owner));
    CHECK_OK(cove_commit(realm));
    cove_release(note);
    CHECK_OK(cove_sync_wait_for_upload(realm, 20));
    CHECK_OK(cove_sync_wait_for_download(realm, 20));
    bool advanced = false;
    CHECK_OK(cove_refresh(realm, &advanced));
    cove_object_t* found = NULL;
    CHECK(cove_object_find(realm, "RuledNote", &id, &found) == COVE_OK && found == NULL);
    char* json = NULL;
    uint64_t total = 0;
    CHECK_OK(cove_sync_compensating_writes(realm, &json, &total));
    CHECK(total == 1);
    CHECK(contains(json, "\"class\":\"RuledNote\"") && contains(json, "write rule"));
    cove_free(json);
    cove_release(realm);
}

int main(void) {
    if (mkdtemp(folder) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_names_and_queries();
    test_updates();
    test_what_is_refused();
    test_a_wait_that_times_out();
    test_the_async_form();
    const char* url = getenv("COVE_SYNC_TEST_URL");
    const char* token = getenv("COVE_SYNC_TEST_TOKEN");
    if (url == NULL || token == NULL || *url == '\0' || *token == '\0') {
        printf("test_subscriptions: FAIL: no sync server given (COVE_SYNC_TEST_URL, COVE_SYNC_TEST_TOKEN); the test "
               "command starts one (by hand: eval \"$(.ci/sync-server.sh start /tmp/cove-sync)\" first)\n");
        return 1;
    }
    test_with_the_server(url, token);
    test_a_refused_write(url, token);
    return check_summary("test_subscriptions");
}
