/* cove_recover_file: an undamaged file salvages completely; a file with one cluster page damaged
 * on disk salvages into a new file that verifies, holds every other object, and whose JSON report
 * names the page and the losses; refused for NULL paths, the same path twice, an existing new
 * file, and a file that is not a Cove file (nothing written). */
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Item\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "  \"next\": \"Item?\"}}}";

/* The number after `"name":` in the JSON text `json`, or -1. */
static long member(const char* json, const char* name) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char* at = strstr(json, key);
    return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

/* The second page of the file whose page type is a table's cluster page (5), or 0. */
static long second_cluster_page(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char page[4096];
    long found = 0, seen = 0;
    for (long n = 0; fread(page, 1, sizeof page, f) == sizeof page; n++) {
        if (n != 0 && n != 8 && page[4] == 5 && ++seen == 2) {
            found = n;
            break;
        }
    }
    fclose(f);
    return found;
}

/* Flips sixteen bytes in the middle of page `n`. */
static void damage(const char* path, long n) {
    FILE* f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    unsigned char bytes[16];
    CHECK(fseek(f, n * 4096 + 2000, SEEK_SET) == 0 && fread(bytes, 1, 16, f) == 16);
    for (int i = 0; i < 16; i++) bytes[i] ^= 0xA5;
    CHECK(fseek(f, n * 4096 + 2000, SEEK_SET) == 0 && fwrite(bytes, 1, 16, f) == 16);
    fclose(f);
}

static size_t count_and_verify(const char* path) {
    cove_realm_t* realm = open_schema(path, SCHEMA, 1);
    size_t n = query_count(realm, "Item", "TRUEPREDICATE", NULL, 0);
    char* report = NULL;
    CHECK_OK(cove_verify(realm, &report));
    CHECK(report && strstr(report, "backlink entries match") != NULL);
    cove_free(report);
    cove_release(realm);
    return n;
}

int main(void) {
    /* One commit: every cluster page in the file is one the newest version reads. */
    cove_realm_t* realm = open_schema("items.cove", SCHEMA, 1);
    CHECK_OK(cove_begin_write(realm));
    static cove_object_t* items[3000];
    cove_value_t name = string_value("an item with a name long enough to fill pages");
    for (int i = 0; i < 3000; i++) {
        cove_value_t pk = int_value(i);
        CHECK_OK(cove_object_create_with_primary_key(realm, "Item", &pk, &items[i]));
        CHECK_OK(cove_object_set(items[i], "name", &name));
    }
    /* Each item links to the one before it. */
    for (int i = 1; i < 3000; i++) {
        cove_value_t link = link_to(items[i - 1]);
        CHECK_OK(cove_object_set(items[i], "next", &link));
    }
    for (int i = 0; i < 3000; i++) cove_release(items[i]);
    CHECK_OK(cove_commit(realm));
    cove_release(realm);

    /* Undamaged: everything. */
    char* json = NULL;
    CHECK_OK(cove_recover_file("items.cove", "all.cove", NULL, 0, &json));
    CHECK(json && strstr(json, "\"complete\":true") && member(json, "objects_copied") == 3000 && member(json, "objects_lost") == 0);
    cove_free(json);
    CHECK(count_and_verify("all.cove") == 3000);

    /* Refused, named, nothing written. */
    json = (char*)"untouched";
    CHECK_FAILS(cove_recover_file(NULL, "x.cove", NULL, 0, &json), COVE_ERR_INVALID_ARGUMENT, "damaged_path is NULL");
    CHECK(json == NULL);
    CHECK_FAILS(cove_recover_file("items.cove", NULL, NULL, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "out_path is NULL");
    CHECK_FAILS(cove_recover_file("items.cove", "items.cove", NULL, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "damaged file itself");
    CHECK_FAILS(cove_recover_file("items.cove", "all.cove", NULL, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "already exists");
    CHECK_FAILS(cove_recover_file("missing.cove", "x.cove", NULL, 0, NULL), COVE_ERR_IO, "missing.cove");
    FILE* text = fopen("text.cove", "wb");
    for (int i = 0; i < 600; i++) fputs("not a cove file\n", text);
    fclose(text);
    CHECK_FAILS(cove_recover_file("text.cove", "x.cove", NULL, 0, NULL), COVE_ERR_CORRUPT, "not a Cove file");
    CHECK(fopen("x.cove", "rb") == NULL);

    /* One cluster page damaged: its objects are lost, the rest copied, the one link to them
     * from the object after them dropped. */
    long page = second_cluster_page("items.cove");
    CHECK(page > 0);
    damage("items.cove", page);
    CHECK_OK(cove_recover_file("items.cove", "part.cove", NULL, 0, &json));
    CHECK(json && strstr(json, "\"complete\":false"));
    char pages[64];
    snprintf(pages, sizeof pages, "\"damaged_pages\":[%ld]", page);
    CHECK(json && strstr(json, pages));
    long lost = json ? member(json, "objects_lost") : -1;
    CHECK(lost > 0 && lost < 3000);
    CHECK(json && member(json, "objects_copied") == 3000 - lost);
    CHECK(json && member(json, "links_dropped") == 1);
    if (json) printf("%s\n", json);
    cove_free(json);
    CHECK(count_and_verify("part.cove") == (size_t)(3000 - lost));
    /* The report may be left out. */
    CHECK_OK(cove_recover_file("items.cove", "part2.cove", NULL, 0, NULL));
    CHECK(count_and_verify("part2.cove") == (size_t)(3000 - lost));
    return check_summary("test_recover");
}
