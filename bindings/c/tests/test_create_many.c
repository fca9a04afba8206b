/* cove_object_create_many: a thousand objects in one call read back, primary keys with and
 * without update, links among the values, a bad value stopping the batch at its object (the ones
 * before it kept, the failing one not created), and the arguments refused before any object is
 * made. cove_object_create_with_values, its one-object form that gives the object: values read
 * back, defaults, and each refusal creating nothing. Runs in an empty working directory. */
#include <cove.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Person\": {\"primaryKey\": \"name\", \"properties\": {\"name\": \"string\", \"age\": \"int\","
    "   \"dog\": \"Dog?\"}},"
    " \"Dog\": {\"properties\": {\"name\": \"string\", \"weight\": \"double?\", \"tags\": \"string[]\","
    "   \"notes\": \"@links(Note.dog)\"}},"
    " \"Note\": {\"properties\": {\"text\": \"string\", \"dog\": \"Dog?\"}},"
    " \"Toy\": {\"embedded\": true, \"properties\": {\"name\": \"string\"}}}";

static cove_realm_t* open_realm(const char* path) {
    return open_schema(path, SCHEMA, 1);
}

/* The person named `name`, or NULL. */
static cove_object_t* person(cove_realm_t* realm, const char* name) {
    cove_object_t* p = NULL;
    cove_value_t key = string_value(name);
    CHECK_OK(cove_object_find(realm, "Person", &key, &p));
    return p;
}

/* Whether the person named `name` exists with age `age`. */
static int person_is(cove_realm_t* realm, const char* name, int64_t age) {
    cove_object_t* p = person(realm, name);
    cove_value_t out;
    int ok = p != NULL && cove_object_get(p, "age", &out) == COVE_OK && out.type == COVE_TYPE_INT &&
             out.u.integer == age;
    cove_release(p);
    return ok;
}

#define THOUSAND 1000

static void test_a_thousand_in_one_call(void) {
    cove_realm_t* realm = open_realm("thousand.cove");
    static char names[THOUSAND][16];
    static cove_value_t values[THOUSAND * 2];
    const char* properties[] = {"name", "weight"};
    size_t created = 0;
    for (int i = 0; i < THOUSAND; i++) {
        snprintf(names[i], sizeof names[i], "dog %d", i);
        values[i * 2] = string_value(names[i]);
        values[i * 2 + 1] = i % 10 == 0 ? int_value(i) : double_value(i + 0.5); /* an int into a double */
    }
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_many(realm, "Dog", properties, 2, values, THOUSAND, false, &created));
    CHECK(created == THOUSAND);
    CHECK_OK(cove_commit(realm));

    int right = 0;
    for (int i = 0; i < THOUSAND; i++) {
        cove_object_t* dog = NULL;
        cove_value_t name, weight;
        CHECK_OK(cove_object_get_by_object_key(realm, "Dog", i, &dog));
        if (dog && cove_object_get(dog, "name", &name) == COVE_OK && cove_object_get(dog, "weight", &weight) == COVE_OK &&
            is_string(&name, names[i]) && weight.type == COVE_TYPE_DOUBLE &&
            weight.u.dnum == (i % 10 == 0 ? (double)i : i + 0.5))
            right++;
        cove_release(dog);
    }
    CHECK(right == THOUSAND);
    cove_object_t* none = NULL;
    CHECK_OK(cove_object_get_by_object_key(realm, "Dog", THOUSAND, &none));
    CHECK(none == NULL);

    /* No names: objects at their defaults. No objects: nothing, and OK. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_many(realm, "Dog", NULL, 0, NULL, 3, false, &created));
    CHECK(created == 3);
    CHECK_OK(cove_object_create_many(realm, "Dog", properties, 2, NULL, 0, false, &created));
    CHECK(created == 0);
    CHECK_OK(cove_object_create_many(realm, "Dog", NULL, 0, NULL, 1, false, NULL)); /* out_created may be NULL */
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_get_by_object_key(realm, "Dog", THOUSAND + 3, &none));
    CHECK(none != NULL);
    cove_value_t name;
    CHECK_OK(cove_object_get(none, "name", &name));
    CHECK(is_string(&name, ""));
    cove_release(none);
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(realm);
}

static void test_primary_keys(void) {
    cove_realm_t* realm = open_realm("keys.cove");
    const char* properties[] = {"age", "name"}; /* the primary key need not come first */
    size_t created = 99;
    cove_value_t first[] = {int_value(30), string_value("ann"), int_value(31), string_value("bob"),
                            int_value(32), string_value("cy")};
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_many(realm, "Person", properties, 2, first, 3, false, &created));
    CHECK(created == 3);

    /* A key that exists stops the batch at its object; the ones before it stay. */
    cove_value_t second[] = {int_value(40), string_value("dan"), int_value(41), string_value("eve"),
                             int_value(42), string_value("bob"), int_value(43), string_value("fay")};
    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 2, second, 4, false, &created),
                COVE_ERR_DUPLICATE_KEY, "object 2: class 'Person' already has an object with primary key");
    CHECK(created == 2);
    CHECK(person_is(realm, "dan", 40) && person_is(realm, "eve", 41));
    CHECK(person_is(realm, "bob", 31)); /* untouched */
    cove_object_t* fay = person(realm, "fay");
    CHECK(fay == NULL);
    /* A key given twice in one batch is a duplicate too. */
    cove_value_t twice[] = {int_value(50), string_value("gus"), int_value(51), string_value("gus")};
    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 2, twice, 2, false, &created),
                COVE_ERR_DUPLICATE_KEY, "object 1:");
    CHECK(created == 1);

    /* update: create or update by primary key. */
    cove_value_t upsert[] = {int_value(60), string_value("ann"), int_value(61), string_value("hal"),
                             int_value(62), string_value("gus")};
    CHECK_OK(cove_object_create_many(realm, "Person", properties, 2, upsert, 3, true, &created));
    CHECK(created == 3);
    CHECK(person_is(realm, "ann", 60) && person_is(realm, "hal", 61) && person_is(realm, "gus", 62));
    CHECK(person_is(realm, "cy", 32));
    /* the primary key alone: an upsert that changes nothing but creates the missing */
    const char* key_only[] = {"name"};
    cove_value_t keys[] = {string_value("ann"), string_value("ivy")};
    CHECK_OK(cove_object_create_many(realm, "Person", key_only, 1, keys, 2, true, &created));
    CHECK(created == 2);
    CHECK(person_is(realm, "ann", 60) && person_is(realm, "ivy", 0));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(realm);
}

static void test_links(void) {
    cove_realm_t* realm = open_realm("links.cove");
    cove_object_t* rex = NULL;
    cove_value_t rex_link, out;
    size_t created = 0;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &rex));
    CHECK_OK(cove_object_to_link(rex, &rex_link));
    cove_value_t null_value;
    memset(&null_value, 0, sizeof null_value);
    null_value.type = COVE_TYPE_NULL;

    const char* properties[] = {"name", "dog", "age"};
    cove_value_t rows[] = {string_value("ann"), rex_link, int_value(1), string_value("bob"), null_value, int_value(2)};
    CHECK_OK(cove_object_create_many(realm, "Person", properties, 3, rows, 2, false, &created));
    CHECK(created == 2);
    cove_object_t* ann = person(realm, "ann");
    cove_object_t* dog = NULL;
    CHECK_OK(cove_object_get_object(ann, "dog", &dog));
    CHECK(dog != NULL);
    CHECK_OK(cove_object_to_link(dog, &out));
    CHECK(out.type == COVE_TYPE_LINK && out.u.link.object_key == rex_link.u.link.object_key);
    cove_release(dog);
    cove_release(ann);

    /* A link to a missing object stops the batch; the failing object is not created, whether it
     * has a primary key or not. */
    cove_value_t missing = rex_link;
    missing.u.link.object_key = 12345;
    cove_value_t bad_rows[] = {string_value("cy"), rex_link, int_value(3), string_value("dan"), missing, int_value(4)};
    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 3, bad_rows, 2, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "object 1: property 'dog' of class 'Person': the Dog object 12345 does not exist");
    CHECK(created == 1);
    CHECK(person_is(realm, "cy", 3));
    cove_object_t* dan = person(realm, "dan");
    CHECK(dan == NULL);

    const char* note_properties[] = {"text", "dog"};
    cove_value_t notes[] = {string_value("a"), rex_link, string_value("b"), rex_link, string_value("c"), missing};
    CHECK_FAILS(cove_object_create_many(realm, "Note", note_properties, 2, notes, 3, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "object 2: property 'dog' of class 'Note'");
    CHECK(created == 2);
    cove_object_t* note = NULL;
    CHECK_OK(cove_object_get_by_object_key(realm, "Note", 1, &note));
    CHECK(note != NULL);
    cove_release(note);
    note = NULL;
    CHECK_OK(cove_object_get_by_object_key(realm, "Note", 2, &note));
    CHECK(note == NULL);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(rex);
    cove_release(realm);
}

static void test_a_bad_value_in_row_five(void) {
    cove_realm_t* realm = open_realm("row5.cove");
    const char* properties[] = {"name", "age"};
    char names[8][8];
    cove_value_t rows[16];
    size_t created = 0;
    for (int i = 0; i < 8; i++) {
        snprintf(names[i], sizeof names[i], "p%d", i);
        rows[i * 2] = string_value(names[i]);
        rows[i * 2 + 1] = i == 5 ? string_value("x") : int_value(i);
    }
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 2, rows, 8, false, &created),
                COVE_ERR_WRONG_TYPE, "cove_object_create_many: object 5: property 'age' of class 'Person' is int, got string \"x\"");
    CHECK(created == 5);
    for (int i = 0; i < 5; i++) CHECK(person_is(realm, names[i], i));
    for (int i = 5; i < 8; i++) {
        cove_object_t* p = person(realm, names[i]);
        CHECK(p == NULL);
        cove_release(p);
    }
    /* A value that does not even convert: named the same way. */
    rows[5 * 2 + 1].type = 99;
    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 2, rows + 10, 3, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "object 0: property 'age' of class 'Person': value has type tag 99");
    CHECK(created == 0);
    rows[5 * 2 + 1] = string_value("x");

    /* The caller's write decides: cancelling it undoes the objects the batch made. */
    CHECK_OK(cove_cancel_write(realm));
    cove_object_t* p0 = person(realm, "p0");
    CHECK(p0 == NULL);

    /* The same failure on a class without a primary key leaves no half-made object. */
    const char* dog_properties[] = {"name", "weight"};
    cove_value_t dogs[16];
    for (int i = 0; i < 8; i++) {
        dogs[i * 2] = string_value(names[i]);
        dogs[i * 2 + 1] = i == 5 ? string_value("heavy") : double_value(i);
    }
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_object_create_many(realm, "Dog", dog_properties, 2, dogs, 8, false, &created),
                COVE_ERR_WRONG_TYPE, "object 5: property 'weight' of class 'Dog'");
    CHECK(created == 5);
    cove_object_t* dog = NULL;
    CHECK_OK(cove_object_get_by_object_key(realm, "Dog", 4, &dog));
    CHECK(dog != NULL);
    cove_release(dog);
    dog = NULL;
    CHECK_OK(cove_object_get_by_object_key(realm, "Dog", 5, &dog));
    CHECK(dog == NULL);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(realm);
}

static void test_bad_arguments(void) {
    cove_realm_t* realm = open_realm("bad.cove");
    const char* properties[] = {"name", "age"};
    cove_value_t rows[] = {string_value("ann"), int_value(1)};
    size_t created = 99;

    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 2, rows, 1, false, &created),
                COVE_ERR_NOT_IN_WRITE, "cannot create objects of class 'Person' outside a write transaction");
    CHECK(created == 0);
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_object_create_many(NULL, "Person", properties, 2, rows, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "realm is NULL");
    CHECK_FAILS(cove_object_create_many(realm, NULL, properties, 2, rows, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "class_name is NULL");
    CHECK_FAILS(cove_object_create_many(realm, "Person", NULL, 2, rows, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "property_names is NULL with n_properties 2");
    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 2, NULL, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "values is NULL with n_objects 1 and n_properties 2");
    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 2, rows, (size_t)-1 / 2, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "too large");
    CHECK_FAILS(cove_object_create_many(realm, "Cat", properties, 2, rows, 1, false, &created),
                COVE_ERR_NOT_FOUND, "no class 'Cat'");
    const char* unknown[] = {"name", "nope"};
    CHECK_FAILS(cove_object_create_many(realm, "Person", unknown, 2, rows, 1, false, &created),
                COVE_ERR_NOT_FOUND, "class 'Person' has no property 'nope'");
    const char* with_null[] = {"name", NULL};
    CHECK_FAILS(cove_object_create_many(realm, "Person", with_null, 2, rows, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "property_names[1] is NULL");
    const char* bad_utf8[] = {"name", "\xff"};
    CHECK_FAILS(cove_object_create_many(realm, "Person", bad_utf8, 2, rows, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "property_names[1] is not valid UTF-8");
    const char* twice[] = {"name", "name"};
    CHECK_FAILS(cove_object_create_many(realm, "Person", twice, 2, rows, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "property 'name' is named twice");
    const char* no_key[] = {"age"};
    CHECK_FAILS(cove_object_create_many(realm, "Person", no_key, 1, rows + 1, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "class 'Person' has primary key 'name': the property names must include it");
    const char* backlinks[] = {"name", "notes"};
    CHECK_FAILS(cove_object_create_many(realm, "Dog", backlinks, 2, rows, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "backlinks");
    const char* list[] = {"tags"};
    CHECK_FAILS(cove_object_create_many(realm, "Dog", list, 1, rows, 1, false, &created),
                COVE_ERR_WRONG_TYPE, "property 'tags' of class 'Dog': a list or set takes its elements as a COVE_TYPE_LIST value, not type tag 5");
    CHECK_FAILS(cove_object_create_many(realm, "Dog", properties, 1, rows, 1, true, &created),
                COVE_ERR_INVALID_ARGUMENT, "class 'Dog' has none");
    CHECK_FAILS(cove_object_create_many(realm, "Toy", properties, 1, rows, 1, false, &created),
                COVE_ERR_INVALID_ARGUMENT, "class 'Toy' is embedded");
    cove_object_t* ann = person(realm, "ann");
    CHECK(ann == NULL); /* nothing was created by any of these */
    CHECK(created == 0);
    CHECK_OK(cove_commit(realm));

    /* A frozen realm cannot write. */
    cove_realm_t* frozen = NULL;
    CHECK_OK(cove_freeze(realm, &frozen));
    CHECK_FAILS(cove_object_create_many(frozen, "Person", properties, 2, rows, 1, false, &created),
                COVE_ERR_FROZEN, "frozen");
    cove_release(frozen);
    CHECK_OK(cove_close(realm));
    CHECK_FAILS(cove_object_create_many(realm, "Person", properties, 2, rows, 1, false, &created),
                COVE_ERR_CLOSED, "closed");
    cove_release(realm);
}

static void test_create_with_values(void) {
    cove_realm_t* realm = open_realm("one.cove");
    const char* properties[] = {"age", "name", "dog"};
    cove_object_t* rex = NULL;
    cove_object_t* ann = NULL;
    cove_value_t rex_link, out;
    CHECK_FAILS(cove_object_create_with_values(realm, "Dog", NULL, 0, NULL, &rex), COVE_ERR_NOT_IN_WRITE,
                "cannot create objects of class 'Dog' outside a write transaction");
    CHECK(rex == NULL);
    CHECK_OK(cove_begin_write(realm));
    const char* dog_properties[] = {"weight", "name"};
    cove_value_t dog_values[] = {double_value(31.5), string_value("Rex")};
    CHECK_OK(cove_object_create_with_values(realm, "Dog", dog_properties, 2, dog_values, &rex));
    CHECK(rex != NULL);
    CHECK_OK(cove_object_get(rex, "weight", &out));
    CHECK(out.type == COVE_TYPE_DOUBLE && out.u.dnum == 31.5);
    CHECK_OK(cove_object_to_link(rex, &rex_link));
    cove_value_t values[] = {int_value(41), string_value("ann"), rex_link};
    CHECK_OK(cove_object_create_with_values(realm, "Person", properties, 3, values, &ann));
    CHECK(person_is(realm, "ann", 41));
    cove_object_t* dog = NULL;
    CHECK_OK(cove_object_get_object(ann, "dog", &dog));
    CHECK_OK(cove_object_to_link(dog, &out));
    CHECK(out.u.link.object_key == rex_link.u.link.object_key);
    cove_release(dog);
    cove_object_t* plain = NULL;
    CHECK_OK(cove_object_create_with_values(realm, "Dog", NULL, 0, NULL, &plain)); /* every default */
    CHECK_OK(cove_object_get(plain, "weight", &out));
    CHECK(out.type == COVE_TYPE_NULL);
    cove_release(plain);

    /* Each refusal creates nothing and leaves `out` alone. */
    cove_object_t* none = NULL;
    values[0] = string_value("x");
    values[1] = string_value("bob");
    CHECK_FAILS(cove_object_create_with_values(realm, "Person", properties, 3, values, &none), COVE_ERR_WRONG_TYPE,
                "cove_object_create_with_values: property 'age' of class 'Person' is int, got string \"x\"");
    CHECK(none == NULL && person(realm, "bob") == NULL);
    values[0] = int_value(7);
    values[1] = string_value("ann");
    CHECK_FAILS(cove_object_create_with_values(realm, "Person", properties, 3, values, &none), COVE_ERR_DUPLICATE_KEY,
                "ann");
    values[1] = string_value("cy");
    values[2].u.link.object_key = 12345;
    CHECK_FAILS(cove_object_create_with_values(realm, "Person", properties, 3, values, &none), COVE_ERR_INVALID_ARGUMENT,
                "the Dog object 12345 does not exist");
    CHECK(none == NULL && person(realm, "cy") == NULL);
    CHECK_FAILS(cove_object_create_with_values(realm, "Person", properties + 1, 1, values + 1, NULL),
                COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_object_create_with_values(realm, "Person", properties, 1, values, &none), COVE_ERR_INVALID_ARGUMENT,
                "class 'Person' has primary key 'name': the property names must include it");
    const char* list[] = {"tags"};
    CHECK_FAILS(cove_object_create_with_values(realm, "Dog", list, 1, values, &none), COVE_ERR_WRONG_TYPE,
                "property 'tags' of class 'Dog': a list or set takes its elements as a COVE_TYPE_LIST value");
    CHECK_FAILS(cove_object_create_with_values(realm, "Dog", dog_properties, 2, NULL, &none), COVE_ERR_INVALID_ARGUMENT,
                "values is NULL with n_properties 2");
    CHECK_FAILS(cove_object_create_with_values(realm, "Toy", NULL, 0, NULL, &none), COVE_ERR_INVALID_ARGUMENT,
                "class 'Toy' is embedded");
    CHECK(none == NULL && person(realm, "cy") == NULL);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_verify(realm, NULL));
    cove_release(ann);
    cove_release(rex);
    cove_release(realm);
}

int main(void) {
    test_a_thousand_in_one_call();
    test_primary_keys();
    test_links();
    test_a_bad_value_in_row_five();
    test_bad_arguments();
    test_create_with_values();
    return check_summary("test_create_many");
}
