/* cove_object_create_with_values() called again and again, as a program creating one object per
 * call does: the class and property names given each time decide, whatever the calls before
 * gave (the library keeps the names it resolved last). Two lists of names in turn, lists that
 * differ in one name or its order, another class between, a name that does not exist after a
 * good call, and a schema changed by another realm between two writes. Runs in an empty working
 * directory. */
#include <cove.h>
#include <stdio.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\", \"age\": \"int\","
    "   \"nick\": \"string\"}},"
    " \"Dog\": {\"properties\": {\"name\": \"string\", \"age\": \"int\"}}}";

static int64_t int_of(cove_object_t* o, const char* property) {
    cove_value_t v;
    CHECK_OK(cove_object_get(o, property, &v));
    return v.type == COVE_TYPE_INT ? v.u.integer : -1;
}

static int string_is(cove_object_t* o, const char* property, const char* s) {
    cove_value_t v;
    return cove_object_get(o, property, &v) == COVE_OK && is_string(&v, s);
}

int main(void) {
    cove_realm_t* realm = open_schema("values.cove", SCHEMA, 1);
    static const char* a[] = {"id", "name", "age"};
    static const char* b[] = {"id", "age", "name"};
    static const char* c[] = {"id", "name", "nick"};
    static const char* dog[] = {"name", "age"};
    static const char* typo[] = {"id", "name", "agee"};
    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < 300; i++) {
        cove_object_t* o = NULL;
        switch (i % 4) {
        case 0: {
            cove_value_t v[3] = {int_value(i), string_value("a"), int_value(i + 1)};
            CHECK_OK(cove_object_create_with_values(realm, "Person", a, 3, v, &o));
            CHECK(string_is(o, "name", "a") && int_of(o, "age") == i + 1);
            break;
        }
        case 1: {
            cove_value_t v[3] = {int_value(i), int_value(i + 2), string_value("b")};
            CHECK_OK(cove_object_create_with_values(realm, "Person", b, 3, v, &o));
            CHECK(string_is(o, "name", "b") && int_of(o, "age") == i + 2);
            break;
        }
        case 2: {
            cove_value_t v[3] = {int_value(i), string_value("c"), string_value("nick")};
            CHECK_OK(cove_object_create_with_values(realm, "Person", c, 3, v, &o));
            CHECK(string_is(o, "name", "c") && string_is(o, "nick", "nick") && int_of(o, "age") == 0);
            break;
        }
        default: {
            cove_value_t v[2] = {string_value("rex"), int_value(i)};
            CHECK_OK(cove_object_create_with_values(realm, "Dog", dog, 2, v, &o));
            CHECK(string_is(o, "name", "rex") && int_of(o, "age") == i);
            /* The same names again, then one misspelt: refused, nothing made. */
            cove_object_t* p = NULL;
            cove_value_t w[3] = {int_value(1000 + i), string_value("t"), int_value(1)};
            CHECK_OK(cove_object_create_with_values(realm, "Person", a, 3, w, &p));
            cove_release(p);
            p = NULL;
            w[0] = int_value(2000 + i);
            CHECK_FAILS(cove_object_create_with_values(realm, "Person", typo, 3, w, &p), COVE_ERR_NOT_FOUND, "agee");
            CHECK(p == NULL);
            /* Fewer names than before. */
            CHECK_OK(cove_object_create_with_values(realm, "Person", a, 1, w, &p));
            CHECK(p != NULL && string_is(p, "name", "") && int_of(p, "age") == 0);
            cove_release(p);
        }
        }
        cove_release(o);
    }
    CHECK_OK(cove_commit(realm));
    CHECK(query_count(realm, "Person", "TRUEPREDICATE", NULL, 0) == 225 + 75 + 75);
    CHECK(query_count(realm, "Person", "id >= 2000", NULL, 0) == 75);
    CHECK(query_count(realm, "Dog", "TRUEPREDICATE", NULL, 0) == 75);

    /* Another realm adds a property (an additive change at a higher version); this realm's
     * next write creates with the names it used before, and with the new one. */
    static const char* SCHEMA2 =
        "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\", \"age\": \"int\","
        "   \"nick\": \"string\", \"score\": \"double\"}},"
        " \"Dog\": {\"properties\": {\"name\": \"string\", \"age\": \"int\"}}}";
    cove_realm_t* other = open_schema("values.cove", SCHEMA2, 2);
    cove_release(other);
    bool advanced = false;
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK_OK(cove_begin_write(realm));
    cove_object_t* o = NULL;
    cove_value_t v[3] = {int_value(5000), string_value("after"), int_value(7)};
    CHECK_OK(cove_object_create_with_values(realm, "Person", a, 3, v, &o));
    CHECK(string_is(o, "name", "after") && int_of(o, "age") == 7);
    cove_release(o);
    static const char* scored[] = {"id", "score"};
    cove_value_t s[2] = {int_value(5001), double_value(2.5)};
    CHECK_OK(cove_object_create_with_values(realm, "Person", scored, 2, s, &o));
    cove_release(o);
    CHECK_OK(cove_commit(realm));
    cove_release(realm);
    return check_summary("test_create_with_values");
}
