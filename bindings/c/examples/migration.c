/* Example: a migration. Version 1 of a to-do schema keeps `title` and a bool `done`; version 2
 * renames `title` to `text` and replaces `done` by a string `status` ("open" or "done"). The
 * program writes a file at version 1, reopens it at version 2 with a migration callback that
 * renames the property and converts each task, and checks the tasks afterwards.
 * Exits 0 only when every task came through with its text and the right status.
 * Build: cc migration.c $(pkg-config --cflags --libs cove) */
#include <cove.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(call)                                                                       \
    do {                                                                                \
        cove_status_t status_ = (call);                                                 \
        if (status_ != COVE_OK) {                                                       \
            fprintf(stderr, "%s failed: %s: %s\n", #call, cove_status_name(status_),    \
                    cove_last_error_message());                                         \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static const char* PATH = "migration.cove";
static const char* V1 =
    "{\"Task\": {\"properties\": {\"title\": \"string\", \"done\": \"bool\"}}}";
static const char* V2 =
    "{\"Task\": {\"properties\": {\"text\": \"string\", \"status\": \"string\"},"
    "            \"indexed\": [\"status\"]}}";

static cove_value_t string_value(const char* s) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_STRING;
    v.u.string.data = s;
    v.u.string.size = strlen(s);
    return v;
}

static cove_status_t open_at(const char* schema, uint64_t version, cove_migration_fn migration,
                             cove_realm_t** out) {
    cove_config_t* config = NULL;
    TRY(cove_config_new(PATH, &config));
    TRY(cove_config_set_schema_json(config, schema, version));
    if (migration) TRY(cove_config_set_migration(config, migration, NULL, NULL));
    cove_status_t status = cove_open(config, out);
    cove_release(config);
    return status;
}

/* Called for each task of the old file: reads `done` from the old object, sets `status` on the
 * new one. Returning false would stop the enumeration and fail the migration. */
static bool convert_task(void* userdata, cove_object_t* old_task, cove_object_t* new_task) {
    (void)userdata;
    cove_value_t done;
    if (cove_object_get(old_task, "done", &done) != COVE_OK) return false;
    cove_value_t status = string_value(done.u.boolean ? "done" : "open");
    return cove_object_set(new_task, "status", &status) == COVE_OK;
}

/* The migration callback: runs inside cove_open(), in the write that also stores the new schema. */
static bool migrate(void* userdata, cove_migration_t* migration) {
    (void)userdata;
    uint64_t old_version = 0;
    if (cove_migration_old_version(migration, &old_version) != COVE_OK) return false;
    printf("migrating from schema version %llu to 2\n", (unsigned long long)old_version);
    if (cove_migration_rename_property(migration, "Task", "title", "text") != COVE_OK) return false;
    return cove_migration_enumerate(migration, "Task", convert_task, NULL) == COVE_OK;
}

int main(void) {
    remove(PATH);
    cove_realm_t* realm = NULL;

    /* Version 1: three tasks, one of them done. */
    TRY(open_at(V1, 1, NULL, &realm));
    static const char* titles[] = {"buy milk", "file taxes", "fix the bike"};
    const char* names[] = {"title", "done"};
    TRY(cove_begin_write(realm));
    for (int i = 0; i < 3; i++) {
        cove_value_t values[2];
        values[0] = string_value(titles[i]);
        memset(&values[1], 0, sizeof values[1]);
        values[1].type = COVE_TYPE_BOOL;
        values[1].u.boolean = i == 2;
        cove_object_t* task = NULL;
        TRY(cove_object_create_with_values(realm, "Task", names, 2, values, &task));
        cove_release(task);
    }
    TRY(cove_commit(realm));
    cove_release(realm);
    realm = NULL;

    /* Version 2 without a migration: the change is not additive, so the open is refused and the
     * file stays as it was. */
    cove_status_t refused = open_at(V2, 2, NULL, &realm);
    printf("without a migration: %s\n", cove_status_name(refused));
    if (refused != COVE_ERR_MIGRATION_REQUIRED) return 1;

    /* Version 2 with the migration. */
    TRY(open_at(V2, 2, migrate, &realm));
    cove_results_t* open_tasks = NULL;
    cove_results_t* done_tasks = NULL;
    size_t n_open = 0, n_done = 0;
    TRY(cove_query(realm, "Task", "status == 'open' SORT(text ASC)", NULL, 0, &open_tasks));
    TRY(cove_query(realm, "Task", "status == 'done'", NULL, 0, &done_tasks));
    TRY(cove_results_count(open_tasks, &n_open));
    TRY(cove_results_count(done_tasks, &n_done));
    int ok = n_open == 2 && n_done == 1;
    for (size_t i = 0; i < n_open; i++) {
        cove_object_t* task = NULL;
        cove_value_t text;
        TRY(cove_results_get_object(open_tasks, i, &task));
        TRY(cove_object_get(task, "text", &text));
        printf("open: %.*s\n", (int)text.u.string.size, text.u.string.data);
        ok = ok && text.u.string.size == strlen(titles[i]) && memcmp(text.u.string.data, titles[i], text.u.string.size) == 0;
        cove_release(task);
    }
    printf("done: %zu task(s)\n", n_done);

    cove_release(open_tasks);
    cove_release(done_tasks);
    cove_release(realm);
    remove(PATH);
    remove("migration.cove.lock");
    if (!ok) {
        fprintf(stderr, "migration: the tasks are not the expected ones\n");
        return 1;
    }
    return 0;
}
