/* Migrations through the C API: a renamed property keeps its data, a changed type is converted
 * through the old and new objects, a class is split into an embedded one, a callback returning
 * false leaves the file as it was, an enumeration stopped by its callback, the migration handle
 * after the callback, free_userdata called exactly once, a breaking change without a
 * migration, an open realm following another realm's additive change, a realm opened with some
 * of the file's classes, and a migration deleting a class's data. Runs in an empty working
 * directory. */
#include <cove.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define PEOPLE 10

/* Version 1: a person with a string age and an address in two columns. */
static const char* V1 =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"age\": \"string\", \"street\": \"string\", \"city\": \"string\"}}}";

/* Opens `path` with a schema, a version and (when `fn` is not NULL) a migration. */
static cove_status_t open_with(const char* path, const char* schema, uint64_t version, cove_migration_fn fn,
                               void* userdata, cove_realm_t** out) {
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new(path, &config));
    CHECK_OK(cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC));
    CHECK_OK(cove_config_set_schema_json(config, schema, version));
    if (fn) CHECK_OK(cove_config_set_migration(config, fn, userdata, NULL));
    cove_status_t status = cove_open(config, out);
    cove_release(config);
    return status;
}

/* A file at version 1 with PEOPLE persons: id i, name "n<i>", age "<20 + i>" (person 7's age is
 * "x", which does not parse), street "s<i>", city Oslo or Rome. */
static void seed(const char* path) {
    cove_realm_t* realm = NULL;
    char text[32];
    CHECK_OK(open_with(path, V1, 1, NULL, NULL, &realm));
    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < PEOPLE; i++) {
        cove_object_t* p = NULL;
        cove_value_t v = int_value(i);
        CHECK_OK(cove_object_create_with_primary_key(realm, "Person", &v, &p));
        snprintf(text, sizeof text, "n%d", i);
        v = string_value(text);
        CHECK_OK(cove_object_set(p, "name", &v));
        if (i == 7) snprintf(text, sizeof text, "x");
        else snprintf(text, sizeof text, "%d", 20 + i);
        v = string_value(text);
        CHECK_OK(cove_object_set(p, "age", &v));
        snprintf(text, sizeof text, "s%d", i);
        v = string_value(text);
        CHECK_OK(cove_object_set(p, "street", &v));
        v = string_value(i % 2 == 0 ? "Oslo" : "Rome");
        CHECK_OK(cove_object_set(p, "city", &v));
        cove_release(p);
    }
    CHECK_OK(cove_commit(realm));
    cove_release(realm);
}

/* The person with primary key `id` of an open realm (NULL when absent). */
static cove_object_t* person(cove_realm_t* realm, int64_t id) {
    cove_object_t* p = NULL;
    cove_value_t key = int_value(id);
    CHECK_OK(cove_object_find(realm, "Person", &key, &p));
    return p;
}

/* ---- renaming a property ---------------------------------------------------------------- */

static const char* V2_RENAMED =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"fullName\": \"string\","
    "   \"age\": \"string\", \"street\": \"string\", \"city\": \"string\"}},"
    " \"Tag\": {\"properties\": {\"label\": \"string\", \"rank\": \"int\"}}}";

struct rename_state {
    int calls;
    cove_realm_t* new_realm; /* kept (+1) to compare with what cove_open returns */
};

static bool rename_migration(void* userdata, cove_migration_t* migration) {
    struct rename_state* state = userdata;
    cove_realm_t* old_realm = NULL;
    cove_realm_t* new_realm = NULL;
    uint64_t old_version = 0;
    bool frozen = false, in_write = false;
    state->calls++;

    CHECK_OK(cove_migration_old_version(migration, &old_version));
    CHECK(old_version == 1);
    CHECK_OK(cove_migration_old_realm(migration, &old_realm));
    CHECK_OK(cove_migration_new_realm(migration, &new_realm));
    CHECK_OK(cove_is_frozen(old_realm, &frozen));
    CHECK(frozen);
    CHECK_OK(cove_is_frozen(new_realm, &frozen));
    CHECK(!frozen);
    CHECK_OK(cove_is_in_write(new_realm, &in_write));
    CHECK(in_write);

    /* Errors inside the callback are the caller's to handle: they do not fail the migration. */
    CHECK_FAILS(cove_migration_rename_property(migration, "Person", "nick", "fullName"), COVE_ERR_NOT_FOUND,
                "no property 'nick'");
    CHECK_FAILS(cove_migration_rename_property(migration, "Person", "age", "fullName"), COVE_ERR_SCHEMA,
                "still has a property 'age'");
    CHECK_FAILS(cove_migration_rename_property(migration, "Person", NULL, "fullName"), COVE_ERR_INVALID_ARGUMENT,
                "old_name is NULL");
    CHECK_OK(cove_migration_rename_property(migration, "Person", "name", "fullName"));

    /* cove_open owns the migration's write and realms. */
    CHECK_FAILS(cove_commit(new_realm), COVE_ERR_IN_WRITE, "migration in progress");
    CHECK_FAILS(cove_cancel_write(new_realm), COVE_ERR_IN_WRITE, "migration in progress");
    CHECK_FAILS(cove_close(new_realm), COVE_ERR_IN_WRITE, "migration in progress");
    CHECK_FAILS(cove_close(old_realm), COVE_ERR_IN_WRITE, "migration in progress");
    CHECK_FAILS(cove_begin_write(new_realm), COVE_ERR_ALREADY_IN_WRITE, "already in a write");

    /* The old realm reads the old schema; the new one writes the new schema, in batches too. */
    cove_object_t* old_person = person(old_realm, 4);
    cove_value_t out;
    CHECK(old_person != NULL);
    CHECK_OK(cove_object_get(old_person, "name", &out));
    CHECK(is_string(&out, "n4"));
    const char* names[] = {"label", "rank"};
    cove_value_t tags[6] = {string_value("a"), int_value(1), string_value("b"), int_value(2),
                            string_value("c"), int_value(3)};
    size_t created = 0;
    CHECK_OK(cove_object_create_many(new_realm, "Tag", names, 2, tags, 3, false, &created));
    CHECK(created == 3);
    cove_release(old_person);

    state->new_realm = new_realm; /* released by the test */
    cove_release(old_realm);      /* releasing the old realm inside the callback does not close it */
    return true;
}

static void test_rename_property(void) {
    struct rename_state state = {0, NULL};
    cove_realm_t* realm = NULL;
    cove_value_t out;
    seed("rename.cove");
    CHECK_OK(open_with("rename.cove", V2_RENAMED, 2, rename_migration, &state, &realm));
    CHECK(state.calls == 1);
    CHECK(state.new_realm == realm); /* the realm the callback wrote is the one handed out */
    cove_release(state.new_realm);

    for (int i = 0; i < PEOPLE; i++) {
        char expected[16];
        cove_object_t* p = person(realm, i);
        snprintf(expected, sizeof expected, "n%d", i);
        CHECK_OK(cove_object_get(p, "fullName", &out));
        CHECK(is_string(&out, expected));
        CHECK_FAILS(cove_object_get(p, "name", &out), COVE_ERR_NOT_FOUND, "'name'");
        cove_release(p);
    }
    cove_object_t* tag = NULL;
    CHECK_OK(cove_object_get_by_object_key(realm, "Tag", 2, &tag));
    CHECK(tag != NULL);
    CHECK_OK(cove_object_get(tag, "label", &out));
    CHECK(is_string(&out, "c"));
    cove_release(tag);
    /* The migration was committed: the realm is out of its write and the file is sound. */
    bool in_write = true;
    CHECK_OK(cove_is_in_write(realm, &in_write));
    CHECK(!in_write);
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(realm);

    /* Opened again with the same schema and version: no migration. */
    state.calls = 0;
    CHECK_OK(open_with("rename.cove", V2_RENAMED, 2, rename_migration, &state, &realm));
    CHECK(state.calls == 0);
    cove_release(realm);
}

/* ---- changing a type ---------------------------------------------------------------------- */

static const char* V2_INT_AGE =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"age\": \"int\", \"street\": \"string\", \"city\": \"string\"}}}";

static bool convert_age(void* userdata, cove_object_t* old_object, cove_object_t* new_object) {
    int* visited = userdata;
    cove_value_t old_age, new_age;
    char text[32];
    (*visited)++;
    CHECK(new_object != NULL);
    CHECK_OK(cove_object_get(old_object, "age", &old_age));
    CHECK(old_age.type == COVE_TYPE_STRING && old_age.u.string.size < sizeof text);
    /* Until set, a property whose type changed reads its default on the new object. */
    CHECK_OK(cove_object_get(new_object, "age", &new_age));
    CHECK(new_age.type == COVE_TYPE_INT && new_age.u.integer == 0);
    memcpy(text, old_age.u.string.data, old_age.u.string.size);
    text[old_age.u.string.size] = '\0';
    char* end = NULL;
    long age = strtol(text, &end, 10);
    new_age = int_value(end != text && *end == '\0' ? age : -1);
    CHECK_OK(cove_object_set(new_object, "age", &new_age));
    /* A string into the int property: refused, the migration goes on. */
    CHECK_FAILS(cove_object_set(new_object, "age", &old_age), COVE_ERR_WRONG_TYPE, "is int, got string");
    return true;
}

static bool change_type_migration(void* userdata, cove_migration_t* migration) {
    CHECK_OK(cove_migration_enumerate(migration, "Person", convert_age, userdata));
    CHECK_FAILS(cove_migration_enumerate(migration, "Nope", convert_age, userdata), COVE_ERR_NOT_FOUND,
                "class 'Nope'");
    CHECK_FAILS(cove_migration_enumerate(migration, "Person", NULL, userdata), COVE_ERR_INVALID_ARGUMENT,
                "callback is NULL");
    return true;
}

static void test_change_type(void) {
    int visited = 0;
    cove_realm_t* realm = NULL;
    cove_value_t out;
    seed("type.cove");
    CHECK_OK(open_with("type.cove", V2_INT_AGE, 2, change_type_migration, &visited, &realm));
    CHECK(visited == PEOPLE);
    for (int i = 0; i < PEOPLE; i++) {
        cove_object_t* p = person(realm, i);
        CHECK_OK(cove_object_get(p, "age", &out));
        CHECK(out.type == COVE_TYPE_INT && out.u.integer == (i == 7 ? -1 : 20 + i));
        CHECK_OK(cove_object_get(p, "city", &out));
        CHECK(is_string(&out, i % 2 == 0 ? "Oslo" : "Rome"));
        cove_release(p);
    }
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(realm);
}

/* ---- splitting a class ---------------------------------------------------------------------- */

static const char* V2_SPLIT =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"age\": \"string\", \"address\": \"Address?\"}},"
    " \"Address\": {\"embedded\": true, \"properties\": {\"street\": \"string\", \"city\": \"string\"}}}";

static bool move_address(void* userdata, cove_object_t* old_object, cove_object_t* new_object) {
    static const char* moved[] = {"street", "city"};
    cove_object_t* address = NULL;
    cove_value_t v;
    (void)userdata;
    CHECK_OK(cove_object_create_embedded(new_object, "address", &address));
    for (int k = 0; k < 2; k++) {
        CHECK_OK(cove_object_get(old_object, moved[k], &v));
        CHECK_OK(cove_object_set(address, moved[k], &v));
    }
    /* Dropped properties exist on the old object only. */
    CHECK_FAILS(cove_object_get(new_object, "street", &v), COVE_ERR_NOT_FOUND, "'street'");
    cove_release(address);
    return true;
}

static bool split_migration(void* userdata, cove_migration_t* migration) {
    return cove_migration_enumerate(migration, "Person", move_address, userdata) == COVE_OK;
}

static void test_split_class(void) {
    cove_realm_t* realm = NULL;
    cove_value_t out;
    seed("split.cove");
    CHECK_OK(open_with("split.cove", V2_SPLIT, 2, split_migration, NULL, &realm));
    for (int i = 0; i < PEOPLE; i++) {
        char street[16];
        cove_object_t* p = person(realm, i);
        cove_object_t* address = NULL;
        snprintf(street, sizeof street, "s%d", i);
        CHECK_OK(cove_object_get_object(p, "address", &address));
        CHECK(address != NULL);
        if (address) {
            CHECK_OK(cove_object_get(address, "street", &out));
            CHECK(is_string(&out, street));
            CHECK_OK(cove_object_get(address, "city", &out));
            CHECK(is_string(&out, i % 2 == 0 ? "Oslo" : "Rome"));
        }
        CHECK_OK(cove_object_get(p, "name", &out)); /* untouched properties keep their values */
        cove_release(address);
        cove_release(p);
    }
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(realm);
}

/* ---- a callback that fails ------------------------------------------------------------------ */

static cove_realm_t* kept_realm = NULL;

static bool set_age_one(void* userdata, cove_object_t* old_object, cove_object_t* new_object) {
    cove_value_t one = int_value(1);
    (void)userdata;
    (void)old_object;
    CHECK_OK(cove_object_set(new_object, "age", &one));
    return true;
}

static bool refusing_migration(void* userdata, cove_migration_t* migration) {
    CHECK_OK(cove_migration_enumerate(migration, "Person", set_age_one, userdata));
    CHECK_OK(cove_migration_new_realm(migration, &kept_realm)); /* kept past the failed open */
    return false;
}

static void test_callback_returning_false(void) {
    cove_realm_t* realm = NULL;
    uint64_t version_before = 0, version_after = 0;
    cove_value_t out;
    seed("refused.cove");
    CHECK_OK(open_with("refused.cove", V1, 1, NULL, NULL, &realm));
    CHECK_OK(cove_version(realm, &version_before));
    cove_release(realm);
    realm = NULL;

    CHECK_FAILS(open_with("refused.cove", V2_INT_AGE, 2, refusing_migration, NULL, &realm), COVE_ERR_CALLBACK,
                "the migration callback returned false");
    CHECK(realm == NULL);
    /* The new realm the callback kept was closed with the failed open. */
    CHECK(kept_realm != NULL);
    CHECK_FAILS(cove_begin_write(kept_realm), COVE_ERR_CLOSED, "closed");
    cove_release(kept_realm);

    /* The file is as it was: old schema, old version, old values. */
    CHECK_OK(open_with("refused.cove", V1, 1, NULL, NULL, &realm));
    CHECK_OK(cove_version(realm, &version_after));
    CHECK(version_after == version_before);
    cove_object_t* p = person(realm, 3);
    CHECK_OK(cove_object_get(p, "age", &out));
    CHECK(is_string(&out, "23"));
    cove_release(p);
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(realm);
}

/* ---- an enumeration stopped by its callback ------------------------------------------------- */

static bool stop_at_third(void* userdata, cove_object_t* old_object, cove_object_t* new_object) {
    int* visited = userdata;
    (void)old_object;
    (void)new_object;
    return ++*visited < 3;
}

static bool stopping_migration(void* userdata, cove_migration_t* migration) {
    CHECK_FAILS(cove_migration_enumerate(migration, "Person", stop_at_third, userdata), COVE_ERR_CALLBACK,
                "returned false at object 2 of class 'Person'");
    return true; /* the failed enumeration is this callback's to handle: the migration goes on */
}

static void test_enumerate_callback_returning_false(void) {
    int visited = 0;
    cove_realm_t* realm = NULL;
    seed("stopped.cove");
    CHECK_OK(open_with("stopped.cove", V2_RENAMED, 2, stopping_migration, &visited, &realm));
    CHECK(visited == 3);
    CHECK(realm != NULL);
    cove_release(realm);
}

/* ---- handles used after the callback -------------------------------------------------------- */

struct kept_handles {
    cove_migration_t* migration;
    cove_object_t* old_object;
    cove_object_t* new_object;
};

static bool keep_objects(void* userdata, cove_object_t* old_object, cove_object_t* new_object) {
    struct kept_handles* kept = userdata;
    if (kept->old_object == NULL) {
        kept->old_object = cove_retain(old_object);
        kept->new_object = cove_retain(new_object);
    }
    return true;
}

static bool keeping_migration(void* userdata, cove_migration_t* migration) {
    struct kept_handles* kept = userdata;
    kept->migration = cove_retain(migration);
    CHECK_OK(cove_migration_rename_property(migration, "Person", "name", "fullName"));
    CHECK_OK(cove_migration_enumerate(migration, "Person", keep_objects, kept));
    return true;
}

static void test_handles_after_the_callback(void) {
    struct kept_handles kept = {NULL, NULL, NULL};
    cove_realm_t* realm = NULL;
    cove_realm_t* other = NULL;
    uint64_t version = 0;
    cove_value_t out;
    seed("after.cove");
    CHECK_OK(open_with("after.cove", V2_RENAMED, 2, keeping_migration, &kept, &realm));
    CHECK(kept.migration != NULL && kept.old_object != NULL && kept.new_object != NULL);

    CHECK_FAILS(cove_migration_old_version(kept.migration, &version), COVE_ERR_INVALIDATED,
                "valid only during the migration callback");
    CHECK_FAILS(cove_migration_old_realm(kept.migration, &other), COVE_ERR_INVALIDATED, "the migration is over");
    CHECK_FAILS(cove_migration_new_realm(kept.migration, &other), COVE_ERR_INVALIDATED, "the migration is over");
    CHECK(other == NULL);
    CHECK_FAILS(cove_migration_rename_property(kept.migration, "Person", "name", "fullName"), COVE_ERR_INVALIDATED,
                "the migration is over");
    CHECK_FAILS(cove_migration_enumerate(kept.migration, "Person", keep_objects, &kept), COVE_ERR_INVALIDATED,
                "the migration is over");
    /* The old object's realm closed with the migration; the new object is an object of the realm. */
    CHECK_FAILS(cove_object_get(kept.old_object, "name", &out), COVE_ERR_CLOSED, "closed");
    CHECK_OK(cove_object_get(kept.new_object, "fullName", &out));
    CHECK(is_string(&out, "n0"));

    /* Bad handles are refused by kind. */
    CHECK_FAILS(cove_migration_old_version(NULL, &version), COVE_ERR_INVALID_ARGUMENT, "migration is NULL");
    CHECK_FAILS(cove_migration_old_version((cove_migration_t*)realm, &version), COVE_ERR_INVALID_ARGUMENT,
                "is a cove_realm_t, expected a cove_migration_t");
    CHECK_FAILS(cove_migration_old_version(kept.migration, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_config_set_migration(NULL, keeping_migration, NULL, NULL), COVE_ERR_INVALID_ARGUMENT,
                "config is NULL");

    cove_release(kept.migration);
    cove_release(kept.old_object);
    cove_release(kept.new_object);
    cove_release(realm);
}

/* ---- free_userdata ------------------------------------------------------------------------- */

static int freed[4];

static void free_counted(void* userdata) {
    freed[*(int*)userdata]++;
}

static int migration_calls = 0;

static bool counting_migration(void* userdata, cove_migration_t* migration) {
    (void)migration;
    CHECK(*(int*)userdata == 1);
    migration_calls++;
    return true;
}

static void test_free_userdata_once(void) {
    static int ids[4] = {0, 1, 2, 3};
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    seed("free.cove");
    CHECK_OK(cove_config_new("free.cove", &config));
    CHECK_OK(cove_config_set_schema_json(config, V2_RENAMED, 2));

    CHECK_OK(cove_config_set_migration(config, counting_migration, &ids[0], free_counted));
    CHECK(freed[0] == 0);
    /* Replacing the callback frees the user data of the one replaced. */
    CHECK_OK(cove_config_set_migration(config, counting_migration, &ids[1], free_counted));
    CHECK(freed[0] == 1 && freed[1] == 0);
    /* A failed call leaves the user data the caller's. */
    CHECK_FAILS(cove_config_set_migration(NULL, counting_migration, &ids[2], free_counted),
                COVE_ERR_INVALID_ARGUMENT, "config is NULL");
    CHECK(freed[2] == 0);

    CHECK_OK(cove_open(config, &realm));
    CHECK(migration_calls == 1);
    CHECK(freed[1] == 0); /* an open does not free it */
    cove_release(realm);
    CHECK(freed[1] == 0);
    cove_release(config); /* releasing the configuration does */
    CHECK(freed[0] == 1 && freed[1] == 1 && freed[2] == 0);

    /* NULL removes the callback and frees the user data given with it at once. */
    CHECK_OK(cove_config_new("free.cove", &config));
    CHECK_OK(cove_config_set_migration(config, counting_migration, &ids[1], free_counted));
    CHECK_OK(cove_config_set_migration(config, NULL, &ids[3], free_counted));
    CHECK(freed[1] == 2 && freed[3] == 1);
    cove_release(config);
    CHECK(freed[0] == 1 && freed[1] == 2 && freed[2] == 0 && freed[3] == 1);
}

/* ---- no migration ------------------------------------------------------------------------- */

static void test_breaking_change_without_migration(void) {
    cove_realm_t* realm = NULL;
    seed("required.cove");
    CHECK_FAILS(open_with("required.cove", V2_INT_AGE, 2, NULL, NULL, &realm), COVE_ERR_MIGRATION_REQUIRED,
                "need a migration");
    CHECK(realm == NULL);
    /* A changed schema needs a higher version, migration or not. */
    CHECK_FAILS(open_with("required.cove", V2_INT_AGE, 1, change_type_migration, NULL, &realm), COVE_ERR_SCHEMA,
                "not higher");
    /* The file is untouched: it still opens with its own schema. */
    CHECK_OK(open_with("required.cove", V1, 1, NULL, NULL, &realm));
    cove_object_t* p = person(realm, 2);
    cove_value_t out;
    CHECK_OK(cove_object_get(p, "age", &out));
    CHECK(is_string(&out, "22"));
    cove_release(p);
    cove_release(realm);
}

/* ---- another realm's additive change ------------------------------------------------------ */

static const char* V2_NICK =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"age\": \"string\", \"street\": \"string\", \"city\": \"string\", \"nick\": \"string?\"}}}";

/* Sets a string property of person `id` in a write of its own. */
static void set_in_write(cove_realm_t* realm, int64_t id, const char* name, const char* text) {
    CHECK_OK(cove_begin_write(realm));
    cove_object_t* p = person(realm, id);
    cove_value_t v = string_value(text);
    CHECK_OK(cove_object_set(p, name, &v));
    cove_release(p);
    CHECK_OK(cove_commit(realm));
}

/* Reads a string property of person `id`. */
static int reads(cove_realm_t* realm, int64_t id, const char* name, const char* text) {
    cove_object_t* p = person(realm, id);
    cove_value_t out;
    CHECK_OK(cove_object_get(p, name, &out));
    int same = is_string(&out, text);
    cove_release(p);
    return same;
}

static void test_additive_change_of_another_realm(void) {
    cove_realm_t* first = NULL;
    cove_realm_t* second = NULL;
    cove_value_t out;
    bool advanced = false;
    seed("additive.cove");
    CHECK_OK(open_with("additive.cove", V1, 1, NULL, NULL, &first));
    /* A commit of its own first: the realm's next transaction starts from the version it made. */
    set_in_write(first, 1, "street", "m1");
    cove_object_t* p = person(first, 1);
    CHECK_FAILS(cove_object_get(p, "nick", &out), COVE_ERR_NOT_FOUND, "no property 'nick'");
    cove_release(p);

    /* Another realm adds a property and sets it. */
    CHECK_OK(open_with("additive.cove", V2_NICK, 2, NULL, NULL, &second));
    set_in_write(second, 1, "nick", "Bo");
    cove_release(second);

    /* The first realm reads and writes it from its next transaction on. */
    CHECK_OK(cove_refresh(first, &advanced));
    CHECK(advanced);
    CHECK(reads(first, 1, "nick", "Bo"));
    CHECK(reads(first, 1, "street", "m1"));
    set_in_write(first, 2, "nick", "Al");
    CHECK(reads(first, 2, "nick", "Al"));
    cove_release(first);
}

/* ---- some of the file's classes, and deleting a class's data ------------------------------ */

static const char* NOTES_ONLY = "{\"Note\": {\"properties\": {\"text\": \"string\"}}}";
static const char* PEOPLE_AND_NOTES =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"age\": \"string\", \"street\": \"string\", \"city\": \"string\"}},"
    " \"Note\": {\"properties\": {\"text\": \"string\"}}}";

static int delete_data_calls = 0;

static bool delete_people(void* userdata, cove_migration_t* migration) {
    (void)userdata;
    bool deleted = false;
    delete_data_calls++;
    CHECK_OK(cove_migration_delete_data(migration, "Person", &deleted));
    CHECK(deleted);
    CHECK_FAILS(cove_migration_delete_data(migration, "Nobody", NULL), COVE_ERR_NOT_FOUND, "Nobody");
    CHECK_FAILS(cove_migration_delete_data(migration, NULL, NULL), COVE_ERR_INVALID_ARGUMENT, "class_name");
    return true;
}

static void test_subset_and_delete_data(void) {
    const char* path = "subset.cove";
    seed(path);
    cove_realm_t* realm = NULL;
    /* Only Note, a new class, without Person: Person stays in the file, out of sight. */
    CHECK_OK(open_with(path, NOTES_ONLY, 2, NULL, NULL, &realm));
    cove_results_t* r = NULL;
    CHECK_FAILS(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &r), COVE_ERR_NOT_FOUND, "Person");
    cove_object_t* o = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Note", &o));
    cove_release(o);
    CHECK_OK(cove_commit(realm));
    char* json = NULL;
    CHECK_OK(cove_schema_json(realm, &json));
    CHECK(json && strstr(json, "Note") && !strstr(json, "Person"));
    cove_free(json);
    cove_release(realm);
    /* Both classes, at the same version: the people are all there. */
    CHECK_OK(open_with(path, PEOPLE_AND_NOTES, 2, NULL, NULL, &realm));
    CHECK(query_count(realm, "Person", "TRUEPREDICATE", NULL, 0) == PEOPLE);
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 1);
    cove_release(realm);
    /* Version 3 without Person, its data deleted by the migration: gone from the file. */
    CHECK_OK(open_with(path, NOTES_ONLY, 3, delete_people, NULL, &realm));
    CHECK(delete_data_calls == 1);
    cove_release(realm);
    CHECK_OK(open_with(path, PEOPLE_AND_NOTES, 4, NULL, NULL, &realm));
    CHECK(query_count(realm, "Person", "TRUEPREDICATE", NULL, 0) == 0);
    CHECK(query_count(realm, "Note", "TRUEPREDICATE", NULL, 0) == 1);
    cove_release(realm);
}

int main(void) {
    test_rename_property();
    test_change_type();
    test_split_class();
    test_callback_returning_false();
    test_enumerate_callback_returning_false();
    test_handles_after_the_callback();
    test_free_userdata_once();
    test_breaking_change_without_migration();
    test_additive_change_of_another_realm();
    test_subset_and_delete_data();
    return check_summary("test_migrations");
}
