/* The first slice of the C API: versions, statuses and messages, configuration, opening and
 * reopening a file, the error cases of opening, transactions and versions, freezing, the
 * refusal of NULL and wrong-kind handles, the write lock across processes, and a process whose
 * address space is limited, and a file of an older format. Runs in a working directory
 * holding only that file (format4.cove). */
#define _POSIX_C_SOURCE 200809L /* kill() under -std=c11 */
#include <cove.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static void test_versions_and_statuses(void) {
    CHECK(cove_version_number() == COVE_VERSION_NUMBER);
    CHECK(strcmp(cove_version_string(), COVE_VERSION_STRING) == 0);
    CHECK(strcmp(cove_status_name(COVE_OK), "COVE_OK") == 0);
    CHECK(strcmp(cove_status_name(COVE_ERR_CORRUPT), "COVE_ERR_CORRUPT") == 0);
    CHECK(strcmp(cove_status_name(COVE_ERR_TOO_MANY_VERSIONS), "COVE_ERR_TOO_MANY_VERSIONS") == 0);
    CHECK(strcmp(cove_status_name(COVE_ERR_INTERNAL), "COVE_ERR_INTERNAL") == 0);
    CHECK(strcmp(cove_status_name(9999), "COVE_ERR_UNKNOWN") == 0);
    CHECK(strcmp(cove_status_name(-1), "COVE_ERR_UNKNOWN") == 0);
    CHECK(cove_last_error_message() != NULL);
}

static void test_bad_arguments(void) {
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    bool flag = false;
    CHECK_FAILS(cove_config_new("x.cove", NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_config_new("", &config), COVE_ERR_INVALID_ARGUMENT, "path is empty");
    CHECK_FAILS(cove_config_new("\xff\xfe.cove", &config), COVE_ERR_INVALID_ARGUMENT, "not valid UTF-8");
    CHECK_FAILS(cove_open(NULL, &realm), COVE_ERR_INVALID_ARGUMENT, "config is NULL");
    CHECK_FAILS(cove_begin_write(NULL), COVE_ERR_INVALID_ARGUMENT, "realm is NULL");
    CHECK_FAILS(cove_is_frozen(NULL, &flag), COVE_ERR_INVALID_ARGUMENT, "handle is NULL");

    CHECK_OK(cove_config_new("bad-args.cove", &config));
    CHECK_FAILS(cove_config_set_durability(config, 7), COVE_ERR_INVALID_ARGUMENT, "durability 7");
    CHECK_FAILS(cove_config_set_write_timeout_ms(config, -2), COVE_ERR_INVALID_ARGUMENT, "below -1");
    /* A configuration where a realm is expected is refused by kind. */
    CHECK_FAILS(cove_begin_write((cove_realm_t*)config), COVE_ERR_INVALID_ARGUMENT,
                "is a cove_config_t, expected a cove_realm_t");
    CHECK_OK(cove_open(config, &realm));
    CHECK_FAILS(cove_config_set_read_only((cove_config_t*)realm, true), COVE_ERR_INVALID_ARGUMENT,
                "expected a cove_config_t");
    CHECK_FAILS(cove_open(config, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    cove_release(realm);
    cove_release(config);
    cove_release(NULL);
}

static void test_create_and_reopen(void) {
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    uint64_t version = 0, first = 0;
    bool in_write = true;

    CHECK_OK(cove_config_new("slice.cove", &config));
    CHECK_OK(cove_open(config, &realm));
    CHECK(access("slice.cove", F_OK) == 0);
    CHECK(access("slice.cove.lock", F_OK) == 0);
    CHECK_OK(cove_version(realm, &first));
    CHECK_OK(cove_is_in_write(realm, &in_write));
    CHECK(!in_write);

    CHECK_FAILS(cove_commit(realm), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_begin_write(realm), COVE_ERR_ALREADY_IN_WRITE, "already in a write");
    CHECK_FAILS(cove_refresh(realm, NULL), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_is_in_write(realm, &in_write));
    CHECK(in_write);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_version(realm, &version));
    CHECK(version == first + 1);

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_cancel_write(realm));
    CHECK_OK(cove_version(realm, &version));
    CHECK(version == first + 1);

    char* report = NULL;
    CHECK_OK(cove_verify(realm, &report));
    CHECK(report != NULL && strlen(report) > 0);
    cove_free(report);

    CHECK_OK(cove_close(realm));
    CHECK_OK(cove_close(realm)); /* closing twice is fine */
    CHECK_FAILS(cove_begin_write(realm), COVE_ERR_CLOSED, "closed");
    cove_release(realm);

    /* Reopen: the committed version is still there. */
    CHECK_OK(cove_open(config, &realm));
    CHECK_OK(cove_version(realm, &version));
    CHECK(version == first + 1);
    cove_release(realm); /* releasing an open realm closes it */
    cove_release(config);
}

static void test_open_errors(void) {
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;

    FILE* f = fopen("not-cove.txt", "w");
    CHECK(f != NULL);
    for (int i = 0; i < 2000; i++) fputs("this is a text file, not a database\n", f);
    fclose(f);
    CHECK_OK(cove_config_new("not-cove.txt", &config));
    CHECK_FAILS(cove_open(config, &realm), COVE_ERR_CORRUPT, "not a Cove file");
    CHECK(realm == NULL);
    cove_release(config);

    CHECK_OK(cove_config_new("no/such/directory/x.cove", &config));
    CHECK_FAILS(cove_open(config, &realm), COVE_ERR_IO, "no/such/directory/x.cove");
    CHECK(realm == NULL);
    cove_release(config);

    CHECK_OK(cove_config_new("missing.cove", &config));
    CHECK_OK(cove_config_set_read_only(config, true));
    CHECK(cove_open(config, &realm) != COVE_OK);
    cove_release(config);

    /* A file whose meta slots (pages 0 and 8) carry a newer format version (bytes 8..12) is
     * refused with COVE_ERR_FORMAT, and left as it was. */
    CHECK_OK(cove_config_new("newer.cove", &config));
    CHECK_OK(cove_open(config, &realm));
    cove_release(realm);
    realm = NULL; /* out parameters are left untouched on failure */
    f = fopen("newer.cove", "r+b");
    CHECK(f != NULL);
    unsigned char newer[4] = {99, 0, 0, 0};
    for (long page = 0; page <= 8; page += 8) {
        CHECK(fseek(f, page * 4096 + 8, SEEK_SET) == 0);
        CHECK(fwrite(newer, 1, 4, f) == 4);
    }
    /* The whole file before the open, to compare with after it. */
    CHECK(fseek(f, 0, SEEK_END) == 0);
    long size = ftell(f);
    CHECK(size >= 9 * 4096);
    unsigned char* before = malloc((size_t)size);
    unsigned char* after = malloc((size_t)size);
    CHECK(before != NULL && after != NULL);
    CHECK(fseek(f, 0, SEEK_SET) == 0 && fread(before, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    CHECK_FAILS(cove_open(config, &realm), COVE_ERR_FORMAT, "format version 99");
    CHECK(realm == NULL);
    f = fopen("newer.cove", "rb");
    CHECK(f != NULL);
    CHECK(fseek(f, 0, SEEK_END) == 0 && ftell(f) == size);
    CHECK(fseek(f, 0, SEEK_SET) == 0 && fread(after, 1, (size_t)size, f) == (size_t)size);
    CHECK(memcmp(before, after, (size_t)size) == 0);
    fclose(f);
    free(before);
    free(after);
    cove_release(config);
}

static void test_versions_freeze_and_read_only(void) {
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    cove_realm_t* other = NULL;
    cove_realm_t* frozen = NULL;
    uint64_t version = 0, frozen_version = 0, count = 0;
    bool advanced = false, is_frozen = false;

    CHECK_OK(cove_config_new("versions.cove", &config));
    CHECK_OK(cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC));
    CHECK_OK(cove_open(config, &realm));
    CHECK_OK(cove_open(config, &other));

    CHECK_OK(cove_freeze(realm, &frozen));
    CHECK_OK(cove_is_frozen(frozen, &is_frozen));
    CHECK(is_frozen);
    CHECK_OK(cove_is_frozen(realm, &is_frozen));
    CHECK(!is_frozen);
    CHECK_OK(cove_version(frozen, &frozen_version));
    CHECK_FAILS(cove_begin_write(frozen), COVE_ERR_FROZEN, "frozen");
    CHECK_FAILS(cove_refresh(frozen, &advanced), COVE_ERR_FROZEN, "frozen");

    CHECK_OK(cove_begin_write(other));
    CHECK_FAILS(cove_freeze(other, &frozen), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_commit(other));

    /* The other handle's commit is seen after a refresh, not before. */
    CHECK_OK(cove_version(realm, &version));
    CHECK(version == frozen_version);
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK(advanced);
    CHECK_OK(cove_version(realm, &version));
    CHECK(version == frozen_version + 1);
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK(!advanced);

    /* The frozen realm still pins its version. */
    CHECK_OK(cove_version(frozen, &version));
    CHECK(version == frozen_version);
    CHECK_OK(cove_active_versions(realm, &count));
    CHECK(count >= 2);
    cove_release(frozen);
    CHECK_OK(cove_active_versions(realm, &count));
    CHECK(count == 1);

    CHECK_OK(cove_invalidate(realm));
    CHECK_OK(cove_version(realm, &version)); /* pins the newest again */
    CHECK(version == frozen_version + 1);
    cove_release(other);
    cove_release(realm);

    CHECK_OK(cove_config_set_read_only(config, true));
    CHECK_OK(cove_open(config, &realm));
    CHECK_FAILS(cove_begin_write(realm), COVE_ERR_READ_ONLY, "read-only");
    cove_release(realm);
    cove_release(config);
}

static void test_in_memory(void) {
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    uint64_t before = 0, after = 0;
    CHECK_OK(cove_config_new(NULL, &config));
    CHECK_OK(cove_open(config, &realm));
    CHECK_OK(cove_version(realm, &before));
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_version(realm, &after));
    CHECK(after == before + 1);
    /* Handles may be released in any order: the realm outlives its configuration. */
    cove_release(config);
    cove_release(realm);
}

/* A write transaction open in another process: a writer with a timeout fails with
 * COVE_ERR_LOCKED naming that process; once it is killed, the next write goes through and the
 * killed one's change is not there. Runs first, while this process has no other thread. */
static void test_writer_killed_in_another_process(void) {
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t child = fork();
    if (child == 0) {
        cove_config_t* config = NULL;
        cove_realm_t* realm = NULL;
        cove_object_t* object = NULL;
        if (cove_config_new("killed.cove", &config) != COVE_OK ||
            cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC) != COVE_OK ||
            cove_config_set_schema_json(config, "{\"Item\": {\"properties\": {\"n\": \"int\"}}}", 1) != COVE_OK ||
            cove_open(config, &realm) != COVE_OK || cove_begin_write(realm) != COVE_OK ||
            cove_object_create(realm, "Item", &object) != COVE_OK)
            _exit(2);
        char byte = 1;
        if (write(ready[1], &byte, 1) != 1) _exit(3);
        pause();
        _exit(0);
    }
    CHECK(child > 0);
    char byte = 0;
    CHECK(read(ready[0], &byte, 1) == 1);
    close(ready[0]);
    close(ready[1]);

    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    CHECK_OK(cove_config_new("killed.cove", &config));
    CHECK_OK(cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC));
    CHECK_OK(cove_config_set_write_timeout_ms(config, 50));
    CHECK_OK(cove_open(config, &realm));
    char pid[32];
    snprintf(pid, sizeof pid, "pid %d", (int)child);
    CHECK_FAILS(cove_begin_write(realm), COVE_ERR_LOCKED, pid);

    CHECK(kill(child, SIGKILL) == 0);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_commit(realm));
    cove_results_t* items = NULL;
    size_t count = 99;
    CHECK_OK(cove_query(realm, "Item", "TRUEPREDICATE", NULL, 0, &items));
    CHECK_OK(cove_results_count(items, &count));
    CHECK(count == 0);
    cove_release(items);
    cove_release(realm);
    cove_release(config);
}

/* A process limited to 16 GiB of address space (ulimit -v) cannot reserve the default 256 GiB
 * mapping range: the open takes the largest half, quarter, ... that fits, and the realm
 * creates, commits, verifies and reopens. In a child, so the limit stays there; runs before
 * this process has any thread. */
static void test_limited_address_space(void) {
    pid_t child = fork();
    if (child == 0) {
        struct rlimit limit = {(rlim_t)16 << 30, (rlim_t)16 << 30};
        cove_config_t* config = NULL;
        cove_realm_t* realm = NULL;
        cove_object_t* object = NULL;
        char* report = NULL;
        uint64_t version = 0;
        if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(2);
        if (cove_config_new("limited.cove", &config) != COVE_OK ||
            cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC) != COVE_OK ||
            cove_config_set_schema_json(config, "{\"Item\": {\"properties\": {\"n\": \"int\"}}}", 1) != COVE_OK ||
            cove_open(config, &realm) != COVE_OK)
            _exit(3);
        if (cove_begin_write(realm) != COVE_OK || cove_object_create(realm, "Item", &object) != COVE_OK ||
            cove_commit(realm) != COVE_OK || cove_verify(realm, &report) != COVE_OK)
            _exit(4);
        cove_free(report);
        cove_release(object);
        cove_release(realm);
        if (cove_open(config, &realm) != COVE_OK || cove_version(realm, &version) != COVE_OK || version < 2)
            _exit(5);
        cove_release(realm);
        cove_release(config);
        _exit(0);
    }
    CHECK(child > 0);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Whether page `page` of the file at `path` starts with the meta slots' magic. */
static bool page_holds_meta_slot(const char* path, long page) {
    FILE* f = fopen(path, "rb");
    CHECK(f != NULL);
    char head[8] = {0};
    CHECK(fseek(f, page * 4096, SEEK_SET) == 0);
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, "COVEDB\0\0", 8) == 0;
}

static void test_file_of_an_older_format(void) {
    /* format4.cove (run-tests.sh copies it here from the fuzzer's corpus) was written before
     * format 5: its meta slots are pages 0 and 1. It opens and verifies; a commit keeps the
     * layout (a new file's second slot is page 8), and what it wrote is there after a reopen. */
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    cove_object_t* counter = NULL;
    char* report = NULL;
    cove_value_t pk = {.type = COVE_TYPE_INT}, n = {.type = COVE_TYPE_INT}, out;
    pk.u.integer = 1000;
    n.u.integer = 7;
    CHECK(page_holds_meta_slot("format4.cove", 1));
    CHECK_OK(cove_config_new("format4.cove", &config));
    CHECK_OK(cove_open(config, &realm));
    CHECK_OK(cove_verify(realm, &report));
    cove_free(report);
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_with_primary_key(realm, "Counter", &pk, &counter));
    CHECK_OK(cove_object_set(counter, "n", &n));
    CHECK_OK(cove_commit(realm));
    cove_release(counter);
    cove_release(realm);
    CHECK(page_holds_meta_slot("format4.cove", 1));
    CHECK(!page_holds_meta_slot("format4.cove", 8));

    CHECK_OK(cove_open(config, &realm));
    CHECK_OK(cove_object_find(realm, "Counter", &pk, &counter));
    CHECK(counter != NULL);
    CHECK_OK(cove_object_get(counter, "n", &out));
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 7);
    CHECK_OK(cove_verify(realm, &report));
    cove_free(report);
    cove_release(counter);
    cove_release(realm);
    cove_release(config);

    /* A new file's slots are pages 0 and 8. */
    CHECK_OK(cove_config_new("new.cove", &config));
    CHECK_OK(cove_open(config, &realm));
    cove_release(realm);
    cove_release(config);
    CHECK(page_holds_meta_slot("new.cove", 0) && page_holds_meta_slot("new.cove", 8));
    CHECK(!page_holds_meta_slot("new.cove", 1));
}

/* The schema version of a file, read without a schema and without changing the file. */
static void test_schema_version_at(void) {
    cove_realm_t* realm = NULL;
    uint64_t version = 99;
    CHECK_FAILS(cove_schema_version_at("missing.cove", &version), COVE_ERR_NOT_FOUND, "no file");
    CHECK(version == 99);
    CHECK_FAILS(cove_schema_version_at(NULL, &version), COVE_ERR_INVALID_ARGUMENT, "path");
    CHECK_FAILS(cove_schema_version_at("missing.cove", NULL), COVE_ERR_INVALID_ARGUMENT, "out_version");
    realm = open_schema("versioned.cove", "{\"A\": {\"properties\": {\"x\": \"int\"}}}", 5);
    CHECK_OK(cove_schema_version_at("versioned.cove", &version));
    CHECK(version == 5);
    cove_release(realm);
    CHECK_OK(cove_schema_version_at("versioned.cove", &version));
    CHECK(version == 5);
}

/* A second realm of a file asking for the write lock on the thread that holds it through the
 * first fails at once instead of waiting for itself. */
static void test_second_realm_on_the_writing_thread(void) {
    const char* schema = "{\"A\": {\"properties\": {\"x\": \"int\"}}}";
    cove_realm_t* first = open_schema("twice.cove", schema, 1);
    cove_realm_t* second = open_schema("twice.cove", schema, 1);
    CHECK_OK(cove_begin_write(first));
    CHECK_FAILS(cove_begin_write(second), COVE_ERR_LOCKED, "this thread already holds the write lock");
    CHECK_OK(cove_commit(first));
    CHECK_OK(cove_begin_write(second));
    CHECK_OK(cove_commit(second));
    cove_release(second);
    cove_release(first);
}

int main(void) {
    test_limited_address_space();
    test_writer_killed_in_another_process();
    test_versions_and_statuses();
    test_bad_arguments();
    test_create_and_reopen();
    test_open_errors();
    test_versions_freeze_and_read_only();
    test_in_memory();
    test_file_of_an_older_format();
    test_schema_version_at();
    test_second_realm_on_the_writing_thread();
    return check_summary("test_realm");
}
