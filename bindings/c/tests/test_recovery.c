/* cove_recovery(): a file whose last commit has a page that no longer holds what the commit
 * wrote opens at the version before, and the realm says which version it discarded, which it
 * opened and which page failed; an intact file says nothing. cove_file_space(): the format and
 * the bytes of the file's pages, and of those in use. Runs in an empty working directory. */
#include <cove.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define PAGE 4096

static const char* SCHEMA = "{\"Item\": {\"properties\": {\"n\": \"int\", \"text\": \"string\"}}}";

/* Adds items [from, to) in one write; returns the realm's version after it. */
static uint64_t add(const char* path, int from, int to) {
    cove_realm_t* realm = open_schema(path, SCHEMA, 1);
    bool discarded = true;
    CHECK_OK(cove_recovery(realm, &discarded, NULL, NULL, NULL));
    CHECK(!discarded);
    static const char* names[] = {"n", "text"};
    char text[32];
    CHECK_OK(cove_begin_write(realm));
    for (int i = from; i < to; i++) {
        snprintf(text, sizeof text, "item %d", i);
        cove_value_t values[2] = {int_value(i), string_value(text)};
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_create_with_values(realm, "Item", names, 2, values, &o));
        cove_release(o);
    }
    CHECK_OK(cove_commit(realm));
    uint64_t version = 0;
    CHECK_OK(cove_version(realm, &version));
    cove_release(realm);
    return version;
}

static unsigned char* slurp(const char* path, long* size) {
    FILE* f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char* bytes = malloc((size_t)*size);
    CHECK(fread(bytes, 1, (size_t)*size, f) == (size_t)*size);
    fclose(f);
    return bytes;
}

int main(void) {
    const char* path = "recovery.cove";
    uint64_t kept = add(path, 0, 100);
    long before_size = 0, after_size = 0;
    unsigned char* before = slurp(path, &before_size);
    uint64_t lost = add(path, 100, 2100);
    unsigned char* after = slurp(path, &after_size);

    /* Sixteen bytes of the last page the last commit wrote (not a meta slot) go bad. */
    long page = -1;
    for (long p = after_size / PAGE - 1; p > 0 && page < 0; p--) {
        if (p == 8) continue;
        static const unsigned char zero[PAGE];
        const unsigned char* was = (p + 1) * PAGE <= before_size ? before + p * PAGE : zero;
        if (memcmp(after + p * PAGE, was, PAGE) != 0) page = p;
    }
    CHECK(page > 0);
    for (int i = 0; i < 16; i++) after[page * PAGE + 2000 + i] ^= 0xA5;
    FILE* f = fopen(path, "r+b");
    CHECK(f != NULL && fwrite(after, 1, (size_t)after_size, f) == (size_t)after_size);
    fclose(f);

    cove_realm_t* realm = open_schema(path, SCHEMA, 1);
    bool discarded = false;
    uint64_t discarded_version = 0, opened_version = 0;
    char* reason = NULL;
    CHECK_OK(cove_recovery(realm, &discarded, &discarded_version, &opened_version, &reason));
    char expected[32];
    snprintf(expected, sizeof expected, "page %ld ", page);
    CHECK(discarded && discarded_version == lost && opened_version == kept);
    CHECK(reason != NULL && strstr(reason, expected) != NULL);
    if (reason) printf("recovery: %s\n", reason);
    cove_free(reason);
    CHECK(query_count(realm, "Item", "TRUEPREDICATE", NULL, 0) == 100);
    uint32_t format = 0;
    uint64_t total = 0, used = 0;
    CHECK_OK(cove_file_space(realm, &format, &total, &used));
    CHECK(format == 6 && total <= (uint64_t)after_size && used > 0 && used < total && total % PAGE == 0);
    CHECK_OK(cove_file_space(realm, NULL, NULL, NULL));
    CHECK_FAILS(cove_file_space(NULL, &format, NULL, NULL), COVE_ERR_INVALID_ARGUMENT, "realm");
    CHECK_FAILS(cove_recovery(realm, NULL, NULL, NULL, NULL), COVE_ERR_INVALID_ARGUMENT, "out_discarded");
    cove_release(realm);
    free(before);
    free(after);
    return check_summary("test_recovery");
}
