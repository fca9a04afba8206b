/* Encrypted files through the C API: cove_config_set_encryption_key; nothing of the data in the
 * file in the clear; a wrong key, no key, and a key for a plain file fail with
 * COVE_ERR_DECRYPTION naming the problem; a key of another size is refused; a changed byte of
 * a page is COVE_ERR_CORRUPT, never other data; cove_write_copy adds, changes and removes the
 * key; cove_compact_file and cove_recover_file take it. */
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Note\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"text\": \"string\"}}}";

static uint8_t KEY[64];
static uint8_t OTHER[64];

/* Opens `path` with `key` (NULL: none); the status of cove_open, the realm in *out. */
static cove_status_t open_with(const char* path, const uint8_t* key, cove_realm_t** out) {
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new(path, &config));
    CHECK_OK(cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC));
    CHECK_OK(cove_config_set_schema_json(config, SCHEMA, 1));
    CHECK_OK(cove_config_set_encryption_key(config, key, key ? 64 : 0));
    *out = NULL;
    cove_status_t status = cove_open(config, out);
    cove_release(config);
    return status;
}

static void fill(cove_realm_t* realm, int n) {
    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < n; i++) {
        cove_value_t pk = int_value(i);
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_create_with_primary_key(realm, "Note", &pk, &o));
        char text[64];
        snprintf(text, sizeof text, "confidential note number %d", i);
        cove_value_t v = string_value(text);
        CHECK_OK(cove_object_set(o, "text", &v));
        cove_release(o);
    }
    CHECK_OK(cove_commit(realm));
}

/* Whether the file at `path` holds `needle` anywhere. */
static int file_contains(const char* path, const char* needle) {
    FILE* f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* bytes = malloc((size_t)size);
    size_t n = fread(bytes, 1, (size_t)size, f);
    fclose(f);
    size_t len = strlen(needle);
    int found = 0;
    for (size_t i = 0; i + len <= n && !found; i++) found = memcmp(bytes + i, needle, len) == 0;
    free(bytes);
    return found;
}

static void flip_byte(const char* path, long at) {
    FILE* f = fopen(path, "r+b");
    CHECK(f != NULL);
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
}

int main(void) {
    for (int i = 0; i < 64; i++) {
        KEY[i] = (uint8_t)(i * 7 + 1);
        OTHER[i] = (uint8_t)(i * 13 + 5);
    }
    cove_realm_t* realm = NULL;
    CHECK_OK(open_with("sealed.cove", KEY, &realm));
    fill(realm, 500);
    CHECK(query_count(realm, "Note", "text == 'confidential note number 42'", NULL, 0) == 1);
    cove_release(realm);
    CHECK(!file_contains("sealed.cove", "confidential"));
    CHECK(!file_contains("sealed.cove.lock", "confidential"));

    /* Reopened with the key: everything reads. */
    CHECK_OK(open_with("sealed.cove", KEY, &realm));
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 500);
    CHECK_OK(cove_verify(realm, NULL));

    /* Copies: re-keyed, plain, and the plain copy encrypted again. */
    CHECK_OK(cove_write_copy(realm, "rekeyed.cove", OTHER, 64));
    CHECK_OK(cove_write_copy(realm, "plain.cove", NULL, 0));
    CHECK_FAILS(cove_write_copy(realm, "short.cove", KEY, 32), COVE_ERR_INVALID_ARGUMENT, "64 bytes, not 32");
    CHECK_FAILS(cove_write_copy(realm, "null.cove", NULL, 64), COVE_ERR_INVALID_ARGUMENT, "key is NULL");
    cove_release(realm);
    CHECK(file_contains("plain.cove", "confidential"));
    CHECK(!file_contains("rekeyed.cove", "confidential"));
    CHECK_OK(open_with("rekeyed.cove", OTHER, &realm));
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 500);
    cove_release(realm);
    CHECK_OK(open_with("plain.cove", NULL, &realm));
    CHECK_OK(cove_write_copy(realm, "sealed-again.cove", KEY, 64));
    cove_release(realm);
    CHECK_OK(open_with("sealed-again.cove", KEY, &realm));
    CHECK(query_count(realm, "Note", "text == 'confidential note number 7'", NULL, 0) == 1);
    cove_release(realm);

    /* The wrong key, no key, a key for a plain file: refused by name, nothing changed. */
    CHECK_FAILS(open_with("sealed.cove", OTHER, &realm), COVE_ERR_DECRYPTION, "does not open");
    CHECK(realm == NULL);
    CHECK_FAILS(open_with("sealed.cove", NULL, &realm), COVE_ERR_DECRYPTION, "is encrypted");
    CHECK_FAILS(open_with("plain.cove", KEY, &realm), COVE_ERR_DECRYPTION, "not encrypted");
    CHECK(strcmp(cove_status_name(COVE_ERR_DECRYPTION), "COVE_ERR_DECRYPTION") == 0);
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new("x.cove", &config));
    CHECK_FAILS(cove_config_set_encryption_key(config, KEY, 63), COVE_ERR_INVALID_ARGUMENT, "64 bytes, not 63");
    CHECK_FAILS(cove_config_set_encryption_key(NULL, KEY, 64), COVE_ERR_INVALID_ARGUMENT, "config");
    cove_release(config);
    CHECK_OK(open_with("sealed.cove", KEY, &realm));
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 500);
    cove_release(realm);

    /* Compaction and salvage take the key. */
    bool compacted = false;
    CHECK_FAILS(cove_compact_file("sealed.cove", NULL, 0, NULL, NULL, &compacted), COVE_ERR_DECRYPTION, "is encrypted");
    CHECK_OK(cove_compact_file("sealed.cove", KEY, 64, NULL, NULL, &compacted));
    CHECK(compacted);
    CHECK(!file_contains("sealed.cove", "confidential"));
    char* json = NULL;
    CHECK_FAILS(cove_recover_file("sealed.cove", "saved.cove", OTHER, 64, &json), COVE_ERR_DECRYPTION, "does not open");
    CHECK_OK(cove_recover_file("sealed.cove", "saved.cove", KEY, 64, &json));
    CHECK(json != NULL && strstr(json, "\"complete\":true") != NULL);
    cove_free(json);
    CHECK(!file_contains("saved.cove", "confidential"));
    CHECK_OK(open_with("saved.cove", KEY, &realm));
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 500);
    cove_release(realm);
    CHECK_OK(open_with("sealed.cove", KEY, &realm));
    cove_release(realm);

    /* A byte changed in the middle of each page of the compacted file in turn: the open falls
     * back to the version before, or reading fails with COVE_ERR_CORRUPT, or (a page not in
     * use) everything reads as written; never other data. */
    FILE* f = fopen("sealed.cove", "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char* original = malloc((size_t)size);
    CHECK(fread(original, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    int refused = 0, intact = 0, older = 0;
    for (long page = 0; page < size / 4160; page++) {
        remove("changed.cove");
        remove("changed.cove.lock");
        FILE* out = fopen("changed.cove", "wb");
        fwrite(original, 1, (size_t)size, out);
        fclose(out);
        flip_byte("changed.cove", page * 4160 + 1000);
        cove_status_t status = open_with("changed.cove", KEY, &realm);
        if (status != COVE_OK) {
            CHECK(status == COVE_ERR_CORRUPT);
            refused++;
            continue;
        }
        cove_results_t* all = NULL;
        size_t n = 0;
        cove_status_t q = cove_query(realm, "Note", "text BEGINSWITH 'confidential'", NULL, 0, &all);
        if (q == COVE_OK) q = cove_results_count(all, &n);
        if (q == COVE_OK) q = cove_verify(realm, NULL);
        if (q == COVE_OK) {
            /* the data written, or the version before the compacted copy's one commit (empty) */
            CHECK(n == 500 || n == 0);
            if (n == 500) intact++;
            else older++;
        } else {
            CHECK(q == COVE_ERR_CORRUPT);
            CHECK(strstr(cove_last_error_message(), "authentication") != NULL);
            refused++;
        }
        cove_release(all);
        cove_release(realm);
    }
    free(original);
    printf("changed pages: %d refused, %d opened the version before, %d read as written\n", refused, older, intact);
    CHECK(refused + older > 0);
    return check_summary("test_encryption");
}
