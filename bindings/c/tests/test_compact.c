/* cove_compact_file and cove_config_set_should_compact_on_launch: a sparse file compacted in
 * place when no other handle has it open, its objects the same; left alone while a realm has it
 * open or the callback declines; the callback's user data freed once. */
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"

static const char* SCHEMA = "{\"Item\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"text\": \"string\"}}}";

static long long file_size(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* 6,000 items with long texts, then all but 100 deleted. */
static void make_sparse(const char* path) {
    cove_realm_t* realm = open_schema(path, SCHEMA, 1);
    char text[260];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = 0;
    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < 6000; i++) {
        cove_value_t values[2] = {{.type = COVE_TYPE_INT}, {.type = COVE_TYPE_STRING}};
        values[0].u.integer = i;
        values[1].u.string.data = text;
        values[1].u.string.size = strlen(text);
        static const char* names[] = {"id", "text"};
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_create_with_values(realm, "Item", names, 2, values, &o));
        cove_release(o);
    }
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_begin_write(realm));
    for (int i = 100; i < 6000; i++) delete_by_key(realm, "Item", i);
    CHECK_OK(cove_commit(realm));
    cove_release(realm);
}

typedef struct {
    int calls;
    int frees;
    uint64_t total, used;
    bool answer;
} asked_t;

static bool should_compact(void* userdata, uint64_t total, uint64_t used) {
    asked_t* a = userdata;
    a->calls++;
    a->total = total;
    a->used = used;
    return a->answer;
}

static void free_asked(void* userdata) { ((asked_t*)userdata)->frees++; }

int main(void) {
    /* cove_compact_file */
    make_sparse("a.cove");
    long long before = file_size("a.cove");
    asked_t asked = {.answer = true};
    bool compacted = false;
    CHECK_OK(cove_compact_file("a.cove", NULL, 0, should_compact, &asked, &compacted));
    CHECK(compacted && asked.calls == 1);
    CHECK(asked.total <= (uint64_t)before && asked.used * 2 < asked.total);
    CHECK(file_size("a.cove") < before / 2);
    cove_realm_t* realm = open_schema("a.cove", SCHEMA, 1);
    CHECK(query_count(realm, "Item", "id < 100", NULL, 0) == 100);
    CHECK(query_count(realm, "Item", "TRUEPREDICATE", NULL, 0) == 100);
    /* Open elsewhere: not compacted, not asked. */
    asked.calls = 0;
    CHECK_OK(cove_compact_file("a.cove", NULL, 0, should_compact, &asked, &compacted));
    CHECK(!compacted && asked.calls == 0);
    cove_release(realm);
    /* Declined: left as it is. */
    make_sparse("b.cove");
    before = file_size("b.cove");
    asked = (asked_t){.answer = false};
    CHECK_OK(cove_compact_file("b.cove", NULL, 0, should_compact, &asked, &compacted));
    CHECK(!compacted && asked.calls == 1 && file_size("b.cove") == before);
    CHECK_FAILS(cove_compact_file(NULL, NULL, 0, NULL, NULL, &compacted), COVE_ERR_INVALID_ARGUMENT, "path is NULL");

    /* At launch, through a configuration. */
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new("b.cove", &config));
    CHECK_OK(cove_config_set_schema_json(config, SCHEMA, 1));
    asked = (asked_t){.answer = true};
    CHECK_OK(cove_config_set_should_compact_on_launch(config, should_compact, &asked, free_asked));
    CHECK_OK(cove_open(config, &realm));
    CHECK(asked.calls == 1 && file_size("b.cove") < before / 2);
    CHECK(query_count(realm, "Item", "TRUEPREDICATE", NULL, 0) == 100);
    cove_realm_t* second = NULL;
    CHECK_OK(cove_open(config, &second));   /* the file is open: not asked again */
    CHECK(asked.calls == 1);
    cove_release(second);
    cove_release(realm);
    CHECK(asked.frees == 0);
    cove_release(config);
    CHECK(asked.frees == 1);
    CHECK_FAILS(cove_config_set_should_compact_on_launch(NULL, NULL, NULL, NULL), COVE_ERR_INVALID_ARGUMENT, "config");
    return check_summary("test_compact");
}
