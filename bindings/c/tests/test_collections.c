/* Lists, sets, maps and embedded objects through the C API: every operation with primitives,
 * links and embedded objects, set algebra and aggregates, map keys, frozen lists, persistence
 * across a reopen, and the bad input of each family with its status and message. */
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Dog\": {\"properties\": {\"name\": \"string\", \"nums\": \"int?[]\", \"words\": \"string[]\","
    "   \"friends\": \"Dog[]\", \"toys\": \"Toy[]\", \"favorite\": \"Toy?\","
    "   \"scores\": \"int<>\", \"maybe\": \"int?<>\", \"weights\": \"double<>\", \"tags\": \"string<>\","
    "   \"pals\": \"Dog<>\", \"ratings\": \"double{}\", \"toyBox\": \"Toy{}\", \"pack\": \"Dog{}\"}},"
    " \"Cat\": {\"properties\": {\"scores\": \"int<>\", \"any\": \"mixed\", \"anyList\": \"mixed[]\","
    "   \"anySet\": \"mixed<>\", \"anyMap\": \"mixed{}\"}},"
    " \"Toy\": {\"embedded\": true, \"properties\": {\"brand\": \"string\", \"price\": \"double\"}}}";

/* Stands for a null element in the expected contents of an int list. */
#define NUL INT64_MIN

static bool same_link(const cove_value_t* a, const cove_value_t* b) {
    return a->type == COVE_TYPE_LINK && b->type == COVE_TYPE_LINK && a->u.link.class_key == b->u.link.class_key &&
           a->u.link.object_key == b->u.link.object_key;
}

static bool is_valid(cove_object_t* object) {
    bool valid = false;
    CHECK_OK(cove_object_is_valid(object, &valid));
    return valid;
}

static cove_realm_t* open_realm(const char* path) {
    return open_schema(path, SCHEMA, 1);
}

/* Whether an int list holds exactly `expected` (NUL for a null element). */
static bool list_is(cove_list_t* list, const int64_t* expected, size_t n) {
    size_t size = 0;
    if (cove_list_size(list, &size) != COVE_OK || size != n) return false;
    for (size_t i = 0; i < n; i++) {
        cove_value_t v;
        if (cove_list_get(list, i, &v) != COVE_OK) return false;
        if (expected[i] == NUL ? v.type != COVE_TYPE_NULL : (v.type != COVE_TYPE_INT || v.u.integer != expected[i])) return false;
    }
    return true;
}

/* Whether an int set holds exactly `expected`, in that (ascending) order. */
static bool set_is(cove_set_t* set, const int64_t* expected, size_t n) {
    size_t size = 0;
    if (cove_set_size(set, &size) != COVE_OK || size != n) return false;
    for (size_t i = 0; i < n; i++) {
        cove_value_t v;
        if (cove_set_get(set, i, &v) != COVE_OK || v.type != COVE_TYPE_INT || v.u.integer != expected[i]) return false;
    }
    return true;
}

static void set_insert_ints(cove_set_t* set, const int64_t* values, size_t n) {
    for (size_t i = 0; i < n; i++) {
        cove_value_t v = int_value(values[i]);
        CHECK_OK(cove_set_insert(set, &v, NULL));
    }
}

static void test_list_primitives(void) {
    cove_realm_t* realm = open_realm(NULL);
    cove_object_t* dog = NULL;
    cove_list_t *nums = NULL, *words = NULL, *other = NULL;
    cove_value_t v, out = null_value();
    size_t size = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_get_list(dog, "nums", &nums));
    CHECK_OK(cove_list_size(nums, &size));
    CHECK(size == 0);

    v = int_value(1);
    CHECK_OK(cove_list_insert(nums, 0, &v));
    v = int_value(3);
    CHECK_OK(cove_list_insert(nums, 1, &v));
    v = null_value();
    CHECK_OK(cove_list_insert(nums, 1, &v));
    v = int_value(4);
    CHECK_OK(cove_list_insert(nums, 3, &v)); /* at the size: appends */
    {
        static const int64_t want[] = {1, NUL, 3, 4};
        CHECK(list_is(nums, want, 4));
    }
    v = int_value(2);
    CHECK_OK(cove_list_set(nums, 1, &v));
    {
        static const int64_t want[] = {1, 2, 3, 4};
        CHECK(list_is(nums, want, 4));
    }
    CHECK_OK(cove_list_erase(nums, 0));
    {
        static const int64_t want[] = {2, 3, 4};
        CHECK(list_is(nums, want, 3));
    }
    CHECK_OK(cove_list_move(nums, 0, 2));
    {
        static const int64_t want[] = {3, 4, 2};
        CHECK(list_is(nums, want, 3));
    }
    CHECK_OK(cove_list_move(nums, 2, 0));
    {
        static const int64_t want[] = {2, 3, 4};
        CHECK(list_is(nums, want, 3));
    }
    v = null_value();
    CHECK_OK(cove_list_set(nums, 2, &v));
    {
        static const int64_t want[] = {2, 3, NUL};
        CHECK(list_is(nums, want, 3));
    }

    /* a second handle on the same list sees the same elements */
    CHECK_OK(cove_object_get_list(dog, "nums", &other));
    CHECK_OK(cove_list_size(other, &size));
    CHECK(size == 3);
    cove_release(other);

    /* strings */
    CHECK_OK(cove_object_get_list(dog, "words", &words));
    v = string_value("b\xc3\xa9");
    CHECK_OK(cove_list_insert(words, 0, &v));
    v = string_value("a");
    CHECK_OK(cove_list_insert(words, 0, &v));
    v = string_value("");
    CHECK_OK(cove_list_insert(words, 2, &v));
    CHECK_OK(cove_list_get(words, 0, &out));
    CHECK(is_string(&out, "a"));
    CHECK_OK(cove_list_get(words, 1, &out));
    CHECK(is_string(&out, "b\xc3\xa9"));
    CHECK_OK(cove_list_get(words, 2, &out));
    CHECK(out.type == COVE_TYPE_STRING && out.u.string.size == 0);

    /* bad input: values */
    v = string_value("x");
    CHECK_FAILS(cove_list_insert(nums, 0, &v), COVE_ERR_WRONG_TYPE, "property 'nums' of class 'Dog' is int?[], got string");
    CHECK_FAILS(cove_list_set(nums, 0, &v), COVE_ERR_WRONG_TYPE, "property 'nums' of class 'Dog' is int?[], got string");
    v = null_value();
    CHECK_FAILS(cove_list_insert(words, 0, &v), COVE_ERR_WRONG_TYPE, "cannot be null");
    v = string_value("\xff\xfe");
    CHECK_FAILS(cove_list_insert(words, 0, &v), COVE_ERR_INVALID_ARGUMENT, "not valid UTF-8");
    v.type = 99;
    CHECK_FAILS(cove_list_insert(words, 0, &v), COVE_ERR_INVALID_ARGUMENT, "type tag 99");
    CHECK_FAILS(cove_list_insert(words, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "value is NULL");
    CHECK_OK(cove_list_size(words, &size));
    CHECK(size == 3); /* nothing was inserted by the failures */

    /* bad input: indexes */
    v = int_value(9);
    CHECK_FAILS(cove_list_get(nums, 7, &out), COVE_ERR_OUT_OF_RANGE, "index 7 is out of range for list 'nums' of class 'Dog' (valid: 0..<3)");
    CHECK_FAILS(cove_list_insert(nums, 4, &v), COVE_ERR_OUT_OF_RANGE, "valid: 0...3");
    CHECK_FAILS(cove_list_set(nums, 3, &v), COVE_ERR_OUT_OF_RANGE, "index 3");
    CHECK_FAILS(cove_list_erase(nums, 3), COVE_ERR_OUT_OF_RANGE, "index 3");
    CHECK_FAILS(cove_list_move(nums, 0, 3), COVE_ERR_OUT_OF_RANGE, "index 3");
    CHECK_FAILS(cove_list_move(nums, 5, 0), COVE_ERR_OUT_OF_RANGE, "index 5");
    CHECK_FAILS(cove_list_get(nums, (size_t)-1, &out), COVE_ERR_OUT_OF_RANGE, "index 18446744073709551615");
    CHECK_FAILS(cove_list_insert(nums, (size_t)-1, &v), COVE_ERR_OUT_OF_RANGE, "18446744073709551615");

    /* bad input: handles, out pointers, properties */
    CHECK_FAILS(cove_list_size(NULL, &size), COVE_ERR_INVALID_ARGUMENT, "list is NULL");
    CHECK_FAILS(cove_list_size((cove_list_t*)dog, &size), COVE_ERR_INVALID_ARGUMENT, "list is a cove_object_t, expected a cove_list_t");
    CHECK_FAILS(cove_list_insert((cove_list_t*)realm, 0, &v), COVE_ERR_INVALID_ARGUMENT, "expected a cove_list_t");
    CHECK_FAILS(cove_list_size(nums, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_list_get(nums, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_object_get_list(dog, "name", &other), COVE_ERR_WRONG_TYPE, "property 'name' of class 'Dog' is string, not a list");
    CHECK_FAILS(cove_object_get_list(dog, "tags", &other), COVE_ERR_WRONG_TYPE, "not a list");
    CHECK_FAILS(cove_object_get_list(dog, "tail", &other), COVE_ERR_NOT_FOUND, "class 'Dog' has no property 'tail'");
    CHECK_FAILS(cove_object_get_list(dog, NULL, &other), COVE_ERR_INVALID_ARGUMENT, "property is NULL");
    CHECK_FAILS(cove_object_get_list(dog, "nums", NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_object_get_list((cove_object_t*)nums, "nums", &other), COVE_ERR_INVALID_ARGUMENT, "object is a cove_list_t");
    CHECK_FAILS(cove_object_get(dog, "nums", &out), COVE_ERR_WRONG_TYPE, "list");
    CHECK_OK(cove_commit(realm));

    /* writes outside a write */
    v = int_value(5);
    CHECK_FAILS(cove_list_insert(nums, 0, &v), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_list_set(nums, 0, &v), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_list_erase(nums, 0), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_list_move(nums, 0, 1), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_list_clear(nums), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_OK(cove_list_get(nums, 0, &out)); /* reads need no write */
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 2);

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_list_clear(nums));
    CHECK_OK(cove_list_size(nums, &size));
    CHECK(size == 0);
    CHECK_FAILS(cove_list_erase(nums, 0), COVE_ERR_OUT_OF_RANGE, "it is empty");
    /* many inserts at one place renumber the list's order keys */
    for (int64_t i = 0; i < 100; i++) {
        v = int_value(i);
        CHECK_OK(cove_list_insert(nums, 1 > i ? (size_t)i : 1, &v));
    }
    CHECK_OK(cove_list_size(nums, &size));
    CHECK(size == 100);
    CHECK_OK(cove_list_get(nums, 0, &out));
    CHECK(out.u.integer == 0);
    CHECK_OK(cove_list_get(nums, 1, &out));
    CHECK(out.u.integer == 99);
    CHECK_OK(cove_list_get(nums, 99, &out));
    CHECK(out.u.integer == 1);
    CHECK_OK(cove_commit(realm));

    cove_release(words);
    cove_release(nums);
    cove_release(dog);
    cove_release(realm);
}

static void test_list_links(void) {
    cove_realm_t* realm = open_realm(NULL);
    cove_object_t *a = NULL, *b = NULL, *c = NULL, *toy = NULL;
    cove_list_t *friends = NULL, *toys = NULL;
    cove_value_t v, out = null_value(), link_b, link_c;
    size_t size = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &a));
    CHECK_OK(cove_object_create(realm, "Dog", &b));
    CHECK_OK(cove_object_create(realm, "Dog", &c));
    link_b = link_to(b);
    link_c = link_to(c);
    CHECK_OK(cove_object_get_list(a, "friends", &friends));
    CHECK_OK(cove_list_insert(friends, 0, &link_b));
    CHECK_OK(cove_list_insert(friends, 1, &link_c));
    CHECK_OK(cove_list_insert(friends, 2, &link_b)); /* duplicates are fine in a list */
    CHECK_OK(cove_list_get(friends, 1, &out));
    CHECK(same_link(&out, &link_c));
    cove_object_t* found = NULL;
    CHECK_OK(cove_object_from_link(realm, &out, &found));
    CHECK(found != NULL);
    cove_release(found);

    /* a deleted target leaves the list, every occurrence of it */
    CHECK_OK(cove_object_delete(b));
    CHECK_OK(cove_list_size(friends, &size));
    CHECK(size == 1);
    CHECK_OK(cove_list_get(friends, 0, &out));
    CHECK(same_link(&out, &link_c));
    CHECK_FAILS(cove_list_insert(friends, 0, &link_b), COVE_ERR_INVALID_ARGUMENT, "does not exist");

    /* links of another class, to embedded objects, and non-links */
    CHECK_OK(cove_object_get_list(a, "toys", &toys));
    CHECK_OK(cove_list_insert_embedded(toys, 0, &toy));
    v = link_to(toy);
    CHECK_FAILS(cove_list_insert(friends, 0, &v), COVE_ERR_WRONG_TYPE, "links to Dog, got an object of Toy");
    CHECK_FAILS(cove_list_insert(toys, 0, &v), COVE_ERR_INVALID_ARGUMENT, "embedded");
    v = int_value(1);
    CHECK_FAILS(cove_list_insert(friends, 0, &v), COVE_ERR_WRONG_TYPE, "property 'friends' of class 'Dog' is Dog[], got int");

    /* set and erase unlink without deleting */
    v = link_to(a);
    CHECK_OK(cove_list_set(friends, 0, &v));
    CHECK(is_valid(c));
    CHECK_OK(cove_list_erase(friends, 0));
    CHECK(is_valid(a));
    CHECK_OK(cove_commit(realm));

    cove_release(toy);
    cove_release(toys);
    cove_release(friends);
    cove_release(a);
    cove_release(b);
    cove_release(c);
    cove_release(realm);
}

/* Mixed values, single or in a list, set or map, may hold links to objects of any class: to
 * objects that exist and are not embedded; when the target is deleted they become null (a set
 * loses the element). */
static void test_mixed_links(void) {
    cove_realm_t* realm = open_realm(NULL);
    cove_object_t *cat = NULL, *rex = NULL, *fido = NULL, *toy = NULL;
    cove_list_t* list = NULL;
    cove_set_t* set = NULL;
    cove_map_t* map = NULL;
    cove_value_t v, out = null_value(), link_rex, link_fido;
    size_t size = 0;
    bool found = false;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Cat", &cat));
    CHECK_OK(cove_object_create(realm, "Dog", &rex));
    CHECK_OK(cove_object_create(realm, "Dog", &fido));
    CHECK_OK(cove_object_create_embedded(rex, "favorite", &toy));
    link_rex = link_to(rex);
    link_fido = link_to(fido);
    CHECK_OK(cove_object_get_list(cat, "anyList", &list));
    CHECK_OK(cove_object_get_set(cat, "anySet", &set));
    CHECK_OK(cove_object_get_map(cat, "anyMap", &map));
    CHECK_OK(cove_object_set(cat, "any", &link_rex));
    CHECK_OK(cove_list_insert(list, 0, &link_rex));
    CHECK_OK(cove_list_insert(list, 1, &link_fido));
    CHECK_OK(cove_set_insert(set, &link_rex, NULL));
    CHECK_OK(cove_map_set(map, "best", &link_rex));

    /* an embedded object is owned by its parent alone */
    v = link_to(toy);
    CHECK_FAILS(cove_object_set(cat, "any", &v), COVE_ERR_INVALID_ARGUMENT, "cannot hold an embedded Toy");
    CHECK_FAILS(cove_list_insert(list, 0, &v), COVE_ERR_INVALID_ARGUMENT, "embedded Toy");
    CHECK_FAILS(cove_map_set(map, "toy", &v), COVE_ERR_INVALID_ARGUMENT, "embedded Toy");

    /* deleting the target clears every mixed value that held it */
    CHECK_OK(cove_object_delete(rex));
    CHECK_OK(cove_object_get(cat, "any", &out));
    CHECK(out.type == COVE_TYPE_NULL);
    CHECK_OK(cove_list_size(list, &size));
    CHECK(size == 2);
    CHECK_OK(cove_list_get(list, 0, &out));
    CHECK(out.type == COVE_TYPE_NULL);
    CHECK_OK(cove_list_get(list, 1, &out));
    CHECK(same_link(&out, &link_fido));
    CHECK_OK(cove_set_size(set, &size));
    CHECK(size == 0);
    CHECK_OK(cove_map_get(map, "best", &out, &found));
    CHECK(found && out.type == COVE_TYPE_NULL);

    /* a link to an object that is gone is refused, and nothing changes */
    CHECK_FAILS(cove_object_set(cat, "any", &link_rex), COVE_ERR_INVALID_ARGUMENT, "the Dog object");
    CHECK_FAILS(cove_set_insert(set, &link_rex, NULL), COVE_ERR_INVALID_ARGUMENT, "does not exist");
    CHECK_OK(cove_object_get(cat, "any", &out));
    CHECK(out.type == COVE_TYPE_NULL);
    CHECK_OK(cove_commit(realm));

    cove_release(map);
    cove_release(set);
    cove_release(list);
    cove_release(toy);
    cove_release(fido);
    cove_release(rex);
    cove_release(cat);
    cove_release(realm);
}

static void test_list_embedded(void) {
    cove_realm_t* realm = open_realm(NULL);
    cove_object_t *dog = NULL, *t0 = NULL, *t1 = NULL, *t2 = NULL, *t3 = NULL, *nope = NULL;
    cove_list_t *toys = NULL, *nums = NULL;
    cove_value_t v, out = null_value();
    size_t size = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_get_list(dog, "toys", &toys));
    CHECK_OK(cove_list_insert_embedded(toys, 0, &t1));
    v = string_value("Acme");
    CHECK_OK(cove_object_set(t1, "brand", &v));
    CHECK_OK(cove_list_insert_embedded(toys, 1, &t2));
    v = string_value("Zoo");
    CHECK_OK(cove_object_set(t2, "brand", &v));
    v = double_value(4.5);
    CHECK_OK(cove_object_set(t2, "price", &v));
    CHECK_OK(cove_list_insert_embedded(toys, 0, &t0));
    CHECK_OK(cove_list_size(toys, &size));
    CHECK(size == 3);
    CHECK_OK(cove_list_get(toys, 1, &out));
    v = link_to(t1);
    CHECK(same_link(&out, &v));
    CHECK_OK(cove_object_get(t2, "price", &out));
    CHECK(out.type == COVE_TYPE_DOUBLE && out.u.dnum == 4.5);
    CHECK_OK(cove_object_get(t0, "brand", &out)); /* defaults */
    CHECK(is_string(&out, ""));

    /* erase deletes the embedded object; a move keeps it */
    CHECK_OK(cove_list_erase(toys, 1));
    CHECK(!is_valid(t1));
    CHECK_FAILS(cove_object_get(t1, "brand", &out), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_OK(cove_list_move(toys, 0, 1));
    CHECK(is_valid(t0) && is_valid(t2));
    CHECK_OK(cove_list_get(toys, 0, &out));
    v = link_to(t2);
    CHECK(same_link(&out, &v));

    /* bad input */
    CHECK_FAILS(cove_list_insert_embedded(toys, 9, &nope), COVE_ERR_OUT_OF_RANGE, "index 9");
    CHECK_FAILS(cove_list_insert_embedded(toys, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_OK(cove_object_get_list(dog, "nums", &nums));
    CHECK_FAILS(cove_list_insert_embedded(nums, 0, &nope), COVE_ERR_WRONG_TYPE, "not of an embedded class");
    CHECK_FAILS(cove_object_create(realm, "Toy", &nope), COVE_ERR_INVALID_ARGUMENT, "embedded");
    CHECK_OK(cove_list_size(toys, &size));
    CHECK(size == 2);

    /* clear deletes them all; deleting the owner deletes those it holds */
    CHECK_OK(cove_list_clear(toys));
    CHECK(!is_valid(t0) && !is_valid(t2));
    CHECK_OK(cove_list_insert_embedded(toys, 0, &t3));
    CHECK_OK(cove_object_delete(dog));
    CHECK(!is_valid(t3));
    CHECK_OK(cove_commit(realm));

    CHECK_FAILS(cove_list_insert_embedded(toys, 0, &nope), COVE_ERR_NOT_IN_WRITE, "outside a write");

    cove_release(t0);
    cove_release(t1);
    cove_release(t2);
    cove_release(t3);
    cove_release(nums);
    cove_release(toys);
    cove_release(dog);
    cove_release(realm);
}

static void test_sets(void) {
    cove_realm_t* realm = open_realm("sets.cove");
    cove_object_t *a = NULL, *b = NULL, *cat = NULL, *pal = NULL;
    cove_set_t *sa = NULL, *sb = NULL, *sc = NULL, *tags = NULL, *maybe = NULL, *weights = NULL, *pals = NULL;
    cove_value_t v, out = null_value();
    bool flag = false, found = true;
    size_t size = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &a));
    CHECK_OK(cove_object_create(realm, "Dog", &b));
    CHECK_OK(cove_object_create(realm, "Cat", &cat));
    CHECK_OK(cove_object_get_set(a, "scores", &sa));
    CHECK_OK(cove_object_get_set(b, "scores", &sb));
    CHECK_OK(cove_object_get_set(cat, "scores", &sc));

    /* insert, erase, contains, order */
    v = int_value(5);
    CHECK_OK(cove_set_insert(sa, &v, &flag));
    CHECK(flag);
    v = int_value(1);
    CHECK_OK(cove_set_insert(sa, &v, &flag));
    CHECK(flag);
    v = int_value(3);
    CHECK_OK(cove_set_insert(sa, &v, &flag));
    CHECK(flag);
    CHECK_OK(cove_set_insert(sa, &v, &flag));
    CHECK(!flag); /* already there */
    {
        static const int64_t want[] = {1, 3, 5};
        CHECK(set_is(sa, want, 3));
    }
    CHECK_OK(cove_set_contains(sa, &v, &flag));
    CHECK(flag);
    v = int_value(4);
    CHECK_OK(cove_set_contains(sa, &v, &flag));
    CHECK(!flag);
    v = int_value(3);
    CHECK_OK(cove_set_erase(sa, &v, &flag));
    CHECK(flag);
    CHECK_OK(cove_set_erase(sa, &v, &flag));
    CHECK(!flag);
    CHECK_OK(cove_set_erase(sa, &v, NULL));
    {
        static const int64_t want[] = {1, 5};
        CHECK(set_is(sa, want, 2));
    }

    /* algebra between two objects' sets: a = {1, 5}, b = {3, 5, 7} */
    {
        static const int64_t bv[] = {7, 3, 5};
        set_insert_ints(sb, bv, 3);
    }
    CHECK_OK(cove_set_intersects(sa, sb, &flag));
    CHECK(flag);
    CHECK_OK(cove_set_is_subset(sa, sb, &flag));
    CHECK(!flag);
    CHECK_OK(cove_set_equals(sa, sb, &flag));
    CHECK(!flag);
    CHECK_OK(cove_set_union(sa, sb));
    {
        static const int64_t want[] = {1, 3, 5, 7};
        CHECK(set_is(sa, want, 4));
    }
    CHECK_OK(cove_set_is_subset(sb, sa, &flag));
    CHECK(flag);
    CHECK_OK(cove_set_intersect(sa, sb));
    {
        static const int64_t want[] = {3, 5, 7};
        CHECK(set_is(sa, want, 3));
    }
    CHECK_OK(cove_set_equals(sa, sb, &flag));
    CHECK(flag);
    CHECK_OK(cove_set_is_subset(sa, sb, &flag));
    CHECK(flag);
    CHECK_OK(cove_set_minus(sa, sb));
    CHECK_OK(cove_set_size(sa, &size));
    CHECK(size == 0);
    CHECK_OK(cove_set_intersects(sa, sb, &flag));
    CHECK(!flag);
    CHECK_OK(cove_set_is_subset(sa, sb, &flag)); /* the empty set is a subset of any */
    CHECK(flag);
    CHECK_OK(cove_set_assign(sa, sb));
    {
        static const int64_t want[] = {3, 5, 7};
        CHECK(set_is(sa, want, 3));
        CHECK(set_is(sb, want, 3)); /* the other set is unchanged */
    }
    CHECK_OK(cove_set_assign(sa, sa)); /* with itself: unchanged */
    CHECK_OK(cove_set_size(sa, &size));
    CHECK(size == 3);
    /* with a set of another class */
    {
        static const int64_t cv[] = {5, 11};
        set_insert_ints(sc, cv, 2);
    }
    CHECK_OK(cove_set_intersect(sa, sc));
    {
        static const int64_t want[] = {5};
        CHECK(set_is(sa, want, 1));
    }
    CHECK_OK(cove_set_assign(sa, sb));

    /* aggregates of ints: {3, 5, 7} */
    CHECK_OK(cove_set_min(sa, &out, &found));
    CHECK(found && out.type == COVE_TYPE_INT && out.u.integer == 3);
    CHECK_OK(cove_set_max(sa, &out, &found));
    CHECK(found && out.type == COVE_TYPE_INT && out.u.integer == 7);
    CHECK_OK(cove_set_sum(sa, &out));
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 15);
    CHECK_OK(cove_set_average(sa, &out, &found));
    CHECK(found && out.type == COVE_TYPE_DOUBLE && out.u.dnum == 5.0);

    /* aggregates of doubles, and of an empty set */
    CHECK_OK(cove_object_get_set(a, "weights", &weights));
    v = double_value(2.5);
    CHECK_OK(cove_set_insert(weights, &v, NULL));
    v = double_value(-1.5);
    CHECK_OK(cove_set_insert(weights, &v, NULL));
    v = int_value(2); /* an int into a double set */
    CHECK_OK(cove_set_insert(weights, &v, NULL));
    CHECK_OK(cove_set_get(weights, 0, &out));
    CHECK(out.type == COVE_TYPE_DOUBLE && out.u.dnum == -1.5);
    CHECK_OK(cove_set_min(weights, &out, &found));
    CHECK(found && out.type == COVE_TYPE_DOUBLE && out.u.dnum == -1.5);
    CHECK_OK(cove_set_max(weights, &out, &found));
    CHECK(found && out.type == COVE_TYPE_DOUBLE && out.u.dnum == 2.5);
    CHECK_OK(cove_set_sum(weights, &out));
    CHECK(out.type == COVE_TYPE_DOUBLE && out.u.dnum == 3.0);
    CHECK_OK(cove_set_average(weights, &out, &found));
    CHECK(found && out.type == COVE_TYPE_DOUBLE && out.u.dnum == 1.0);
    CHECK_OK(cove_set_clear(weights));
    CHECK_OK(cove_set_min(weights, &out, &found));
    CHECK(!found && out.type == COVE_TYPE_NULL);
    found = true;
    CHECK_OK(cove_set_max(weights, &out, &found));
    CHECK(!found);
    found = true;
    CHECK_OK(cove_set_average(weights, &out, &found));
    CHECK(!found && out.type == COVE_TYPE_NULL);
    CHECK_OK(cove_set_sum(weights, &out)); /* zero of the element type */
    CHECK(out.type == COVE_TYPE_DOUBLE && out.u.dnum == 0.0);

    /* strings come back in byte order; they have no min */
    CHECK_OK(cove_object_get_set(a, "tags", &tags));
    v = string_value("b");
    CHECK_OK(cove_set_insert(tags, &v, NULL));
    v = string_value("a\xc3\xa9");
    CHECK_OK(cove_set_insert(tags, &v, NULL));
    v = string_value("a");
    CHECK_OK(cove_set_insert(tags, &v, NULL));
    CHECK_OK(cove_set_get(tags, 0, &out));
    CHECK(is_string(&out, "a"));
    CHECK_OK(cove_set_get(tags, 1, &out));
    CHECK(is_string(&out, "a\xc3\xa9"));
    CHECK_OK(cove_set_get(tags, 2, &out));
    CHECK(is_string(&out, "b"));
    CHECK_FAILS(cove_set_min(tags, &out, &found), COVE_ERR_WRONG_TYPE, "min");
    CHECK_FAILS(cove_set_sum(tags, &out), COVE_ERR_WRONG_TYPE, "sum");

    /* a set of optional ints holds null, first */
    CHECK_OK(cove_object_get_set(a, "maybe", &maybe));
    v = int_value(2);
    CHECK_OK(cove_set_insert(maybe, &v, NULL));
    v = null_value();
    CHECK_OK(cove_set_insert(maybe, &v, &flag));
    CHECK(flag);
    CHECK_OK(cove_set_get(maybe, 0, &out));
    CHECK(out.type == COVE_TYPE_NULL);
    CHECK_OK(cove_set_min(maybe, &out, &found)); /* nulls are skipped */
    CHECK(found && out.type == COVE_TYPE_INT && out.u.integer == 2);

    /* a set of links loses a deleted target */
    CHECK_OK(cove_object_get_set(a, "pals", &pals));
    CHECK_OK(cove_object_create(realm, "Dog", &pal));
    v = link_to(pal);
    CHECK_OK(cove_set_insert(pals, &v, NULL));
    v = link_to(b);
    CHECK_OK(cove_set_insert(pals, &v, NULL));
    CHECK_OK(cove_object_delete(pal));
    CHECK_OK(cove_set_size(pals, &size));
    CHECK(size == 1);
    CHECK_OK(cove_set_get(pals, 0, &out));
    CHECK(same_link(&out, &v));

    /* bad input */
    v = string_value("x");
    CHECK_FAILS(cove_set_insert(sa, &v, NULL), COVE_ERR_WRONG_TYPE, "property 'scores' of class 'Dog' is int<>, got string");
    CHECK_FAILS(cove_set_contains(sa, &v, &flag), COVE_ERR_WRONG_TYPE, "is int<>");
    v = null_value();
    CHECK_FAILS(cove_set_insert(sa, &v, NULL), COVE_ERR_WRONG_TYPE, "cannot be null");
    v = string_value("\xc3");
    CHECK_FAILS(cove_set_insert(tags, &v, NULL), COVE_ERR_INVALID_ARGUMENT, "not valid UTF-8");
    CHECK_FAILS(cove_set_insert(sa, NULL, NULL), COVE_ERR_INVALID_ARGUMENT, "value is NULL");
    CHECK_FAILS(cove_set_get(sa, 7, &out), COVE_ERR_OUT_OF_RANGE, "index 7 is out of range for set 'scores' of class 'Dog' (valid: 0..<3)");
    CHECK_FAILS(cove_set_get(sa, (size_t)-2, &out), COVE_ERR_OUT_OF_RANGE, "index 18446744073709551614");
    CHECK_FAILS(cove_set_size(NULL, &size), COVE_ERR_INVALID_ARGUMENT, "set is NULL");
    CHECK_FAILS(cove_set_size((cove_set_t*)a, &size), COVE_ERR_INVALID_ARGUMENT, "set is a cove_object_t, expected a cove_set_t");
    CHECK_FAILS(cove_set_contains(sa, &v, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_set_min(sa, &out, NULL), COVE_ERR_INVALID_ARGUMENT, "out_found is NULL");
    CHECK_FAILS(cove_set_union(sa, NULL), COVE_ERR_INVALID_ARGUMENT, "other is NULL");
    CHECK_FAILS(cove_set_union(sa, (cove_set_t*)a), COVE_ERR_INVALID_ARGUMENT, "other is a cove_object_t");
    CHECK_FAILS(cove_set_union(sa, tags), COVE_ERR_WRONG_TYPE, "set operations need the same element type");
    CHECK_FAILS(cove_set_union(sa, maybe), COVE_ERR_WRONG_TYPE, "is int?<>");
    CHECK_FAILS(cove_set_equals(sa, tags, &flag), COVE_ERR_WRONG_TYPE, "same element type");
    CHECK_FAILS(cove_set_equals(sa, sb, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_object_get_set(a, "nums", &pals), COVE_ERR_WRONG_TYPE, "not a set");
    {
        static const int64_t want[] = {3, 5, 7};
        CHECK(set_is(sa, want, 3)); /* nothing changed */
    }
    CHECK_OK(cove_commit(realm));

    /* writes outside a write, even those that would change nothing */
    v = int_value(42);
    CHECK_FAILS(cove_set_insert(sa, &v, NULL), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_set_erase(sa, &v, NULL), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_set_clear(weights), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_set_union(sa, sb), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_set_intersect(sa, sb), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_set_minus(sa, sb), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_set_assign(sa, sb), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_OK(cove_set_equals(sa, sb, &flag)); /* comparisons are reads */
    CHECK(flag);

    /* a set of another cove_realm_t (even of the same file) is refused */
    cove_realm_t* second = open_realm("sets.cove");
    cove_object_t* a2 = NULL;
    cove_set_t* sa2 = NULL;
    cove_value_t link_a = link_to(a);
    CHECK_OK(cove_object_from_link(second, &link_a, &a2));
    CHECK(a2 != NULL);
    CHECK_OK(cove_object_get_set(a2, "scores", &sa2));
    CHECK_OK(cove_set_size(sa2, &size));
    CHECK(size == 3);
    CHECK_FAILS(cove_set_equals(sa, sa2, &flag), COVE_ERR_INVALID_ARGUMENT, "belongs to another realm");
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_set_union(sa, sa2), COVE_ERR_INVALID_ARGUMENT, "another realm");
    CHECK_OK(cove_cancel_write(realm));
    cove_release(sa2);
    cove_release(a2);
    cove_release(second);

    cove_release(pals);
    cove_release(pal);
    cove_release(maybe);
    cove_release(tags);
    cove_release(weights);
    cove_release(sa);
    cove_release(sb);
    cove_release(sc);
    cove_release(a);
    cove_release(b);
    cove_release(cat);
    cove_release(realm);
}

static void test_maps(void) {
    cove_realm_t* realm = open_realm(NULL);
    cove_object_t *dog = NULL, *other = NULL, *t1 = NULL, *t2 = NULL, *nope = NULL;
    cove_map_t *ratings = NULL, *box = NULL, *pack = NULL;
    cove_value_t v, out = null_value();
    cove_string_t key = {"", 0};
    bool found = false, erased = false;
    size_t size = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_get_map(dog, "ratings", &ratings));
    v = double_value(2.5);
    CHECK_OK(cove_map_set(ratings, "b", &v));
    v = double_value(1.0);
    CHECK_OK(cove_map_set(ratings, "a", &v));
    v = int_value(3); /* an int into a double map */
    CHECK_OK(cove_map_set(ratings, "c\xc3\xa9", &v));
    CHECK_OK(cove_map_size(ratings, &size));
    CHECK(size == 3);
    CHECK_OK(cove_map_get(ratings, "a", &out, &found));
    CHECK(found && out.type == COVE_TYPE_DOUBLE && out.u.dnum == 1.0);
    CHECK_OK(cove_map_get(ratings, "c\xc3\xa9", &out, &found));
    CHECK(found && out.type == COVE_TYPE_DOUBLE && out.u.dnum == 3.0);
    CHECK_OK(cove_map_get(ratings, "zz", &out, &found));
    CHECK(!found && out.type == COVE_TYPE_NULL);

    /* entries in key order; keys are NUL-terminated too */
    CHECK_OK(cove_map_get_at(ratings, 0, &key, &out));
    CHECK(key.size == 1 && strcmp(key.data, "a") == 0 && out.u.dnum == 1.0);
    CHECK_OK(cove_map_get_at(ratings, 1, &key, &out));
    CHECK(key.size == 1 && strcmp(key.data, "b") == 0 && out.u.dnum == 2.5);
    CHECK_OK(cove_map_get_at(ratings, 2, &key, &out));
    CHECK(key.size == 3 && strcmp(key.data, "c\xc3\xa9") == 0 && out.u.dnum == 3.0);
    CHECK_OK(cove_map_get(ratings, key.data, &out, &found)); /* a key handed out, passed back */
    CHECK(found);

    /* replace, erase */
    v = double_value(9.0);
    CHECK_OK(cove_map_set(ratings, "b", &v));
    CHECK_OK(cove_map_size(ratings, &size));
    CHECK(size == 3);
    CHECK_OK(cove_map_get(ratings, "b", &out, &found));
    CHECK(found && out.u.dnum == 9.0);
    CHECK_OK(cove_map_erase(ratings, "b", &erased));
    CHECK(erased);
    CHECK_OK(cove_map_erase(ratings, "b", &erased));
    CHECK(!erased);
    CHECK_OK(cove_map_erase(ratings, "b", NULL));
    CHECK_OK(cove_map_size(ratings, &size));
    CHECK(size == 2);
    v = double_value(0.5);
    CHECK_OK(cove_map_set(ratings, "", &v)); /* the empty key is a key */
    CHECK_OK(cove_map_get_at(ratings, 0, &key, &out));
    CHECK(key.size == 0 && key.data != NULL && key.data[0] == '\0' && out.u.dnum == 0.5);

    /* bad input */
    v = double_value(1.0);
    CHECK_FAILS(cove_map_set(ratings, "x.y", &v), COVE_ERR_INVALID_ARGUMENT, "key \"x.y\" may not contain '.'");
    CHECK_FAILS(cove_map_set(ratings, "$x", &v), COVE_ERR_INVALID_ARGUMENT, "start with '$'");
    CHECK_FAILS(cove_map_set(ratings, NULL, &v), COVE_ERR_INVALID_ARGUMENT, "key is NULL");
    CHECK_FAILS(cove_map_set(ratings, "\xff", &v), COVE_ERR_INVALID_ARGUMENT, "key is not valid UTF-8");
    CHECK_FAILS(cove_map_get(ratings, NULL, &out, &found), COVE_ERR_INVALID_ARGUMENT, "key is NULL");
    CHECK_FAILS(cove_map_get(ratings, "a", &out, NULL), COVE_ERR_INVALID_ARGUMENT, "out_found is NULL");
    CHECK_FAILS(cove_map_erase(ratings, NULL, NULL), COVE_ERR_INVALID_ARGUMENT, "key is NULL");
    v = string_value("x");
    CHECK_FAILS(cove_map_set(ratings, "a", &v), COVE_ERR_WRONG_TYPE, "property 'ratings' of class 'Dog' is double{}, got string");
    v = null_value();
    CHECK_FAILS(cove_map_set(ratings, "a", &v), COVE_ERR_WRONG_TYPE, "cannot be null");
    v = string_value("\xe2\x82");
    CHECK_FAILS(cove_map_set(ratings, "a", &v), COVE_ERR_INVALID_ARGUMENT, "not valid UTF-8");
    CHECK_FAILS(cove_map_get_at(ratings, 5, &key, &out), COVE_ERR_OUT_OF_RANGE, "index 5 is out of range for map 'ratings' of class 'Dog' (valid: 0..<3)");
    CHECK_FAILS(cove_map_get_at(ratings, 0, NULL, &out), COVE_ERR_INVALID_ARGUMENT, "out_key is NULL");
    CHECK_FAILS(cove_map_get_at(ratings, 0, &key, NULL), COVE_ERR_INVALID_ARGUMENT, "out_value is NULL");
    CHECK_FAILS(cove_map_size(NULL, &size), COVE_ERR_INVALID_ARGUMENT, "map is NULL");
    CHECK_FAILS(cove_map_size((cove_map_t*)dog, &size), COVE_ERR_INVALID_ARGUMENT, "map is a cove_object_t, expected a cove_map_t");
    CHECK_FAILS(cove_object_get_map(dog, "nums", &box), COVE_ERR_WRONG_TYPE, "not a map");
    CHECK_FAILS(cove_map_set_embedded(ratings, "t", &nope), COVE_ERR_WRONG_TYPE, "not of an embedded class");
    CHECK_OK(cove_map_get(ratings, "a", &out, &found));
    CHECK(found && out.u.dnum == 1.0); /* unchanged */

    /* embedded values: a new one replaces (and deletes) the old; erase deletes */
    CHECK_OK(cove_object_get_map(dog, "toyBox", &box));
    CHECK_OK(cove_map_set_embedded(box, "red", &t1));
    v = string_value("Acme");
    CHECK_OK(cove_object_set(t1, "brand", &v));
    CHECK_OK(cove_map_get(box, "red", &out, &found));
    v = link_to(t1);
    CHECK(found && same_link(&out, &v));
    CHECK_OK(cove_map_set_embedded(box, "red", &t2));
    CHECK(!is_valid(t1) && is_valid(t2));
    CHECK_OK(cove_map_size(box, &size));
    CHECK(size == 1);
    CHECK_FAILS(cove_map_set_embedded(box, "a.b", &nope), COVE_ERR_INVALID_ARGUMENT, "may not contain '.'");
    CHECK_FAILS(cove_map_set_embedded(box, "x", NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    v = link_to(t2);
    CHECK_FAILS(cove_map_set(box, "blue", &v), COVE_ERR_INVALID_ARGUMENT, "embedded");
    CHECK_OK(cove_map_erase(box, "red", &erased));
    CHECK(erased && !is_valid(t2));

    /* a map of links: a deleted target leaves a null value */
    CHECK_OK(cove_object_get_map(dog, "pack", &pack));
    CHECK_OK(cove_object_create(realm, "Dog", &other));
    v = link_to(other);
    CHECK_OK(cove_map_set(pack, "lead", &v));
    v = null_value();
    CHECK_OK(cove_map_set(pack, "none", &v));
    CHECK_OK(cove_object_delete(other));
    CHECK_OK(cove_map_get(pack, "lead", &out, &found));
    CHECK(found && out.type == COVE_TYPE_NULL);
    CHECK_OK(cove_commit(realm));

    /* writes outside a write, even those that would change nothing */
    v = double_value(1.0);
    CHECK_FAILS(cove_map_set(ratings, "a", &v), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_map_erase(ratings, "absent", NULL), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_FAILS(cove_map_set_embedded(box, "red", &nope), COVE_ERR_NOT_IN_WRITE, "outside a write");

    cove_release(pack);
    cove_release(box);
    cove_release(ratings);
    cove_release(other);
    cove_release(t1);
    cove_release(t2);
    cove_release(dog);
    cove_release(realm);
}

static void test_embedded_single(void) {
    cove_realm_t* realm = open_realm(NULL);
    cove_object_t *dog = NULL, *t1 = NULL, *t2 = NULL, *got = NULL, *nope = NULL;
    cove_value_t v, out = null_value();

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_get(dog, "favorite", &out));
    CHECK(out.type == COVE_TYPE_NULL);
    CHECK_OK(cove_object_create_embedded(dog, "favorite", &t1));
    v = string_value("Acme");
    CHECK_OK(cove_object_set(t1, "brand", &v));
    CHECK_OK(cove_object_get_object(dog, "favorite", &got));
    CHECK(got != NULL);
    CHECK_OK(cove_object_get(got, "brand", &out));
    CHECK(is_string(&out, "Acme"));
    cove_release(got);

    /* replacing deletes the old one; null deletes the new one */
    CHECK_OK(cove_object_create_embedded(dog, "favorite", &t2));
    CHECK(!is_valid(t1) && is_valid(t2));
    CHECK_OK(cove_object_get(dog, "favorite", &out));
    v = link_to(t2);
    CHECK(same_link(&out, &v));
    v = null_value();
    CHECK_OK(cove_object_set(dog, "favorite", &v));
    CHECK(!is_valid(t2));

    /* bad input */
    CHECK_FAILS(cove_object_create_embedded(dog, "name", &nope), COVE_ERR_WRONG_TYPE, "not of an embedded class");
    CHECK_FAILS(cove_object_create_embedded(dog, "toys", &nope), COVE_ERR_WRONG_TYPE, "through the list");
    CHECK_FAILS(cove_object_create_embedded(dog, "tail", &nope), COVE_ERR_NOT_FOUND, "no property 'tail'");
    CHECK_FAILS(cove_object_create_embedded(dog, NULL, &nope), COVE_ERR_INVALID_ARGUMENT, "property is NULL");
    CHECK_FAILS(cove_object_create_embedded(dog, "favorite", NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_object_create_embedded(NULL, "favorite", &nope), COVE_ERR_INVALID_ARGUMENT, "object is NULL");
    CHECK_FAILS(cove_object_create_embedded((cove_object_t*)realm, "favorite", &nope), COVE_ERR_INVALID_ARGUMENT, "expected a cove_object_t");
    CHECK_OK(cove_commit(realm));
    CHECK_FAILS(cove_object_create_embedded(dog, "favorite", &nope), COVE_ERR_NOT_IN_WRITE, "outside a write");

    cove_release(t1);
    cove_release(t2);
    cove_release(dog);
    cove_release(realm);
}

/* A deleted owner invalidates its collections; a closed realm closes them. */
static void test_invalidated_and_closed(void) {
    cove_realm_t* realm = open_realm(NULL);
    cove_object_t *dog = NULL, *toy = NULL, *nope = NULL;
    cove_list_t *nums = NULL, *list = NULL;
    cove_set_t *scores = NULL, *set = NULL;
    cove_map_t *ratings = NULL, *map = NULL;
    cove_value_t v = int_value(1), out = null_value();
    bool flag = false;
    size_t size = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_get_list(dog, "nums", &nums));
    CHECK_OK(cove_object_get_set(dog, "scores", &scores));
    CHECK_OK(cove_object_get_map(dog, "ratings", &ratings));
    CHECK_OK(cove_object_get_list(dog, "toys", &list));
    CHECK_OK(cove_list_insert(nums, 0, &v));
    CHECK_OK(cove_object_delete(dog));
    CHECK_FAILS(cove_list_size(nums, &size), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_list_get(nums, 0, &out), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_list_insert(nums, 0, &v), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_list_clear(nums), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_list_insert_embedded(list, 0, &nope), COVE_ERR_INVALIDATED, "was deleted");
    cove_release(list);
    list = NULL;
    CHECK_FAILS(cove_set_insert(scores, &v, NULL), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_set_contains(scores, &v, &flag), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_set_erase(scores, &v, NULL), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_set_sum(scores, &out), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_map_set(ratings, "a", &v), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_map_get(ratings, "a", &out, &flag), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_map_erase(ratings, "a", NULL), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_object_get_list(dog, "nums", &list), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_object_get_set(dog, "scores", &set), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_object_get_map(dog, "ratings", &map), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_object_create_embedded(dog, "favorite", &toy), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_OK(cove_commit(realm));
    CHECK_FAILS(cove_list_freeze(nums, &list), COVE_ERR_INVALIDATED, "was deleted");
    cove_release(nums);
    cove_release(scores);
    cove_release(ratings);
    cove_release(dog);

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_get_list(dog, "nums", &nums));
    CHECK_OK(cove_object_get_set(dog, "scores", &scores));
    CHECK_OK(cove_object_get_map(dog, "ratings", &ratings));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_close(realm));
    CHECK_FAILS(cove_list_size(nums, &size), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_list_insert(nums, 0, &v), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_list_freeze(nums, &list), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_set_size(scores, &size), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_set_union(scores, scores), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_map_size(ratings, &size), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_object_get_list(dog, "nums", &list), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_object_get_map(dog, "ratings", &map), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_object_create_embedded(dog, "favorite", &toy), COVE_ERR_CLOSED, "closed");
    cove_release(nums);
    cove_release(scores);
    cove_release(ratings);
    cove_release(dog);
    cove_release(realm);
}

static void test_frozen_list(void) {
    cove_realm_t* realm = open_realm("frozen.cove");
    cove_object_t *dog = NULL, *nope = NULL;
    cove_list_t *nums = NULL, *frozen = NULL, *again = NULL, *toys = NULL, *frozen_toys = NULL;
    cove_value_t v, out = null_value();
    bool flag = false;
    size_t size = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_get_list(dog, "nums", &nums));
    v = int_value(1);
    CHECK_OK(cove_list_insert(nums, 0, &v));
    v = int_value(2);
    CHECK_OK(cove_list_insert(nums, 1, &v));
    CHECK_FAILS(cove_list_freeze(nums, &frozen), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_commit(realm));

    CHECK_OK(cove_list_freeze(nums, &frozen));
    CHECK_OK(cove_is_frozen(frozen, &flag));
    CHECK(flag);
    CHECK_OK(cove_is_frozen(nums, &flag));
    CHECK(!flag);
    CHECK_OK(cove_is_frozen(dog, &flag));
    CHECK(!flag);
    CHECK_FAILS(cove_list_freeze(nums, NULL), COVE_ERR_INVALID_ARGUMENT, "out_frozen is NULL");
    CHECK_FAILS(cove_list_freeze((cove_list_t*)dog, &again), COVE_ERR_INVALID_ARGUMENT, "expected a cove_list_t");

    /* the live list moves on; the frozen one stays at its version */
    CHECK_OK(cove_begin_write(realm));
    v = int_value(3);
    CHECK_OK(cove_list_insert(nums, 2, &v));
    CHECK_OK(cove_list_erase(nums, 0));
    CHECK_OK(cove_commit(realm));
    {
        static const int64_t live[] = {2, 3};
        static const int64_t old[] = {1, 2};
        CHECK(list_is(nums, live, 2));
        CHECK(list_is(frozen, old, 2));
    }

    /* writes through the frozen list fail, inside a write of the live realm too */
    v = int_value(9);
    CHECK_FAILS(cove_list_insert(frozen, 0, &v), COVE_ERR_FROZEN, "frozen");
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_list_insert(frozen, 0, &v), COVE_ERR_FROZEN, "list 'nums' of class 'Dog' is frozen");
    CHECK_FAILS(cove_list_set(frozen, 0, &v), COVE_ERR_FROZEN, "frozen");
    CHECK_FAILS(cove_list_erase(frozen, 0), COVE_ERR_FROZEN, "frozen");
    CHECK_FAILS(cove_list_move(frozen, 0, 1), COVE_ERR_FROZEN, "frozen");
    CHECK_FAILS(cove_list_clear(frozen), COVE_ERR_FROZEN, "frozen");
    CHECK_OK(cove_cancel_write(realm));
    CHECK_OK(cove_object_get_list(dog, "toys", &toys));
    CHECK_OK(cove_list_freeze(toys, &frozen_toys));
    CHECK_FAILS(cove_list_insert_embedded(frozen_toys, 0, &nope), COVE_ERR_FROZEN, "frozen");

    /* freezing a frozen list gives it back */
    CHECK_OK(cove_list_freeze(frozen, &again));
    CHECK(again == frozen);
    cove_release(again);

    /* the frozen list outlives the live realm and its handles */
    cove_release(nums);
    cove_release(toys);
    cove_release(dog);
    cove_release(realm);
    CHECK_OK(cove_list_size(frozen, &size));
    CHECK(size == 2);
    CHECK_OK(cove_list_get(frozen, 1, &out));
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 2);
    cove_release(frozen_toys);
    cove_release(frozen);
}

/* Everything written survives closing and reopening the file. */
static void test_persistence(void) {
    cove_realm_t* realm = open_realm("collections.cove");
    cove_object_t *dog = NULL, *friend_ = NULL, *toy = NULL;
    cove_list_t *nums = NULL, *friends = NULL, *toys = NULL;
    cove_set_t* tags = NULL;
    cove_map_t* ratings = NULL;
    cove_value_t v, out = null_value(), link_friend;
    cove_string_t key = {"", 0};
    bool found = false;
    size_t size = 0;
    int64_t dog_key = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_create(realm, "Dog", &friend_));
    v = link_to(dog);
    dog_key = v.u.link.object_key;
    link_friend = link_to(friend_);
    CHECK_OK(cove_object_get_list(dog, "nums", &nums));
    for (int64_t i = 0; i < 50; i++) {
        v = i % 10 == 0 ? null_value() : int_value(i * i);
        CHECK_OK(cove_list_insert(nums, (size_t)i, &v));
    }
    CHECK_OK(cove_object_get_list(dog, "friends", &friends));
    CHECK_OK(cove_list_insert(friends, 0, &link_friend));
    CHECK_OK(cove_object_get_list(dog, "toys", &toys));
    CHECK_OK(cove_list_insert_embedded(toys, 0, &toy));
    v = string_value("Acme");
    CHECK_OK(cove_object_set(toy, "brand", &v));
    cove_release(toy);
    CHECK_OK(cove_object_create_embedded(dog, "favorite", &toy));
    v = string_value("Ball");
    CHECK_OK(cove_object_set(toy, "brand", &v));
    cove_release(toy);
    CHECK_OK(cove_object_get_set(dog, "tags", &tags));
    v = string_value("loyal");
    CHECK_OK(cove_set_insert(tags, &v, NULL));
    v = string_value("brave");
    CHECK_OK(cove_set_insert(tags, &v, NULL));
    CHECK_OK(cove_object_get_map(dog, "ratings", &ratings));
    v = double_value(4.5);
    CHECK_OK(cove_map_set(ratings, "speed", &v));
    CHECK_OK(cove_commit(realm));
    cove_release(nums);
    cove_release(friends);
    cove_release(toys);
    cove_release(tags);
    cove_release(ratings);
    cove_release(dog);
    cove_release(friend_);
    cove_release(realm);

    realm = open_realm("collections.cove");
    CHECK_OK(cove_object_get_by_object_key(realm, "Dog", dog_key, &dog));
    CHECK(dog != NULL);
    if (dog == NULL) {
        cove_release(realm);
        return;
    }
    CHECK_OK(cove_object_get_list(dog, "nums", &nums));
    CHECK_OK(cove_list_size(nums, &size));
    CHECK(size == 50);
    CHECK_OK(cove_list_get(nums, 20, &out));
    CHECK(out.type == COVE_TYPE_NULL);
    CHECK_OK(cove_list_get(nums, 49, &out));
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 49 * 49);
    CHECK_OK(cove_object_get_list(dog, "friends", &friends));
    CHECK_OK(cove_list_get(friends, 0, &out));
    CHECK(same_link(&out, &link_friend));
    CHECK_OK(cove_object_get_list(dog, "toys", &toys));
    CHECK_OK(cove_list_get(toys, 0, &out));
    CHECK(out.type == COVE_TYPE_LINK);
    CHECK_OK(cove_object_from_link(realm, &out, &toy));
    CHECK(toy != NULL);
    if (toy != NULL) {
        CHECK_OK(cove_object_get(toy, "brand", &out));
        CHECK(is_string(&out, "Acme"));
        cove_release(toy);
    }
    CHECK_OK(cove_object_get_object(dog, "favorite", &toy));
    CHECK(toy != NULL);
    if (toy != NULL) {
        CHECK_OK(cove_object_get(toy, "brand", &out));
        CHECK(is_string(&out, "Ball"));
        cove_release(toy);
    }
    CHECK_OK(cove_object_get_set(dog, "tags", &tags));
    CHECK_OK(cove_set_size(tags, &size));
    CHECK(size == 2);
    CHECK_OK(cove_set_get(tags, 0, &out));
    CHECK(is_string(&out, "brave"));
    CHECK_OK(cove_object_get_map(dog, "ratings", &ratings));
    CHECK_OK(cove_map_get(ratings, "speed", &out, &found));
    CHECK(found && out.type == COVE_TYPE_DOUBLE && out.u.dnum == 4.5);
    CHECK_OK(cove_map_get_at(ratings, 0, &key, &out));
    CHECK(key.size == 5 && memcmp(key.data, "speed", 5) == 0);

    char* report = NULL;
    CHECK_OK(cove_verify(realm, &report));
    CHECK(strstr(report, "backlink entries match their links") != NULL);
    cove_free(report);
    cove_release(nums);
    cove_release(friends);
    cove_release(toys);
    cove_release(tags);
    cove_release(ratings);
    cove_release(dog);
    cove_release(realm);
}

int main(void) {
    test_list_primitives();
    test_list_links();
    test_mixed_links();
    test_list_embedded();
    test_sets();
    test_maps();
    test_embedded_single();
    test_invalidated_and_closed();
    test_frozen_list();
    test_persistence();
    return check_summary("test_collections");
}
