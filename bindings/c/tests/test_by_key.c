/* Reads and writes by property key (cove_object_get_by_key, cove_object_set_by_key) agree with
 * the same calls by name for every kind of property: plain values written in place, indexed,
 * primary-key, link and mixed properties taking the general path, objects still pending in
 * their write and objects already written, and the errors of each. Strings and binaries handed
 * out stay valid, thousands of them between two refreshes, short and long. */
#include <cove.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Item\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"qty\": \"int\", \"price\": \"double\", \"code\": \"string\", \"blob\": \"data?\","
    "   \"note\": \"string?\", \"any\": \"mixed\", \"owner\": \"Owner?\", \"tags\": \"string[]\"},"
    "  \"indexed\": [\"code\"]},"
    " \"Owner\": {\"properties\": {\"name\": \"string\", \"items\": \"@links(Item.owner)\"}}}";

#define ITEMS 5000

static int64_t key(cove_realm_t* realm, const char* cls, const char* property) {
    int64_t k = -1;
    CHECK_OK(cove_property_key(realm, cls, property, &k));
    return k;
}

/* Sets item i's values by key and checks them by name and by key. */
static void fill(cove_realm_t* realm, cove_object_t* o, int i, cove_object_t* owner) {
    char name[32], code[32];
    snprintf(name, sizeof name, "item %d", i);
    snprintf(code, sizeof code, "c%d", i % 7);
    cove_value_t v = string_value(name);
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "name"), &v));
    v = int_value(i * 2);
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "qty"), &v));
    /* An int into a double property: converted by the general path. */
    v = int_value(i);
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "price"), &v));
    v = string_value(code);
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "code"), &v));
    v = i % 2 ? string_value("odd") : null_value();
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "note"), &v));
    v = int_value(-i);
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "any"), &v));
    if (owner && i % 10 == 0) {
        v = link_to(owner);
        CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "owner"), &v));
    }
}

static int holds(cove_realm_t* realm, cove_object_t* o, int i) {
    char name[32];
    snprintf(name, sizeof name, "item %d", i);
    cove_value_t a, b;
    int ok = 1;
    ok &= cove_object_get(o, "name", &a) == COVE_OK && is_string(&a, name);
    ok &= cove_object_get_by_key(o, key(realm, "Item", "name"), &b) == COVE_OK && is_string(&b, name);
    ok &= cove_object_get_by_key(o, key(realm, "Item", "qty"), &a) == COVE_OK && a.type == COVE_TYPE_INT && a.u.integer == i * 2;
    ok &= cove_object_get_by_key(o, key(realm, "Item", "price"), &a) == COVE_OK && a.type == COVE_TYPE_DOUBLE && a.u.dnum == i;
    ok &= cove_object_get_by_key(o, key(realm, "Item", "note"), &a) == COVE_OK &&
          (i % 2 ? is_string(&a, "odd") : a.type == COVE_TYPE_NULL);
    ok &= cove_object_get_by_key(o, key(realm, "Item", "any"), &a) == COVE_OK && a.type == COVE_TYPE_INT && a.u.integer == -i;
    ok &= cove_object_get_by_key(o, key(realm, "Item", "owner"), &a) == COVE_OK &&
          a.type == (i % 10 == 0 ? COVE_TYPE_LINK : COVE_TYPE_NULL);
    return ok;
}

int main(void) {
    cove_realm_t* realm = open_schema("by_key.cove", SCHEMA, 1);
    cove_object_t* owner = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Owner", &owner));
    /* More items than a table keeps pending, and each filled right after its create: some are
     * set while pending, and the first ones again once written. */
    for (int i = 0; i < ITEMS; i++) {
        cove_value_t pk = int_value(i);
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_create_with_primary_key(realm, "Item", &pk, &o));
        fill(realm, o, i, owner);
        cove_release(o);
    }
    int good = 0;
    for (int i = 0; i < ITEMS; i += 97) {
        cove_value_t pk = int_value(i);
        cove_object_t* o = NULL;
        CHECK_OK(cove_object_find(realm, "Item", &pk, &o));
        good += o && holds(realm, o, i);
        cove_release(o);
    }
    CHECK(good == (ITEMS + 96) / 97);
    CHECK_OK(cove_commit(realm));

    /* The index of `code` and the backlinks followed the sets. */
    cove_value_t arg = string_value("c3");
    size_t expected = 0;
    for (int i = 0; i < ITEMS; i++) expected += i % 7 == 3;
    CHECK(query_count(realm, "Item", "code == $0", &arg, 1) == expected);
    cove_value_t n;
    cove_results_t* backlinks = NULL;
    CHECK_OK(cove_object_get_backlinks(owner, "items", &backlinks));
    size_t linked = 0;
    CHECK_OK(cove_results_count(backlinks, &linked));
    CHECK(linked == ITEMS / 10);
    cove_release(backlinks);

    /* Written objects, set again by key: plain in place, indexed, primary key. */
    cove_value_t pk = int_value(12);
    cove_object_t* o = NULL;
    CHECK_OK(cove_object_find(realm, "Item", &pk, &o));
    CHECK_OK(cove_begin_write(realm));
    n = int_value(777);
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "qty"), &n));
    n = string_value("zz");
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "code"), &n));
    n = int_value(100000);
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "id"), &n));
    /* Errors: the message names the problem, nothing changes. */
    cove_value_t bad = string_value("not a number");
    CHECK_FAILS(cove_object_set_by_key(o, key(realm, "Item", "qty"), &bad), COVE_ERR_WRONG_TYPE, "qty");
    bad = null_value();
    CHECK_FAILS(cove_object_set_by_key(o, key(realm, "Item", "name"), &bad), COVE_ERR_WRONG_TYPE, "name");
    bad = int_value(5);
    CHECK_FAILS(cove_object_set_by_key(o, 987654, &bad), COVE_ERR_NOT_FOUND, "no property with key 987654");
    CHECK_FAILS(cove_object_set_by_key(o, -1, &bad), COVE_ERR_NOT_FOUND, "no property with key -1");
    CHECK_FAILS(cove_object_set_by_key(o, key(realm, "Item", "tags"), &bad), COVE_ERR_WRONG_TYPE, "tags");
    bad = int_value(13);
    CHECK_FAILS(cove_object_set_by_key(o, key(realm, "Item", "id"), &bad), COVE_ERR_DUPLICATE_KEY, "13");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_get_by_key(o, key(realm, "Item", "qty"), &n));
    CHECK(n.type == COVE_TYPE_INT && n.u.integer == 777);
    arg = string_value("zz");
    CHECK(query_count(realm, "Item", "code == $0", &arg, 1) == 1);
    arg = int_value(100000);
    CHECK(query_count(realm, "Item", "id == $0", &arg, 1) == 1);
    cove_object_t* gone = NULL;
    pk = int_value(12);
    CHECK_OK(cove_object_find(realm, "Item", &pk, &gone));
    CHECK(gone == NULL);

    /* Outside a write, and on a deleted object. */
    n = int_value(1);
    CHECK_FAILS(cove_object_set_by_key(o, key(realm, "Item", "qty"), &n), COVE_ERR_NOT_IN_WRITE, "write");
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(o));
    CHECK_FAILS(cove_object_set_by_key(o, key(realm, "Item", "qty"), &n), COVE_ERR_INVALIDATED, "deleted");
    CHECK_FAILS(cove_object_get_by_key(o, key(realm, "Item", "qty"), &n), COVE_ERR_INVALIDATED, "deleted");
    CHECK_OK(cove_commit(realm));
    cove_release(o);

    /* Every name read by key between two refreshes stays readable: the pointers handed out
     * are all still valid at the end, short values packed together and long ones apart. */
    static char big[70000];
    memset(big, 'x', sizeof big - 1);
    pk = int_value(1);
    CHECK_OK(cove_object_find(realm, "Item", &pk, &o));
    CHECK_OK(cove_begin_write(realm));
    n = string_value(big);
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "note"), &n));
    static const unsigned char bytes[5] = {0, 1, 2, 254, 255};
    n = null_value();
    n.type = COVE_TYPE_BINARY;
    n.u.binary.data = bytes;
    n.u.binary.size = sizeof bytes;
    CHECK_OK(cove_object_set_by_key(o, key(realm, "Item", "blob"), &n));
    CHECK_OK(cove_commit(realm));
    cove_release(o);
    cove_results_t* all = NULL;
    size_t total = 0;
    CHECK_OK(cove_query(realm, "Item", "id < 1000 SORT(id ASC)", NULL, 0, &all));
    CHECK_OK(cove_results_count(all, &total));
    CHECK(total == 999);
    cove_value_t* names = calloc(total * 2, sizeof *names);
    int64_t kName = key(realm, "Item", "name"), kNote = key(realm, "Item", "note"), kBlob = key(realm, "Item", "blob");
    for (size_t i = 0; i < total; i++) {
        cove_object_t* item = NULL;
        CHECK_OK(cove_results_get_object(all, i, &item));
        CHECK_OK(cove_object_get_by_key(item, kName, &names[2 * i]));
        CHECK_OK(cove_object_get_by_key(item, i == 1 ? kNote : kBlob, &names[2 * i + 1]));
        cove_release(item);
    }
    int intact = 1;
    for (size_t i = 0; i < total; i++) {
        char name[32];
        int id = (int)i + (i >= 12); /* id 12 became 100000 */
        snprintf(name, sizeof name, "item %d", id);
        intact &= is_string(&names[2 * i], name);
        intact &= i == 1 ? is_string(&names[3], big) : names[2 * i + 1].type == COVE_TYPE_NULL;
    }
    CHECK(intact);
    pk = int_value(1);
    CHECK_OK(cove_object_find(realm, "Item", &pk, &o));
    CHECK_OK(cove_object_get_by_key(o, kBlob, &n));
    CHECK(n.type == COVE_TYPE_BINARY && n.u.binary.size == sizeof bytes && memcmp(n.u.binary.data, bytes, sizeof bytes) == 0);
    cove_release(o);
    CHECK_FAILS(cove_object_get_by_key(NULL, kName, &n), COVE_ERR_INVALID_ARGUMENT, "object");
    free(names);
    cove_release(all);
    cove_release(owner);
    cove_release(realm);
    return check_summary("test_by_key");
}
