/* Free pages at the end of the file given back at commit: a file emptied of its objects shrinks
 * at the commits that follow (once no version in use needs the pages), its objects and space
 * reported right; a second handle open keeps the file's length until it closes. */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"

static const char* SCHEMA = "{\"Note\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"text\": \"string\"}}}";

static long long file_size(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void fill(cove_realm_t* realm, int from, int to) {
    static const char* names[] = {"id", "text"};
    char text[400];
    memset(text, 'n', sizeof text - 1);
    text[sizeof text - 1] = 0;
    CHECK_OK(cove_begin_write(realm));
    for (int i = from; i < to; i++) {
        cove_value_t v[2] = {int_value(i), string_value(text)};
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_create_with_values(realm, "Note", names, 2, v, &o));
        cove_release(o);
    }
    CHECK_OK(cove_commit(realm));
}

static void empty(cove_realm_t* realm, int from, int to) {
    CHECK_OK(cove_begin_write(realm));
    for (int i = from; i < to; i++) delete_by_key(realm, "Note", i);
    CHECK_OK(cove_commit(realm));
}

static void small_commits(cove_realm_t* realm, int n) {
    static int next = 1000000;
    for (int k = 0; k < n; k++) {
        CHECK_OK(cove_begin_write(realm));
        cove_value_t pk = int_value(next++);
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_create_with_primary_key(realm, "Note", &pk, &o));
        cove_release(o);
        CHECK_OK(cove_commit(realm));
    }
}

int main(void) {
    const char* path = "give-back.cove";
    remove(path);
    cove_realm_t* realm = open_schema(path, SCHEMA, 1);
    fill(realm, 0, 8000);
    long long full = file_size(path);
    CHECK(full > 3000000);
    empty(realm, 0, 8000);
    small_commits(realm, 3);
    long long emptied = file_size(path);
    CHECK(emptied > 0 && emptied < full / 8);
    uint32_t format = 0;
    uint64_t total = 0, used = 0;
    CHECK_OK(cove_file_space(realm, &format, &total, &used));
    CHECK((long long)total == emptied);
    CHECK(used <= total);
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 3);

    /* A second handle open: the pages come back but the file keeps its length. */
    cove_realm_t* other = open_schema(path, SCHEMA, 1);
    fill(realm, 0, 8000);
    long long refilled = file_size(path);
    empty(realm, 0, 8000);
    small_commits(realm, 3);
    CHECK(file_size(path) >= refilled);
    bool changed = false;
    CHECK_OK(cove_refresh(other, &changed));
    CHECK(query_count(other, "Note", "TRUEPREDICATE", NULL, 0) == 6);
    CHECK_OK(cove_close(other));
    cove_release(other);
    char* report = NULL;
    CHECK_OK(cove_verify(realm, &report));
    cove_free(report);
    CHECK_OK(cove_close(realm));
    cove_release(realm);

    /* Reopened: every object there, and the file writable and growing again. */
    realm = open_schema(path, SCHEMA, 1);
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 6);
    fill(realm, 0, 100);
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 106);
    CHECK_OK(cove_close(realm));
    cove_release(realm);
    remove(path);
    return check_summary("test_give_back");
}
