/* Closed realms through the C API: every public function, called on a closed realm or on a
 * handle made from one (objects, lists, sets, maps, results, sectioned results, sections,
 * projections), answers COVE_ERR_CLOSED with a message naming the call; the few that do not take
 * such a handle, or that answer for a closed realm by design, are listed with the reason. The
 * list of every exported function (cove.exports, copied into the working directory) is checked
 * against the table, so a function added without a case here fails the test. The table runs for
 * a live realm and for a frozen one. Also: links to no object and of deleted objects. */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Person\": {\"primaryKey\": \"name\", \"properties\": {\"name\": \"string\", \"age\": \"int\","
    "   \"dogs\": \"Dog[]\", \"tags\": \"string<>\", \"scores\": \"double{}\", \"pet\": \"Dog?\","
    "   \"toy\": \"Toy?\", \"toys\": \"Toy[]\", \"toyBox\": \"Toy{}\"}},"
    " \"Dog\": {\"properties\": {\"name\": \"string\", \"owners\": \"@links(Person.dogs)\"}},"
    " \"Toy\": {\"embedded\": true, \"properties\": {\"brand\": \"string\"}}}";

/* The handles of one realm, made while it was open. */
typedef struct {
    cove_realm_t* realm;
    cove_object_t* person;
    cove_object_t* dog;
    cove_list_t* list;   /* Person.dogs */
    cove_list_t* toys;   /* Person.toys */
    cove_set_t* set;     /* Person.tags */
    cove_map_t* map;     /* Person.scores */
    cove_map_t* toy_box; /* Person.toyBox */
    cove_results_t* results;
    cove_sectioned_results_t* sectioned;
    cove_section_t* section;
    cove_projection_t* projection;
    cove_token_t* token; /* NULL for a frozen realm, which cannot be observed */
    cove_value_t link;   /* to the dog */
    cove_value_t pk;
    cove_value_t number;
} fixture_t;

/* Where the calls write; a correct library writes nothing here. */
typedef struct {
    bool flag;
    size_t n;
    uint64_t u64;
    int64_t i64;
    uint32_t u32;
    int fd;
    char* text;
    cove_value_t value;
    cove_value_t values[4];
    int64_t keys[4];
    cove_string_t key;
    cove_realm_t* realm;
    cove_object_t* object;
    cove_list_t* list;
    cove_set_t* set;
    cove_map_t* map;
    cove_results_t* results;
    cove_sectioned_results_t* sectioned;
    cove_section_t* section;
    cove_projection_t* projection;
    cove_token_t* token;
    cove_sync_status_t sync_status;
    int32_t i32;
    cove_subscription_t subscription;
} outs_t;

/* Callbacks that are never called: registering on a closed realm is refused. */
#define IGNORE_CHANGES(name, changes_type)                                                \
    static void name(void* userdata, const changes_type* changes) {                       \
        (void)userdata;                                                                   \
        (void)changes;                                                                    \
    }
IGNORE_CHANGES(on_collection, cove_collection_changes_t)
IGNORE_CHANGES(on_map, cove_map_changes_t)
IGNORE_CHANGES(on_object, cove_object_changes_t)
IGNORE_CHANGES(on_sectioned, cove_sectioned_changes_t)

/* Never called either: subscribing on a closed realm is refused. */
static void on_subscribed(void* userdata, cove_status_t status, const char* message) {
    (void)userdata;
    (void)status;
    (void)message;
}
static cove_status_t first_letter(void* userdata, cove_object_t* object, cove_value_t* out_key) {
    (void)userdata;
    (void)object;
    *out_key = string_value("a");
    return COVE_OK;
}

static const char* const NAMES[] = {"n"};
static const char* const PATHS[] = {"name"};
static const char* const FIELDS[] = {"name", "age"};

/* Every function that takes a realm or a handle made from one: (function, variant, call). Each
 * call must give COVE_ERR_CLOSED with a message naming the function. The variant tells apart
 * the calls of one function on several kinds of handle. */
#define CLOSED_CALLS(X)                                                                               \
    X(cove_is_frozen, realm, cove_is_frozen(f->realm, &o->flag))                                      \
    X(cove_is_frozen, object, cove_is_frozen(f->person, &o->flag))                                    \
    X(cove_is_frozen, list, cove_is_frozen(f->list, &o->flag))                                        \
    X(cove_is_frozen, set, cove_is_frozen(f->set, &o->flag))                                          \
    X(cove_is_frozen, map, cove_is_frozen(f->map, &o->flag))                                          \
    X(cove_is_frozen, results, cove_is_frozen(f->results, &o->flag))                                  \
    X(cove_is_frozen, sectioned, cove_is_frozen(f->sectioned, &o->flag))                              \
    X(cove_is_frozen, section, cove_is_frozen(f->section, &o->flag))                                  \
    X(cove_is_frozen, projection, cove_is_frozen(f->projection, &o->flag))                            \
    X(cove_begin_write, , cove_begin_write(f->realm))                                                 \
    X(cove_commit, , cove_commit(f->realm))                                                           \
    X(cove_cancel_write, , cove_cancel_write(f->realm))                                               \
    X(cove_is_in_write, , cove_is_in_write(f->realm, &o->flag))                                       \
    X(cove_refresh, , cove_refresh(f->realm, &o->flag))                                               \
    X(cove_invalidate, , cove_invalidate(f->realm))                                                   \
    X(cove_freeze, , cove_freeze(f->realm, &o->realm))                                                \
    X(cove_version, , cove_version(f->realm, &o->u64))                                                \
    X(cove_active_versions, , cove_active_versions(f->realm, &o->u64))                                \
    X(cove_recovery, , cove_recovery(f->realm, &o->flag, &o->u64, &o->u64, &o->text))                 \
    X(cove_file_space, , cove_file_space(f->realm, &o->u32, &o->u64, &o->u64))                        \
    X(cove_schema_json, , cove_schema_json(f->realm, &o->text))                                       \
    X(cove_class_key, , cove_class_key(f->realm, "Person", &o->u32))                                  \
    X(cove_property_key, , cove_property_key(f->realm, "Person", "age", &o->i64))                     \
    X(cove_object_create, , cove_object_create(f->realm, "Dog", &o->object))                          \
    X(cove_object_create_with_primary_key, ,                                                          \
      cove_object_create_with_primary_key(f->realm, "Person", &f->pk, &o->object))                    \
    X(cove_object_create_or_update, , cove_object_create_or_update(f->realm, "Person", &f->pk, &o->object)) \
    X(cove_object_create_many, ,                                                                      \
      cove_object_create_many(f->realm, "Person", FIELDS, 2, o->values, 1, false, &o->n))             \
    X(cove_object_create_with_values, ,                                                               \
      cove_object_create_with_values(f->realm, "Person", FIELDS, 2, o->values, &o->object))           \
    X(cove_object_find, , cove_object_find(f->realm, "Person", &f->pk, &o->object))                   \
    X(cove_object_get, , cove_object_get(f->person, "age", &o->value))                                \
    X(cove_object_set, , cove_object_set(f->person, "age", &f->number))                               \
    X(cove_object_get_by_key, , cove_object_get_by_key(f->person, 1, &o->value))                      \
    X(cove_object_set_by_key, , cove_object_set_by_key(f->person, 1, &f->number))                     \
    X(cove_object_get_object, , cove_object_get_object(f->person, "pet", &o->object))                 \
    X(cove_object_delete, , cove_object_delete(f->dog))                                               \
    X(cove_object_freeze, , cove_object_freeze(f->person, &o->object))                                \
    X(cove_object_thaw, , cove_object_thaw(f->person, f->realm, &o->object))                          \
    X(cove_object_to_link, , cove_object_to_link(f->dog, &o->value))                                  \
    X(cove_object_from_link, , cove_object_from_link(f->realm, &f->link, &o->object))                 \
    X(cove_object_get_by_object_key, , cove_object_get_by_object_key(f->realm, "Dog", 0, &o->object)) \
    X(cove_object_from_keys, , cove_object_from_keys(f->realm, f->link.u.link.class_key, 0, &o->object)) \
    X(cove_object_exists_by_keys, , cove_object_exists_by_keys(f->realm, f->link.u.link.class_key, 0, &o->flag)) \
    X(cove_object_get_by_keys, , cove_object_get_by_keys(f->realm, f->link.u.link.class_key, 0, 0, &o->value)) \
    X(cove_object_set_by_keys, , cove_object_set_by_keys(f->realm, f->link.u.link.class_key, 0, 0, &f->number)) \
    X(cove_object_get_list, , cove_object_get_list(f->person, "dogs", &o->list))                      \
    X(cove_list_size, , cove_list_size(f->list, &o->n))                                               \
    X(cove_list_get, , cove_list_get(f->list, 0, &o->value))                                          \
    X(cove_list_insert, , cove_list_insert(f->list, 0, &f->link))                                     \
    X(cove_list_set, , cove_list_set(f->list, 0, &f->link))                                           \
    X(cove_list_erase, , cove_list_erase(f->list, 0))                                                 \
    X(cove_list_move, , cove_list_move(f->list, 0, 0))                                                \
    X(cove_list_clear, , cove_list_clear(f->list))                                                    \
    X(cove_list_insert_embedded, , cove_list_insert_embedded(f->toys, 0, &o->object))                 \
    X(cove_list_freeze, , cove_list_freeze(f->list, &o->list))                                        \
    X(cove_object_get_set, , cove_object_get_set(f->person, "tags", &o->set))                         \
    X(cove_set_size, , cove_set_size(f->set, &o->n))                                                  \
    X(cove_set_get, , cove_set_get(f->set, 0, &o->value))                                             \
    X(cove_set_insert, , cove_set_insert(f->set, &f->pk, &o->flag))                                   \
    X(cove_set_erase, , cove_set_erase(f->set, &f->pk, &o->flag))                                     \
    X(cove_set_contains, , cove_set_contains(f->set, &f->pk, &o->flag))                               \
    X(cove_set_clear, , cove_set_clear(f->set))                                                       \
    X(cove_set_union, , cove_set_union(f->set, f->set))                                               \
    X(cove_set_intersect, , cove_set_intersect(f->set, f->set))                                       \
    X(cove_set_minus, , cove_set_minus(f->set, f->set))                                               \
    X(cove_set_assign, , cove_set_assign(f->set, f->set))                                             \
    X(cove_set_intersects, , cove_set_intersects(f->set, f->set, &o->flag))                           \
    X(cove_set_is_subset, , cove_set_is_subset(f->set, f->set, &o->flag))                             \
    X(cove_set_equals, , cove_set_equals(f->set, f->set, &o->flag))                                   \
    X(cove_set_min, , cove_set_min(f->set, &o->value, &o->flag))                                      \
    X(cove_set_max, , cove_set_max(f->set, &o->value, &o->flag))                                      \
    X(cove_set_sum, , cove_set_sum(f->set, &o->value))                                                \
    X(cove_set_average, , cove_set_average(f->set, &o->value, &o->flag))                              \
    X(cove_object_get_map, , cove_object_get_map(f->person, "scores", &o->map))                       \
    X(cove_map_size, , cove_map_size(f->map, &o->n))                                                  \
    X(cove_map_get, , cove_map_get(f->map, "a", &o->value, &o->flag))                                 \
    X(cove_map_set, , cove_map_set(f->map, "a", &f->number))                                          \
    X(cove_map_erase, , cove_map_erase(f->map, "a", &o->flag))                                        \
    X(cove_map_get_at, , cove_map_get_at(f->map, 0, &o->key, &o->value))                             \
    X(cove_map_set_embedded, , cove_map_set_embedded(f->toy_box, "a", &o->object))                   \
    X(cove_object_create_embedded, , cove_object_create_embedded(f->person, "toy", &o->object))       \
    X(cove_query, , cove_query(f->realm, "Person", "age > 1", NULL, 0, &o->results))                  \
    X(cove_results_filter, , cove_results_filter(f->results, "age > 1", NULL, 0, &o->results))        \
    X(cove_results_sort, , cove_results_sort(f->results, "age", true, &o->results))                   \
    X(cove_results_distinct, , cove_results_distinct(f->results, "age", &o->results))                 \
    X(cove_list_as_results, , cove_list_as_results(f->list, &o->results))                             \
    X(cove_set_as_results, , cove_set_as_results(f->set, &o->results))                                \
    X(cove_object_get_backlinks, , cove_object_get_backlinks(f->dog, "owners", &o->results))         \
    X(cove_results_count, , cove_results_count(f->results, &o->n))                                    \
    X(cove_results_get_object, , cove_results_get_object(f->results, 0, &o->object))                  \
    X(cove_results_get_value, , cove_results_get_value(f->results, 0, &o->value))                     \
    X(cove_results_get_keys, , cove_results_get_keys(f->results, 0, 4, o->keys, &o->n))               \
    X(cove_results_min, , cove_results_min(f->results, "age", &o->value, &o->flag))                   \
    X(cove_results_max, , cove_results_max(f->results, "age", &o->value, &o->flag))                   \
    X(cove_results_sum, , cove_results_sum(f->results, "age", &o->value))                             \
    X(cove_results_average, , cove_results_average(f->results, "age", &o->value, &o->flag))           \
    X(cove_results_freeze, , cove_results_freeze(f->results, &o->results))                            \
    X(cove_results_thaw, , cove_results_thaw(f->results, f->realm, &o->results))                      \
    X(cove_results_to_json, , cove_results_to_json(f->results, &o->text))                             \
    X(cove_results_explain, , cove_results_explain(f->results, &o->text))                             \
    X(cove_results_observe, , cove_results_observe(f->results, NULL, 0, on_collection, NULL, NULL, &o->token)) \
    X(cove_list_observe, , cove_list_observe(f->list, NULL, 0, on_collection, NULL, NULL, &o->token)) \
    X(cove_set_observe, , cove_set_observe(f->set, NULL, 0, on_collection, NULL, NULL, &o->token))    \
    X(cove_map_observe, , cove_map_observe(f->map, NULL, 0, on_map, NULL, NULL, &o->token))           \
    X(cove_object_observe, , cove_object_observe(f->person, NULL, 0, on_object, NULL, NULL, &o->token)) \
    X(cove_notification_fd, , cove_notification_fd(f->realm, &o->fd))                                 \
    X(cove_deliver, , cove_deliver(f->realm))                                                         \
    X(cove_wait_for_change, , cove_wait_for_change(f->realm, 0, &o->flag))                            \
    X(cove_results_sectioned, , cove_results_sectioned(f->results, "name", true, &o->sectioned))      \
    X(cove_results_sectioned_by, ,                                                                    \
      cove_results_sectioned_by(f->results, first_letter, NULL, NULL, &o->sectioned))                 \
    X(cove_sectioned_count, , cove_sectioned_count(f->sectioned, &o->n))                              \
    X(cove_sectioned_get_section, , cove_sectioned_get_section(f->sectioned, 0, &o->section))         \
    X(cove_section_key, , cove_section_key(f->section, &o->value))                                    \
    X(cove_section_count, , cove_section_count(f->section, &o->n))                                    \
    X(cove_section_get_object, , cove_section_get_object(f->section, 0, &o->object))                  \
    X(cove_sectioned_freeze, , cove_sectioned_freeze(f->sectioned, &o->sectioned))                    \
    X(cove_sectioned_observe, ,                                                                       \
      cove_sectioned_observe(f->sectioned, NULL, 0, on_sectioned, NULL, NULL, &o->token))             \
    X(cove_section_observe, , cove_section_observe(f->section, NULL, 0, on_sectioned, NULL, NULL, &o->token)) \
    X(cove_projection_new, , cove_projection_new(f->person, NAMES, PATHS, 1, &o->projection))         \
    X(cove_projection_get, , cove_projection_get(f->projection, "n", &o->value))                      \
    X(cove_projection_get_list, , cove_projection_get_list(f->projection, "n", &o->results))          \
    X(cove_projection_get_values, , cove_projection_get_values(f->projection, "n", o->values, 4, &o->n)) \
    X(cove_projection_observe, ,                                                                      \
      cove_projection_observe(f->projection, NULL, 0, on_object, NULL, NULL, &o->token))              \
    X(cove_verify, , cove_verify(f->realm, &o->text))                                                \
    X(cove_write_copy, , cove_write_copy(f->realm, "closed-copy.cove", NULL, 0))                      \
    X(cove_sync_get_status, , cove_sync_get_status(f->realm, &o->sync_status))                        \
    X(cove_sync_last_error, , cove_sync_last_error(f->realm, &o->text))                               \
    X(cove_sync_compensating_writes, , cove_sync_compensating_writes(f->realm, &o->text, &o->u64))      \
    X(cove_sync_client_resets, , cove_sync_client_resets(f->realm, &o->u64, &o->text))                    \
    X(cove_sync_wait_for_upload, , cove_sync_wait_for_upload(f->realm, 0))                            \
    X(cove_sync_wait_for_download, , cove_sync_wait_for_download(f->realm, 0))                        \
    X(cove_sync_pause, , cove_sync_pause(f->realm))                                                   \
    X(cove_sync_resume, , cove_sync_resume(f->realm))                                                 \
    X(cove_results_subscribe, ,                                                                       \
      cove_results_subscribe(f->results, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1, on_subscribed, NULL, NULL))  \
    X(cove_results_subscribe_blocking, ,                                                              \
      cove_results_subscribe_blocking(f->results, NULL, COVE_WAIT_FOR_SYNC_NEVER, -1))                \
    X(cove_results_unsubscribe, , cove_results_unsubscribe(f->results))                               \
    X(cove_subscriptions_update_begin, , cove_subscriptions_update_begin(f->realm))                   \
    X(cove_subscriptions_append, , cove_subscriptions_append(f->realm, "Person", NULL, NULL, 0, NULL)) \
    X(cove_subscriptions_remove, , cove_subscriptions_remove(f->realm, "n"))                          \
    X(cove_subscriptions_remove_all, , cove_subscriptions_remove_all(f->realm, NULL, false))          \
    X(cove_subscriptions_update_commit, , cove_subscriptions_update_commit(f->realm, &o->u64))        \
    X(cove_subscriptions_update_cancel, , cove_subscriptions_update_cancel(f->realm))                 \
    X(cove_subscriptions_get_version, , cove_subscriptions_get_version(f->realm, &o->u64))            \
    X(cove_subscriptions_get_state, , cove_subscriptions_get_state(f->realm, &o->i32, &o->text))      \
    X(cove_subscriptions_count, , cove_subscriptions_count(f->realm, &o->n))                          \
    X(cove_subscriptions_get, , cove_subscriptions_get(f->realm, 0, &o->subscription))                \
    X(cove_subscriptions_wait, , cove_subscriptions_wait(f->realm, 0, 0))

/* The functions that take no realm or handle of one, or answer for a closed realm by design. */
static const struct {
    const char* prefix; /* a function name, or a prefix ending in '_' naming a family */
    const char* reason;
} EXEMPT[] = {
    {"cove_version_string", "no handle"},
    {"cove_version_number", "no handle"},
    {"cove_last_error_message", "no handle"},
    {"cove_status_name", "no handle"},
    {"cove_retain", "reference counting works at any time (checked below)"},
    {"cove_release", "reference counting works at any time (checked below)"},
    {"cove_free", "frees a buffer, not a handle"},
    {"cove_config_", "configurations belong to no realm"},
    {"cove_sync_config_", "sync configurations belong to no realm"},
    {"cove_open", "takes a configuration"},
    {"cove_schema_version_at", "takes a path: it opens the file for the call"},
    {"cove_compact_file", "takes a path: it opens the file for the call"},
    {"cove_recover_file", "takes paths: it reads the damaged file for the call"},
    {"cove_close", "closing twice is fine (checked below)"},
    {"cove_object_is_valid", "answers false once the realm is closed (checked below)"},
    {"cove_results_is_valid", "answers false once the realm is closed (checked below)"},
    {"cove_token_invalidate", "stopping an observation always works (checked below)"},
    {"cove_migration_", "valid only inside a migration callback, where cove_close is refused"},
    {"cove_changes_", "change sets are lent to a callback, which runs only while the realm is open"},
    {"cove_map_changes_", "change sets are lent to a callback"},
    {"cove_object_changes_", "change sets are lent to a callback"},
    {"cove_sectioned_changes_", "change sets are lent to a callback"},
};

#define DEFINE_CALL(fn, variant, expr)                                                   \
    static cove_status_t call_##fn##_##variant(fixture_t* f, outs_t* o) {               \
        (void)f;                                                                         \
        (void)o;                                                                         \
        return expr;                                                                     \
    }
CLOSED_CALLS(DEFINE_CALL)

static const struct {
    const char* name;
    const char* variant;
    cove_status_t (*call)(fixture_t*, outs_t*);
} CALLS[] = {
#define CALL_ENTRY(fn, variant, expr) {#fn, #variant, call_##fn##_##variant},
    CLOSED_CALLS(CALL_ENTRY)
#undef CALL_ENTRY
};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static bool exempt(const char* name) {
    for (size_t i = 0; i < COUNT(EXEMPT); i++) {
        const char* p = EXEMPT[i].prefix;
        size_t n = strlen(p);
        if (p[n - 1] == '_' ? strncmp(name, p, n) == 0 : strcmp(name, p) == 0) return true;
    }
    return false;
}

static bool in_table(const char* name) {
    for (size_t i = 0; i < COUNT(CALLS); i++)
        if (strcmp(CALLS[i].name, name) == 0) return true;
    return false;
}

/* Every exported function has a case in the table or an exemption, and neither names a function
 * that is not exported. */
static void test_table_covers_every_function(void) {
    FILE* list = fopen("cove.exports", "r");
    CHECK(list != NULL);
    if (list == NULL) return;
    char line[256];
    size_t exported = 0, listed = 0;
    while (fgets(line, sizeof line, list)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "cove_", 5) != 0) continue;
        exported++;
        bool covered = in_table(line) || exempt(line);
        if (!covered) fprintf(stderr, "%s has no closed-realm case (add one to CLOSED_CALLS or EXEMPT)\n", line);
        CHECK(covered);
        /* The table's names are counted once each. */
        for (size_t i = 0; i < COUNT(CALLS); i++)
            if (strcmp(CALLS[i].name, line) == 0) {
                listed++;
                break;
            }
    }
    fclose(list);
    CHECK(exported > 100);
    size_t distinct = 0;
    for (size_t i = 0; i < COUNT(CALLS); i++) {
        bool first = true;
        for (size_t j = 0; j < i; j++)
            if (strcmp(CALLS[j].name, CALLS[i].name) == 0) first = false;
        distinct += first;
    }
    if (listed != distinct) fprintf(stderr, "the table names %zu functions that are not exported\n", distinct - listed);
    CHECK(listed == distinct);
}

static cove_object_t* find_person(cove_realm_t* realm, const char* name) {
    cove_value_t pk = string_value(name);
    cove_object_t* person = NULL;
    CHECK_OK(cove_object_find(realm, "Person", &pk, &person));
    CHECK(person != NULL);
    return person;
}

/* A realm holding one person with a dog, a tag, a score and a toy box. */
static cove_realm_t* populated_realm(void) {
    cove_realm_t* realm = open_schema(NULL, SCHEMA, 1);
    cove_value_t ann = string_value("ann"), tag = string_value("good"), score = double_value(1.5);
    cove_object_t *person = NULL, *dog = NULL, *toy = NULL;
    cove_list_t* dogs = NULL;
    cove_set_t* tags = NULL;
    cove_map_t *scores = NULL, *box = NULL;
    bool inserted = false;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_with_primary_key(realm, "Person", &ann, &person));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    cove_value_t link = link_to(dog);
    CHECK_OK(cove_object_set(person, "pet", &link));
    CHECK_OK(cove_object_get_list(person, "dogs", &dogs));
    CHECK_OK(cove_list_insert(dogs, 0, &link));
    CHECK_OK(cove_object_get_set(person, "tags", &tags));
    CHECK_OK(cove_set_insert(tags, &tag, &inserted));
    CHECK_OK(cove_object_get_map(person, "scores", &scores));
    CHECK_OK(cove_map_set(scores, "a", &score));
    CHECK_OK(cove_object_get_map(person, "toyBox", &box));
    CHECK_OK(cove_map_set_embedded(box, "a", &toy));
    CHECK_OK(cove_commit(realm));
    cove_release(toy);
    cove_release(box);
    cove_release(scores);
    cove_release(tags);
    cove_release(dogs);
    cove_release(dog);
    cove_release(person);
    return realm;
}

/* The handles of `realm`'s person, made while it is open. */
static fixture_t make_fixture(cove_realm_t* realm) {
    fixture_t f;
    memset(&f, 0, sizeof f);
    bool frozen = false;
    CHECK_OK(cove_is_frozen(realm, &frozen));
    f.realm = realm;
    f.pk = string_value("bob");
    f.number = int_value(3);
    f.person = find_person(realm, "ann");
    CHECK_OK(cove_object_get_object(f.person, "pet", &f.dog));
    f.link = link_to(f.dog);
    CHECK_OK(cove_object_get_list(f.person, "dogs", &f.list));
    CHECK_OK(cove_object_get_list(f.person, "toys", &f.toys));
    CHECK_OK(cove_object_get_set(f.person, "tags", &f.set));
    CHECK_OK(cove_object_get_map(f.person, "scores", &f.map));
    CHECK_OK(cove_object_get_map(f.person, "toyBox", &f.toy_box));
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &f.results));
    CHECK_OK(cove_results_sectioned(f.results, "name", true, &f.sectioned));
    CHECK_OK(cove_sectioned_get_section(f.sectioned, 0, &f.section));
    CHECK_OK(cove_projection_new(f.person, NAMES, PATHS, 1, &f.projection));
    if (!frozen) CHECK_OK(cove_results_observe(f.results, NULL, 0, on_collection, NULL, NULL, &f.token));
    return f;
}

static void release_fixture(fixture_t* f) {
    cove_release(f->token);
    cove_release(f->projection);
    cove_release(f->section);
    cove_release(f->sectioned);
    cove_release(f->results);
    cove_release(f->toy_box);
    cove_release(f->map);
    cove_release(f->set);
    cove_release(f->toys);
    cove_release(f->list);
    cove_release(f->dog);
    cove_release(f->person);
}

/* Closes the fixture's realm, then runs every call of the table and the exempt functions on it. */
static void check_closed(fixture_t* f, const char* what) {
    CHECK_OK(cove_close(f->realm));
    for (size_t i = 0; i < COUNT(CALLS); i++) {
        outs_t o;
        memset(&o, 0, sizeof o);
        cove_status_t got = CALLS[i].call(f, &o);
        const char* message = cove_last_error_message();
        bool named = strstr(message, CALLS[i].name) != NULL;
        if (got != COVE_ERR_CLOSED || !named)
            fprintf(stderr, "%s (%s, %s): got %s, message \"%s\"\n", CALLS[i].name, CALLS[i].variant, what,
                    cove_status_name(got), message);
        CHECK(got == COVE_ERR_CLOSED);
        CHECK(named);
        /* Nothing came out. */
        CHECK(o.object == NULL && o.results == NULL && o.list == NULL && o.set == NULL && o.map == NULL);
        CHECK(o.sectioned == NULL && o.section == NULL && o.projection == NULL && o.token == NULL);
        CHECK(o.realm == NULL && o.text == NULL);
    }

    /* The exempt functions that take a handle. */
    bool valid = true;
    CHECK_OK(cove_close(f->realm));
    CHECK_OK(cove_object_is_valid(f->person, &valid));
    CHECK(!valid);
    valid = true;
    CHECK_OK(cove_results_is_valid(f->results, &valid));
    CHECK(!valid);
    if (f->token != NULL) {
        CHECK_OK(cove_token_invalidate(f->token));
        CHECK_OK(cove_token_invalidate(f->token));
    }
    CHECK(cove_retain(f->person) == f->person);
    cove_release(f->person);
}

static void test_live_realm_closed(void) {
    cove_realm_t* realm = populated_realm();
    fixture_t f = make_fixture(realm);
    check_closed(&f, "live");
    release_fixture(&f);
    cove_release(realm);
}

/* A frozen realm closed while the live realm it came from stays open. */
static void test_frozen_realm_closed(void) {
    cove_realm_t* live = populated_realm();
    cove_realm_t* frozen = NULL;
    CHECK_OK(cove_freeze(live, &frozen));
    fixture_t f = make_fixture(frozen);
    check_closed(&f, "frozen");
    /* The live realm is untouched. */
    cove_object_t* ann = find_person(live, "ann");
    cove_release(ann);
    release_fixture(&f);
    cove_release(frozen);
    cove_release(live);
}

/* Handles released in any order after the close: children keep the realm handle alive. */
static void test_release_order_after_close(void) {
    cove_realm_t* realm = populated_realm();
    fixture_t f = make_fixture(realm);
    CHECK_OK(cove_close(realm));
    cove_release(realm);
    size_t n = 0;
    CHECK_FAILS(cove_results_count(f.results, &n), COVE_ERR_CLOSED, "cove_results_count: the realm is closed");
    release_fixture(&f);
}

/* A link names no object: never a handle to nothing. */
static void test_links_to_nothing(void) {
    cove_realm_t* realm = populated_realm();
    cove_object_t *person = find_person(realm, "ann"), *dog = NULL, *found = NULL;
    cove_value_t link = null_value();
    CHECK_OK(cove_object_get_object(person, "pet", &dog));
    CHECK_OK(cove_object_to_link(dog, &link));
    CHECK(link.type == COVE_TYPE_LINK);

    /* A key no object ever had. */
    cove_value_t nowhere = link;
    nowhere.u.link.object_key = 1000000;
    CHECK_FAILS(cove_object_from_link(realm, &nowhere, &found), COVE_ERR_NOT_FOUND,
                "cove_object_from_link: no object of class 'Dog' has key 1000000");
    CHECK(found == NULL);
    /* An unknown class key. */
    nowhere.u.link.class_key = 999;
    CHECK_FAILS(cove_object_from_link(realm, &nowhere, &found), COVE_ERR_NOT_FOUND, "cove_object_from_link");
    CHECK(found == NULL);

    /* A deleted object: the link the handle had made names nothing now, and the handle makes none. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(dog));
    CHECK_FAILS(cove_object_from_link(realm, &link, &found), COVE_ERR_NOT_FOUND, "cove_object_from_link");
    CHECK(found == NULL);
    cove_value_t after = null_value();
    CHECK_FAILS(cove_object_to_link(dog, &after), COVE_ERR_INVALIDATED, "cove_object_to_link");
    CHECK(after.type == COVE_TYPE_NULL);
    CHECK_OK(cove_commit(realm));
    CHECK_FAILS(cove_object_from_link(realm, &link, &found), COVE_ERR_NOT_FOUND, "was deleted");
    CHECK(found == NULL);

    cove_release(dog);
    cove_release(person);
    cove_release(realm);
}

int main(void) {
    test_table_covers_every_function();
    test_live_realm_closed();
    test_frozen_realm_closed();
    test_release_order_after_close();
    test_links_to_nothing();
    return check_summary("test_closed");
}
