/* Objects by keys, without a handle (cove_object_exists_by_keys, cove_object_get_by_keys,
 * cove_object_set_by_keys, cove_object_from_keys): reads agree with the same reads on a handle
 * for every object of results, see a write in progress (objects still pending, values just set,
 * objects just deleted), keep the strings they hand out valid, and refuse what the calls on a
 * handle refuse: a deleted object, an unknown class or property key, a class out of the realm's
 * sight, a collection, a write outside a write or of the wrong type, the wrong thread. A handle
 * made from keys behaves as the object's, or as a deleted object's handle once the object is
 * gone. Frozen realms answer for their version. */
#include <cove.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Item\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"qty\": \"int\", \"owner\": \"Owner?\", \"tags\": \"string[]\"}},"
    " \"Owner\": {\"properties\": {\"name\": \"string\", \"items\": \"@links(Item.owner)\"}},"
    " \"Extra\": {\"properties\": {\"n\": \"int\"}}}";

/* The same schema without Extra, which stays in the file out of the realm's sight. */
static const char* SUBSET =
    "{\"Item\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"qty\": \"int\", \"owner\": \"Owner?\", \"tags\": \"string[]\"}},"
    " \"Owner\": {\"properties\": {\"name\": \"string\", \"items\": \"@links(Item.owner)\"}}}";

#define ITEMS 3000

typedef struct {
    uint32_t item;
    int64_t name, qty, owner, tags, items;
} keys_t;

static int64_t property(cove_realm_t* realm, const char* cls, const char* name) {
    int64_t k = -1;
    CHECK_OK(cove_property_key(realm, cls, name, &k));
    return k;
}

static keys_t keys_of(cove_realm_t* realm) {
    keys_t k;
    CHECK_OK(cove_class_key(realm, "Item", &k.item));
    k.name = property(realm, "Item", "name");
    k.qty = property(realm, "Item", "qty");
    k.owner = property(realm, "Item", "owner");
    k.tags = property(realm, "Item", "tags");
    k.items = property(realm, "Owner", "items");
    return k;
}

/* Creates `n` items from id `first` (inside a write), every tenth linked to `owner`. */
static void create_items(cove_realm_t* realm, int first, int n, cove_object_t* owner) {
    static const char* const names[] = {"id", "name", "qty", "owner"};
    for (int i = first; i < first + n; i++) {
        char name[32];
        snprintf(name, sizeof name, "item %d", i);
        cove_value_t values[4] = {int_value(i), string_value(name), int_value(i * 3), null_value()};
        if (i % 10 == 0) values[3] = link_to(owner);
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_create_with_values(realm, "Item", names, 4, values, &o));
        cove_release(o);
    }
}

/* The object keys of every item, in id order; `*n` receives how many. */
static int64_t* item_keys(cove_realm_t* realm, size_t* n) {
    cove_results_t* all = NULL;
    CHECK_OK(cove_query(realm, "Item", "TRUEPREDICATE SORT(id ASC)", NULL, 0, &all));
    CHECK_OK(cove_results_count(all, n));
    int64_t* keys = calloc(*n + 1, sizeof *keys);
    size_t got = 0;
    CHECK_OK(cove_results_get_keys(all, 0, *n, keys, &got));
    CHECK(got == *n);
    cove_release(all);
    return keys;
}

/* Reads by keys agree with reads on handles for every item; the names handed out all stay
 * valid until the end. */
static void check_reads(cove_realm_t* realm, const keys_t* k) {
    size_t n = 0;
    int64_t* keys = item_keys(realm, &n);
    CHECK(n == ITEMS);
    cove_value_t* names = calloc(n, sizeof *names);
    int agree = 1;
    for (size_t i = 0; i < n; i++) {
        bool exists = false;
        cove_value_t qty, owner, by_handle;
        agree &= cove_object_exists_by_keys(realm, k->item, keys[i], &exists) == COVE_OK && exists;
        agree &= cove_object_get_by_keys(realm, k->item, keys[i], k->name, &names[i]) == COVE_OK;
        agree &= cove_object_get_by_keys(realm, k->item, keys[i], k->qty, &qty) == COVE_OK &&
                 qty.type == COVE_TYPE_INT && qty.u.integer == (int64_t)i * 3;
        agree &= cove_object_get_by_keys(realm, k->item, keys[i], k->owner, &owner) == COVE_OK &&
                 owner.type == (i % 10 == 0 ? COVE_TYPE_LINK : COVE_TYPE_NULL);
        cove_object_t* o = NULL;
        agree &= cove_object_get_by_object_key(realm, "Item", keys[i], &o) == COVE_OK && o != NULL;
        agree &= o && cove_object_get_by_key(o, k->qty, &by_handle) == COVE_OK && by_handle.u.integer == qty.u.integer;
        cove_release(o);
    }
    CHECK(agree);
    int intact = 1;
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "item %zu", i);
        intact &= is_string(&names[i], name);
    }
    CHECK(intact);
    free(names);
    free(keys);
}

/* What another thread gets from the three calls while this one writes. */
typedef struct {
    cove_realm_t* realm;
    uint32_t class_key;
    int64_t object_key, property_key;
    cove_status_t exists, get, set, from;
    char message[256];
} job_t;

static void* other_thread(void* arg) {
    job_t* job = arg;
    bool exists = false;
    cove_value_t v;
    cove_object_t* o = NULL;
    job->exists = cove_object_exists_by_keys(job->realm, job->class_key, job->object_key, &exists);
    job->get = cove_object_get_by_keys(job->realm, job->class_key, job->object_key, job->property_key, &v);
    snprintf(job->message, sizeof job->message, "%s", cove_last_error_message());
    v = int_value(1);
    job->set = cove_object_set_by_keys(job->realm, job->class_key, job->object_key, job->property_key, &v);
    job->from = cove_object_from_keys(job->realm, job->class_key, job->object_key, &o);
    if (o) cove_release(o);
    return NULL;
}

static job_t run(cove_realm_t* realm, uint32_t class_key, int64_t object_key, int64_t property_key) {
    job_t job = {realm, class_key, object_key, property_key, -1, -1, -1, -1, ""};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, &job) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    return job;
}

int main(void) {
    cove_realm_t* realm = open_schema("by_keys.cove", SCHEMA, 1);
    keys_t k = keys_of(realm);
    uint32_t extra = 0;
    CHECK_OK(cove_class_key(realm, "Extra", &extra));
    cove_object_t* owner = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Owner", &owner));
    create_items(realm, 0, ITEMS, owner);
    /* Inside the write, the objects just made (some still pending) read as they were made. */
    check_reads(realm, &k);
    CHECK_OK(cove_commit(realm));
    check_reads(realm, &k);

    size_t n = 0;
    int64_t* keys = item_keys(realm, &n);
    int64_t seven = keys[7];
    cove_value_t v;
    bool exists = true;

    /* A write in progress: a value just set, an object just deleted, one just made. */
    cove_object_t* o = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_get_by_object_key(realm, "Item", seven, &o));
    v = int_value(-5);
    CHECK_OK(cove_object_set(o, "qty", &v));
    CHECK_OK(cove_object_get_by_keys(realm, k.item, seven, k.qty, &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == -5);
    CHECK_OK(cove_object_delete(o));
    CHECK_OK(cove_object_exists_by_keys(realm, k.item, seven, &exists));
    CHECK(!exists);
    CHECK_FAILS(cove_object_get_by_keys(realm, k.item, seven, k.qty, &v), COVE_ERR_INVALIDATED,
                "the Item object");
    create_items(realm, ITEMS, 1, owner);
    size_t grown = 0;
    int64_t* more = item_keys(realm, &grown);
    CHECK(grown == ITEMS);
    CHECK_OK(cove_object_get_by_keys(realm, k.item, more[grown - 1], k.name, &v));
    char last[32];
    snprintf(last, sizeof last, "item %d", ITEMS);
    CHECK(is_string(&v, last));
    free(more);
    CHECK_OK(cove_commit(realm));

    /* Writes by keys: what a write on the handle does, and its refusals. */
    CHECK_OK(cove_begin_write(realm));
    v = string_value("renamed");
    CHECK_OK(cove_object_set_by_keys(realm, k.item, keys[8], k.name, &v));
    v = int_value(-8);
    CHECK_OK(cove_object_set_by_keys(realm, k.item, keys[8], k.qty, &v));
    CHECK_FAILS(cove_object_set_by_keys(realm, k.item, seven, k.qty, &v), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_object_set_by_keys(realm, k.item, keys[8], k.tags, &v), COVE_ERR_WRONG_TYPE, "tags");
    CHECK_FAILS(cove_object_set_by_keys(realm, 99999, keys[8], k.qty, &v), COVE_ERR_NOT_FOUND, "no class with key");
    CHECK_FAILS(cove_object_set_by_keys(realm, k.item, keys[8], 987654, &v), COVE_ERR_NOT_FOUND, "987654");
    CHECK_FAILS(cove_object_set_by_keys(realm, k.item, keys[8], k.qty, NULL), COVE_ERR_INVALID_ARGUMENT, "value");
    v = string_value("not a number");
    CHECK_FAILS(cove_object_set_by_keys(realm, k.item, keys[8], k.qty, &v), COVE_ERR_WRONG_TYPE, "qty");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_get_by_keys(realm, k.item, keys[8], k.qty, &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == -8);
    CHECK_OK(cove_object_get_by_keys(realm, k.item, keys[8], k.name, &v));
    CHECK(is_string(&v, "renamed"));
    v = int_value(1);
    CHECK_FAILS(cove_object_set_by_keys(realm, k.item, keys[8], k.qty, &v), COVE_ERR_NOT_IN_WRITE, "write");

    /* A handle from the keys of the deleted object: a deleted object's handle. */
    cove_object_t* gone = NULL;
    CHECK_OK(cove_object_from_keys(realm, k.item, seven, &gone));
    CHECK(gone != NULL);
    CHECK_OK(cove_object_is_valid(gone, &exists));
    CHECK(!exists);
    CHECK_FAILS(cove_object_get(gone, "qty", &v), COVE_ERR_INVALIDATED, "deleted");
    cove_release(gone);
    cove_release(o);
    /* And of a live one: the object itself. */
    cove_object_t* eight = NULL;
    CHECK_OK(cove_object_from_keys(realm, k.item, keys[8], &eight));
    CHECK_OK(cove_object_is_valid(eight, &exists));
    CHECK(exists);
    CHECK_OK(cove_object_get(eight, "name", &v));
    CHECK(is_string(&v, "renamed"));

    /* Errors: the message names what is wrong. */
    CHECK_FAILS(cove_object_get_by_keys(realm, k.item, keys[8], 987654, &v), COVE_ERR_NOT_FOUND,
                "no property with key 987654");
    CHECK_FAILS(cove_object_get_by_keys(realm, 99999, keys[8], k.qty, &v), COVE_ERR_NOT_FOUND,
                "no class with key 99999");
    CHECK_FAILS(cove_object_exists_by_keys(realm, 99999, keys[8], &exists), COVE_ERR_NOT_FOUND, "no class with key");
    CHECK_FAILS(cove_object_exists_by_keys(realm, 99999, -1, &exists), COVE_ERR_NOT_FOUND, "no class with key");
    CHECK_FAILS(cove_object_from_keys(realm, 99999, keys[8], &o), COVE_ERR_NOT_FOUND, "no class with key");
    CHECK_FAILS(cove_object_get_by_keys(realm, k.item, keys[8], k.tags, &v), COVE_ERR_WRONG_TYPE, "tags");
    uint32_t owner_class = 0;
    CHECK_OK(cove_class_key(realm, "Owner", &owner_class));
    CHECK_FAILS(cove_object_get_by_keys(realm, owner_class, 0, k.items, &v), COVE_ERR_WRONG_TYPE, "backlinks");
    CHECK_FAILS(cove_object_get_by_keys(realm, k.item, -1, k.qty, &v), COVE_ERR_INVALIDATED, "-1");
    CHECK_FAILS(cove_object_get_by_keys(realm, k.item, 1 << 30, k.qty, &v), COVE_ERR_INVALIDATED, "was deleted");
    exists = true;
    CHECK_OK(cove_object_exists_by_keys(realm, k.item, -1, &exists));
    CHECK(!exists);
    CHECK_FAILS(cove_object_get_by_keys(realm, k.item, keys[8], k.qty, NULL), COVE_ERR_INVALID_ARGUMENT, "out");
    CHECK_FAILS(cove_object_exists_by_keys(realm, k.item, keys[8], NULL), COVE_ERR_INVALID_ARGUMENT, "out");
    CHECK_FAILS(cove_object_from_keys(realm, k.item, keys[8], NULL), COVE_ERR_INVALID_ARGUMENT, "out");
    CHECK_FAILS(cove_object_get_by_keys(NULL, k.item, keys[8], k.qty, &v), COVE_ERR_INVALID_ARGUMENT, "realm");
    CHECK_FAILS(cove_object_get_by_keys((cove_realm_t*)eight, k.item, keys[8], k.qty, &v),
                COVE_ERR_INVALID_ARGUMENT, "expected a cove_realm_t");
    CHECK_FAILS(cove_object_exists_by_keys((cove_realm_t*)eight, k.item, keys[8], &exists),
                COVE_ERR_INVALID_ARGUMENT, "expected a cove_realm_t");
    CHECK_FAILS(cove_object_from_keys(NULL, k.item, keys[8], &o), COVE_ERR_INVALID_ARGUMENT, "realm");

    /* Another thread, while this one writes: refused. Once the write is over, it may read. */
    CHECK_OK(cove_begin_write(realm));
    job_t job = run(realm, k.item, keys[8], k.qty);
    CHECK(job.exists == COVE_ERR_WRONG_THREAD && job.get == COVE_ERR_WRONG_THREAD && job.from == COVE_ERR_WRONG_THREAD);
    CHECK(job.set == COVE_ERR_WRONG_THREAD);
    CHECK(strstr(job.message, "cove_object_get_by_keys") && strstr(job.message, "write transaction on another thread"));
    CHECK_OK(cove_cancel_write(realm));
    job = run(realm, k.item, keys[8], k.qty);
    CHECK(job.exists == COVE_OK && job.get == COVE_OK && job.from == COVE_OK && job.set == COVE_ERR_NOT_IN_WRITE);

    /* A frozen realm answers for its version, from any thread, while the live one writes. */
    cove_realm_t* frozen = NULL;
    CHECK_OK(cove_freeze(realm, &frozen));
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_get_by_object_key(realm, "Item", keys[9], &o));
    CHECK_OK(cove_object_delete(o));
    cove_release(o);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_begin_write(realm));
    job = run(frozen, k.item, keys[9], k.qty);
    CHECK(job.exists == COVE_OK && job.get == COVE_OK && job.from == COVE_OK && job.set == COVE_ERR_FROZEN);
    CHECK_OK(cove_cancel_write(realm));
    CHECK_OK(cove_object_get_by_keys(frozen, k.item, keys[9], k.qty, &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 27);
    CHECK_OK(cove_object_exists_by_keys(realm, k.item, keys[9], &exists));
    CHECK(!exists);
    cove_release(frozen);

    cove_release(eight);
    cove_release(owner);
    free(keys);
    cove_release(realm);

    /* A class out of the realm's sight: its key names no class there. */
    realm = open_schema("by_keys.cove", SUBSET, 1);
    CHECK_FAILS(cove_object_get_by_keys(realm, extra, 0, 0, &v), COVE_ERR_NOT_FOUND, "no class with key");
    CHECK_FAILS(cove_object_exists_by_keys(realm, extra, 0, &exists), COVE_ERR_NOT_FOUND, "no class with key");
    CHECK_FAILS(cove_object_from_keys(realm, extra, 0, &o), COVE_ERR_NOT_FOUND, "no class with key");
    k = keys_of(realm);
    CHECK_OK(cove_object_get_by_keys(realm, k.item, 0, k.qty, &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 0);
    cove_release(realm);
    return check_summary("test_by_keys");
}
