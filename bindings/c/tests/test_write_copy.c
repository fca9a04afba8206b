/* cove_write_copy: a compacted copy of the version a realm reads, in a new file that opens with
 * the same objects, links and collections; refused over an existing file, inside a write, for
 * a NULL path; a folder that does not exist is an I/O error. */
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Item\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "  \"tags\": \"string[]\", \"next\": \"Item?\"}}}";

static uint64_t used_bytes(cove_realm_t* realm) {
    uint64_t total = 0, used = 0;
    CHECK_OK(cove_file_space(realm, NULL, &total, &used));
    return used;
}

int main(void) {
    cove_realm_t* realm = open_schema("original.cove", SCHEMA, 1);
    CHECK_OK(cove_begin_write(realm));
    cove_object_t* previous = NULL;
    for (int i = 0; i < 3000; i++) {
        cove_value_t pk = {.type = COVE_TYPE_INT};
        pk.u.integer = i;
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_create_with_primary_key(realm, "Item", &pk, &o));
        cove_value_t name = {.type = COVE_TYPE_STRING};
        name.u.string.data = "an item with a name";
        name.u.string.size = strlen(name.u.string.data);
        CHECK_OK(cove_object_set(o, "name", &name));
        cove_list_t* tags = NULL;
        CHECK_OK(cove_object_get_list(o, "tags", &tags));
        for (int t = 0; t < (i % 200 == 0 ? 300 : 2); t++) CHECK_OK(cove_list_insert(tags, 0, &name));
        cove_release(tags);
        if (previous) {
            cove_value_t link;
            CHECK_OK(cove_object_to_link(previous, &link));
            CHECK_OK(cove_object_set(o, "next", &link));
            cove_release(previous);
        }
        previous = o;
    }
    cove_release(previous);
    CHECK_OK(cove_commit(realm));
    /* Half of them go: the original keeps their pages free, the copy does not. */
    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < 3000; i++) {
        if (i % 2 == 1 || i > 2000) delete_by_key(realm, "Item", i);
    }
    CHECK_OK(cove_commit(realm));

    CHECK_OK(cove_write_copy(realm, "copy.cove", NULL, 0));
    uint64_t original = used_bytes(realm);
    size_t count = query_count(realm, "Item", "TRUEPREDICATE", NULL, 0);

    cove_realm_t* copy = open_schema("copy.cove", SCHEMA, 1);
    CHECK(query_count(copy, "Item", "TRUEPREDICATE", NULL, 0) == count);
    CHECK(query_count(copy, "Item", "tags.@count == 300", NULL, 0) == 11); /* ids 0, 200, ..., 2000 */
    CHECK(query_count(copy, "Item", "next.id == id - 1", NULL, 0) == query_count(realm, "Item", "next.id == id - 1", NULL, 0));
    CHECK(used_bytes(copy) < original);
    char* report = NULL;
    CHECK_OK(cove_verify(copy, &report));
    CHECK(strstr(report, "index entries match") != NULL);
    cove_free(report);
    cove_release(copy);

    /* Bad input: named, nothing written. */
    CHECK_FAILS(cove_write_copy(realm, "copy.cove", NULL, 0), COVE_ERR_INVALID_ARGUMENT, "already exists");
    CHECK_FAILS(cove_write_copy(realm, NULL, NULL, 0), COVE_ERR_INVALID_ARGUMENT, "path is NULL");
    CHECK_FAILS(cove_write_copy(realm, "no/such/folder/copy.cove", NULL, 0), COVE_ERR_IO, "No such file or directory");
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_write_copy(realm, "inside.cove", NULL, 0), COVE_ERR_INVALID_ARGUMENT, "in a write transaction");
    CHECK_OK(cove_cancel_write(realm));
    FILE* f = fopen("inside.cove", "rb");
    CHECK(f == NULL);
    if (f) fclose(f);
    cove_release(realm);
    return check_summary("test_write_copy");
}
