/* Sync through the C API: a sync configuration's setters refuse what is out of range, naming it,
 * and cove_open refuses a URL, a token or a schema that cannot sync; a realm that does not sync
 * answers COVE_ERR_SYNC; a paused session, waits that time out, waits refused inside a write;
 * an unreachable server keeps writes queued. With a server (COVE_SYNC_TEST_URL and
 * COVE_SYNC_TEST_TOKEN, COVE_SYNC_TEST_TOKEN_OTHER for a second user; the test command starts
 * one): two files sync an object both ways, and a token the server refuses stops the session. */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* The schema of the Swift client's tests: files of every test sync through one server. */
static const char* SCHEMA =
    "{\"Dog\": {\"primaryKey\": \"name\", \"properties\": {\"name\": \"string\", \"age\": \"int\","
    "   \"weight\": \"double?\", \"owner\": \"Person?\", \"tags\": \"string[]\", \"friends\": \"Dog[]\","
    "   \"toys\": \"string<>\", \"scores\": \"int{}\"}},"
    " \"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\"}}}";

static const char* UNREACHABLE = "http://127.0.0.1:9";

/* A sync configuration as the tests want it: short timeouts, a short long poll. */
static cove_sync_config_t* sync_config(const char* url, const char* token, bool connected) {
    cove_sync_config_t* sync = NULL;
    CHECK_OK(cove_sync_config_new(url, token, &sync));
    CHECK_OK(cove_sync_config_set_request_timeout(sync, 5));
    CHECK_OK(cove_sync_config_set_long_poll(sync, 2));
    CHECK_OK(cove_sync_config_set_starts_connected(sync, connected));
    return sync;
}

/* Opens `path` (NULL: in memory) on `schema` with `sync`; the status of cove_open. */
static cove_status_t open_with(const char* path, const char* schema, const cove_sync_config_t* sync,
                               cove_realm_t** out) {
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new(path, &config));
    CHECK_OK(cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC));
    CHECK_OK(cove_config_set_schema_json(config, schema, 1));
    CHECK_OK(cove_config_set_sync(config, sync));
    *out = NULL;
    cove_status_t status = cove_open(config, out);
    cove_release(config);
    return status;
}

static cove_realm_t* open_synced(const char* path, const char* url, const char* token, bool connected) {
    cove_sync_config_t* sync = sync_config(url, token, connected);
    cove_realm_t* realm = NULL;
    CHECK_OK(open_with(path, SCHEMA, sync, &realm));
    cove_release(sync);
    return realm;
}

static cove_sync_status_t status_of(cove_realm_t* realm) {
    cove_sync_status_t status;
    memset(&status, 0xff, sizeof status);
    CHECK_OK(cove_sync_get_status(realm, &status));
    return status;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The session's last error (to free), waiting up to 10 s for one to come. */
static char* last_error_soon(cove_realm_t* realm) {
    char* message = NULL;
    for (int i = 0; i < 200 && message == NULL; i++) {
        CHECK_OK(cove_sync_last_error(realm, &message));
        if (message == NULL) sleep_ms(50);
    }
    CHECK(message != NULL);
    return message;
}

static bool contains(const char* text, const char* part) {
    return text != NULL && strstr(text, part) != NULL;
}

static void create_person(cove_realm_t* realm, int64_t id, const char* name) {
    cove_value_t pk = int_value(id), value = string_value(name);
    cove_object_t* person = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_with_primary_key(realm, "Person", &pk, &person));
    CHECK_OK(cove_object_set(person, "name", &value));
    CHECK_OK(cove_commit(realm));
    cove_release(person);
}

static void test_setters_refuse_what_is_out_of_range(void) {
    cove_sync_config_t* sync = NULL;
    CHECK_FAILS(cove_sync_config_new(NULL, "t", &sync), COVE_ERR_INVALID_ARGUMENT, "cove_sync_config_new: url is NULL");
    CHECK_FAILS(cove_sync_config_new(UNREACHABLE, NULL, &sync), COVE_ERR_INVALID_ARGUMENT, "token is NULL");
    CHECK_FAILS(cove_sync_config_new(UNREACHABLE, "t", NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_sync_config_new(UNREACHABLE, "\xff", &sync), COVE_ERR_INVALID_ARGUMENT, "token is not valid UTF-8");
    CHECK(sync == NULL);
    CHECK_OK(cove_sync_config_new(UNREACHABLE, "t", &sync));

    CHECK_FAILS(cove_sync_config_set_request_timeout(sync, 0), COVE_ERR_INVALID_ARGUMENT,
                "cove_sync_config_set_request_timeout: a request timeout of 0.0 s: expected more than 0 and at most 3600");
    CHECK_FAILS(cove_sync_config_set_request_timeout(sync, 3601), COVE_ERR_INVALID_ARGUMENT, "at most 3600");
    CHECK_FAILS(cove_sync_config_set_request_timeout(sync, NAN), COVE_ERR_INVALID_ARGUMENT, "nan s");
    CHECK_OK(cove_sync_config_set_request_timeout(sync, 0.25));
    CHECK_FAILS(cove_sync_config_set_long_poll(sync, -1), COVE_ERR_INVALID_ARGUMENT,
                "cove_sync_config_set_long_poll: a long poll of -1 s: expected 0 to 60");
    CHECK_FAILS(cove_sync_config_set_long_poll(sync, 61), COVE_ERR_INVALID_ARGUMENT, "61 s: expected 0 to 60");
    CHECK_OK(cove_sync_config_set_long_poll(sync, 0));
    CHECK_FAILS(cove_sync_config_set_changesets_per_transaction(sync, 0), COVE_ERR_INVALID_ARGUMENT,
                "cove_sync_config_set_changesets_per_transaction: 0 changesets per transaction: expected 1 to 100000");
    CHECK_FAILS(cove_sync_config_set_changesets_per_transaction(sync, 100001), COVE_ERR_INVALID_ARGUMENT,
                "expected 1 to 100000");
    CHECK_OK(cove_sync_config_set_changesets_per_transaction(sync, 1));
    CHECK_FAILS(cove_sync_config_set_trusted_certificates(sync, ""), COVE_ERR_INVALID_ARGUMENT,
                "cove_sync_config_set_trusted_certificates: pem_path is empty");
    CHECK_OK(cove_sync_config_set_trusted_certificates(sync, "ca.pem"));
    CHECK_OK(cove_sync_config_set_trusted_certificates(sync, NULL));
    CHECK_OK(cove_sync_config_set_starts_connected(sync, false));
    CHECK_FAILS(cove_sync_config_set_client_reset(sync, (cove_client_reset_e)7), COVE_ERR_INVALID_ARGUMENT,
                "cove_sync_config_set_client_reset: mode 7");
    CHECK_OK(cove_sync_config_set_client_reset(sync, COVE_CLIENT_RESET_DISCARD));
    CHECK_OK(cove_sync_config_set_client_reset(sync, COVE_CLIENT_RESET_RECOVER));

    /* NULL and handles of the wrong kind. */
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new("unused.cove", &config));
    CHECK_FAILS(cove_sync_config_set_long_poll(NULL, 1), COVE_ERR_INVALID_ARGUMENT, "sync is NULL");
    CHECK_FAILS(cove_sync_config_set_long_poll((cove_sync_config_t*)(void*)config, 1), COVE_ERR_INVALID_ARGUMENT,
                "sync is a cove_config_t, expected a cove_sync_config_t");
    CHECK_FAILS(cove_config_set_sync((cove_config_t*)(void*)sync, sync), COVE_ERR_INVALID_ARGUMENT,
                "config is a cove_sync_config_t, expected a cove_config_t");
    CHECK_FAILS(cove_config_set_sync(config, (cove_sync_config_t*)(void*)config), COVE_ERR_INVALID_ARGUMENT,
                "cove_config_set_sync: sync is a cove_config_t, expected a cove_sync_config_t");
    CHECK_FAILS(cove_config_set_sync(NULL, sync), COVE_ERR_INVALID_ARGUMENT, "config is NULL");
    cove_release(config);
    cove_release(sync);
}

/* What cove_open checks: the URL, the token, a file it can write, a schema that can sync. */
static void test_open_refuses_what_cannot_sync(void) {
    static const struct {
        const char* url;
        const char* token;
        const char* message;
    } BAD[] = {
        {"ftp://example.com", "t", "sync URL 'ftp://example.com': expected http:// or https:// and a host"},
        {"http://", "t", "expected http:// or https:// and a host"},
        {"example.com", "t", "expected http:// or https://"},
        {"http://example.com", "", "the sync token is empty"},
        {"http://example.com", "a b", "the sync token has characters a bearer token cannot have"},
    };
    cove_realm_t* realm = NULL;
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        cove_sync_config_t* sync = sync_config(BAD[i].url, BAD[i].token, false);
        CHECK_FAILS(open_with("bad.cove", SCHEMA, sync, &realm), COVE_ERR_INVALID_ARGUMENT, BAD[i].message);
        CHECK(realm == NULL);
        cove_release(sync);
    }

    cove_sync_config_t* sync = sync_config(UNREACHABLE, "t", false);
    CHECK_FAILS(open_with(NULL, SCHEMA, sync, &realm), COVE_ERR_INVALID_ARGUMENT, "needs a file it can write");
    CHECK_FAILS(open_with("no-key.cove", "{\"A\": {\"properties\": {\"x\": \"int\"}}}", sync, &realm),
                COVE_ERR_SCHEMA, "has no primary key");
    CHECK(realm == NULL);
    CHECK_FAILS(open_with("embedded.cove",
                          "{\"A\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"e\": \"E?\"}},"
                          " \"E\": {\"embedded\": true, \"properties\": {\"x\": \"int\"}}}",
                          sync, &realm),
                COVE_ERR_SCHEMA, "embedded");
    CHECK(realm == NULL);

    /* The configuration keeps a copy: releasing the sync configuration changes nothing. */
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new("copied.cove", &config));
    CHECK_OK(cove_config_set_schema_json(config, SCHEMA, 1));
    CHECK_OK(cove_config_set_sync(config, sync));
    cove_release(sync);
    CHECK_OK(cove_open(config, &realm));
    cove_sync_status_t status = status_of(realm);
    CHECK(status.state == COVE_SYNC_PAUSED);
    cove_release(realm);
    /* NULL takes sync out of the configuration again: the file opens without it. */
    CHECK_OK(cove_config_set_sync(config, NULL));
    CHECK_OK(cove_open(config, &realm));
    CHECK_FAILS(cove_sync_get_status(realm, &status), COVE_ERR_SYNC, "the realm does not sync");
    cove_release(realm);
    cove_release(config);
}

/* A realm without sync, and a frozen one, have no session. */
static void test_a_realm_that_does_not_sync(void) {
    cove_realm_t* realm = open_schema(NULL, SCHEMA, 1);
    cove_sync_status_t status;
    char* message = NULL;
    CHECK_FAILS(cove_sync_get_status(realm, &status), COVE_ERR_SYNC,
                "cove_sync_get_status: the realm does not sync (it was opened without cove_config_set_sync())");
    CHECK_FAILS(cove_sync_last_error(realm, &message), COVE_ERR_SYNC, "cove_sync_last_error: the realm does not sync");
    CHECK(message == NULL);
    CHECK_FAILS(cove_sync_wait_for_upload(realm, 1), COVE_ERR_SYNC, "cove_sync_wait_for_upload: the realm does not sync");
    CHECK_FAILS(cove_sync_wait_for_download(realm, 1), COVE_ERR_SYNC, "cove_sync_wait_for_download: the realm does not sync");
    CHECK_FAILS(cove_sync_pause(realm), COVE_ERR_SYNC, "cove_sync_pause: the realm does not sync");
    CHECK_FAILS(cove_sync_resume(realm), COVE_ERR_SYNC, "cove_sync_resume: the realm does not sync");
    CHECK_FAILS(cove_sync_get_status(NULL, &status), COVE_ERR_INVALID_ARGUMENT, "realm is NULL");
    CHECK_FAILS(cove_sync_get_status(realm, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_sync_last_error(realm, NULL), COVE_ERR_INVALID_ARGUMENT, "out_message is NULL");
    cove_release(realm);

    realm = open_synced("frozen.cove", UNREACHABLE, "t", false);
    cove_realm_t* frozen = NULL;
    CHECK_OK(cove_freeze(realm, &frozen));
    CHECK_FAILS(cove_sync_get_status(frozen, &status), COVE_ERR_SYNC, "the realm is frozen: its live realm has the sync session");
    cove_release(frozen);
    cove_release(realm);
}

/* A session that starts paused: waits time out, pause and resume, waits refused in a write. */
static void test_a_paused_session(void) {
    cove_realm_t* realm = open_synced("paused.cove", UNREACHABLE, "t", false);
    cove_sync_status_t status = status_of(realm);
    CHECK(status.state == COVE_SYNC_PAUSED);
    CHECK(status.connection == COVE_SYNC_DISCONNECTED);
    CHECK(status.local_version == 0 && status.uploaded_version == 0);
    CHECK(status.downloaded_version == 0 && status.server_version == 0);
    char* message = (char*)"unset";
    CHECK_OK(cove_sync_last_error(realm, &message));
    CHECK(message == NULL);

    create_person(realm, 1, "Ann");
    CHECK_FAILS(cove_sync_wait_for_upload(realm, 0), COVE_ERR_SYNC, "the upload did not finish within 0.0 s");
    CHECK_FAILS(cove_sync_wait_for_download(realm, 0.1), COVE_ERR_SYNC, "the download did not finish within 0.1 s");
    CHECK_FAILS(cove_sync_wait_for_upload(realm, -1), COVE_ERR_INVALID_ARGUMENT,
                "cove_sync_wait_for_upload: timeout_seconds -1.0: expected 0 or more, and finite");
    CHECK_FAILS(cove_sync_wait_for_download(realm, INFINITY), COVE_ERR_INVALID_ARGUMENT, "timeout_seconds inf");
    CHECK_FAILS(cove_sync_wait_for_upload(realm, NAN), COVE_ERR_INVALID_ARGUMENT, "timeout_seconds nan");
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_sync_wait_for_upload(realm, 1), COVE_ERR_IN_WRITE,
                "cove_sync_wait_for_upload: refused inside a write transaction");
    CHECK_FAILS(cove_sync_wait_for_download(realm, 1), COVE_ERR_IN_WRITE, "refused inside a write transaction");
    CHECK_OK(cove_cancel_write(realm));

    CHECK_OK(cove_sync_resume(realm));
    CHECK(status_of(realm).state == COVE_SYNC_ACTIVE);
    CHECK_OK(cove_sync_resume(realm));
    CHECK_OK(cove_sync_pause(realm));
    CHECK(status_of(realm).state == COVE_SYNC_PAUSED);
    CHECK_OK(cove_sync_pause(realm));
    CHECK(status_of(realm).state == COVE_SYNC_PAUSED);

    /* A second realm of the file shares the session. */
    cove_realm_t* second = open_synced("paused.cove", UNREACHABLE, "t", false);
    CHECK_OK(cove_sync_resume(second));
    CHECK(status_of(realm).state == COVE_SYNC_ACTIVE);
    CHECK_OK(cove_sync_pause(realm));
    CHECK(status_of(second).state == COVE_SYNC_PAUSED);
    cove_release(second);
    CHECK(status_of(realm).state == COVE_SYNC_PAUSED);
    cove_release(realm);
}

/* A server out of reach: the wait times out, the session stays active, the write stays queued. */
static void test_an_unreachable_server_keeps_writes_queued(void) {
    cove_realm_t* realm = open_synced("unreachable.cove", UNREACHABLE, "t", true);
    create_person(realm, 1, "Ann");
    CHECK_FAILS(cove_sync_wait_for_upload(realm, 0.5), COVE_ERR_SYNC, "the upload did not finish within 0.5 s");
    char* message = last_error_soon(realm);
    CHECK(contains(message, "cannot reach the sync server http://127.0.0.1:9"));
    if (!contains(message, "cannot reach")) fprintf(stderr, "  last error: %s\n", message ? message : "(none)");
    cove_free(message);
    cove_sync_status_t status = status_of(realm);
    CHECK(status.state == COVE_SYNC_ACTIVE);
    CHECK(status.connection != COVE_SYNC_CONNECTED);
    CHECK(status.uploaded_version == 0);
    cove_release(realm);

    /* The write is in the file, still queued: the next session counts it as not uploaded. */
    realm = open_synced("unreachable.cove", UNREACHABLE, "t", false);
    cove_value_t pk = int_value(1);
    cove_object_t* ann = NULL;
    CHECK_OK(cove_object_find(realm, "Person", &pk, &ann));
    CHECK(ann != NULL);
    cove_value_t name = null_value();
    if (ann != NULL) CHECK_OK(cove_object_get(ann, "name", &name));
    CHECK(is_string(&name, "Ann"));
    status = status_of(realm);
    CHECK(status.local_version == 1 && status.uploaded_version == 0);
    cove_release(ann);
    cove_release(realm);
}

/* The dog named `name` in `realm` (after a refresh), or NULL. */
static cove_object_t* find_dog(cove_realm_t* realm, const char* name) {
    cove_value_t pk = string_value(name);
    cove_object_t* dog = NULL;
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK_OK(cove_object_find(realm, "Dog", &pk, &dog));
    return dog;
}

static int64_t age_of(cove_object_t* dog) {
    cove_value_t age = null_value();
    CHECK_OK(cove_object_get(dog, "age", &age));
    CHECK(age.type == COVE_TYPE_INT);
    return age.type == COVE_TYPE_INT ? age.u.integer : -1;
}

/* Two files, of two users when the test command gives a second token, sync a dog both ways. */
static void test_two_files_sync_through_the_server(const char* url, const char* token, const char* other) {
    cove_realm_t* a = open_synced("a.cove", url, token, true);
    cove_realm_t* b = open_synced("b.cove", url, other, true);
    char name[64];
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    snprintf(name, sizeof name, "rex-c-%ld-%d", (long)time(NULL), rand());

    cove_value_t pk = string_value(name), age = int_value(3), tag = string_value(name);
    cove_object_t* rex = NULL;
    cove_list_t* tags = NULL;
    CHECK_OK(cove_begin_write(a));
    CHECK_OK(cove_object_create_with_primary_key(a, "Dog", &pk, &rex));
    CHECK_OK(cove_object_set(rex, "age", &age));
    CHECK_OK(cove_object_get_list(rex, "tags", &tags));
    CHECK_OK(cove_list_insert(tags, 0, &tag));
    CHECK_OK(cove_commit(a));
    cove_release(tags);
    cove_release(rex);

    CHECK_OK(cove_sync_wait_for_upload(a, 30));
    cove_sync_status_t status = status_of(a);
    CHECK(status.local_version >= 1);
    CHECK(status.uploaded_version == status.local_version);
    CHECK(status.state == COVE_SYNC_ACTIVE);
    CHECK(status.connection == COVE_SYNC_CONNECTED);
    CHECK_OK(cove_sync_wait_for_download(b, 30));
    cove_object_t* seen = find_dog(b, name);
    CHECK(seen != NULL);
    if (seen != NULL) {
        CHECK(age_of(seen) == 3);
        cove_list_t* seen_tags = NULL;
        size_t n = 0;
        cove_value_t first = null_value();
        CHECK_OK(cove_object_get_list(seen, "tags", &seen_tags));
        CHECK_OK(cove_list_size(seen_tags, &n));
        CHECK(n == 1);
        if (n == 1) CHECK_OK(cove_list_get(seen_tags, 0, &first));
        CHECK(is_string(&first, name));
        cove_release(seen_tags);

        /* And back. */
        cove_value_t older = int_value(4);
        CHECK_OK(cove_begin_write(b));
        CHECK_OK(cove_object_set(seen, "age", &older));
        CHECK_OK(cove_commit(b));
        cove_release(seen);
        CHECK_OK(cove_sync_wait_for_upload(b, 30));
        CHECK_OK(cove_sync_wait_for_download(a, 30));
        cove_object_t* back = find_dog(a, name);
        CHECK(back != NULL);
        if (back != NULL) CHECK(age_of(back) == 4);
        cove_release(back);
    }
    status = status_of(a);
    CHECK(status.state == COVE_SYNC_ACTIVE);
    CHECK(status.connection == COVE_SYNC_CONNECTED);
    CHECK(status.downloaded_version >= 1 && status.server_version >= status.downloaded_version);
    status = status_of(b);
    CHECK(status.uploaded_version == status.local_version);
    cove_release(b);
    cove_release(a);
}

/* A token the server does not accept stops the session with the server's refusal. */
static void test_a_wrong_token_stops_the_session(const char* url) {
    cove_realm_t* realm = open_synced("refused.cove", url, "not-a-token", true);
    create_person(realm, 1, "Ann");
    CHECK_FAILS(cove_sync_wait_for_upload(realm, 20), COVE_ERR_SYNC, "the sync session stopped");
    CHECK(contains(cove_last_error_message(), "refused"));
    cove_sync_status_t status = status_of(realm);
    CHECK(status.state == COVE_SYNC_INACTIVE);
    CHECK(status.connection == COVE_SYNC_DISCONNECTED);
    char* message = NULL;
    CHECK_OK(cove_sync_last_error(realm, &message));
    CHECK(contains(message, "unauthorized"));
    cove_free(message);
    /* A stopped session stays stopped. */
    CHECK_OK(cove_sync_resume(realm));
    CHECK(status_of(realm).state == COVE_SYNC_INACTIVE);
    CHECK_FAILS(cove_sync_wait_for_download(realm, 1), COVE_ERR_SYNC, "the sync session stopped");
    cove_release(realm);
}

int main(void) {
    test_setters_refuse_what_is_out_of_range();
    test_open_refuses_what_cannot_sync();
    test_a_realm_that_does_not_sync();
    test_a_paused_session();
    test_an_unreachable_server_keeps_writes_queued();
    const char* url = getenv("COVE_SYNC_TEST_URL");
    const char* token = getenv("COVE_SYNC_TEST_TOKEN");
    const char* other = getenv("COVE_SYNC_TEST_TOKEN_OTHER");
    if (url == NULL || token == NULL || *url == '\0' || *token == '\0') {
        printf("test_sync: FAIL: no sync server given (COVE_SYNC_TEST_URL, COVE_SYNC_TEST_TOKEN); the test "
               "command starts one (by hand: eval \"$(.ci/sync-server.sh start /tmp/cove-sync)\" first)\n");
        return 1;
    } else {
        test_two_files_sync_through_the_server(url, token, other != NULL && *other != '\0' ? other : token);
        test_a_wrong_token_stops_the_session(url);
    }
    return check_summary("test_sync");
}
