/* Queries and results through the C API: cove_query with arguments, chained filters, stable
 * sorts, distinct, LIMIT/OFFSET, reads by index and in batches of keys, aggregates, JSON, plans,
 * results of lists and sets, liveness inside and after a write, frozen and thawed results read
 * by several threads, backlinks, and the bad input of each function with its status and
 * message. */
#include <cove.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Person\": {\"properties\": {\"name\": \"string\", \"age\": \"int\", \"score\": \"double?\","
    "   \"tags\": \"string[]\", \"dogs\": \"Dog[]\", \"nums\": \"int<>\", \"best\": \"Dog?\"},"
    "   \"indexed\": [\"age\"]},"
    " \"Dog\": {\"primaryKey\": \"name\", \"properties\": {\"name\": \"string\", \"age\": \"int\","
    "   \"owners\": \"@links(Person.dogs)\", \"fans\": \"@links(Person.best)\"}}}";

static cove_realm_t* open_realm(const char* path) {
    return open_schema(path, SCHEMA, 1);
}

static cove_object_t* dog(cove_realm_t* realm, const char* name, int64_t age) {
    cove_object_t* d = NULL;
    cove_value_t pk = string_value(name), a = int_value(age);
    CHECK_OK(cove_object_create_with_primary_key(realm, "Dog", &pk, &d));
    CHECK_OK(cove_object_set(d, "age", &a));
    return d;
}

/* A person with a score (NAN for none), tags, dogs and numbers (arrays ending in NULL or -1). */
static void person(cove_realm_t* realm, const char* name, int64_t age, double score, const char* const* tags,
                   cove_object_t* const* dogs, const int64_t* nums, cove_object_t* best) {
    cove_object_t* p = NULL;
    cove_list_t* list = NULL;
    cove_set_t* set = NULL;
    cove_value_t v;
    size_t i;
    CHECK_OK(cove_object_create(realm, "Person", &p));
    v = string_value(name);
    CHECK_OK(cove_object_set(p, "name", &v));
    v = int_value(age);
    CHECK_OK(cove_object_set(p, "age", &v));
    v = score != score ? null_value() : double_value(score);
    CHECK_OK(cove_object_set(p, "score", &v));
    CHECK_OK(cove_object_get_list(p, "tags", &list));
    for (i = 0; tags[i]; i++) {
        v = string_value(tags[i]);
        CHECK_OK(cove_list_insert(list, i, &v));
    }
    cove_release(list);
    CHECK_OK(cove_object_get_list(p, "dogs", &list));
    for (i = 0; dogs[i]; i++) {
        v = link_to(dogs[i]);
        CHECK_OK(cove_list_insert(list, i, &v));
    }
    cove_release(list);
    CHECK_OK(cove_object_get_set(p, "nums", &set));
    for (i = 0; nums[i] >= 0; i++) {
        v = int_value(nums[i]);
        CHECK_OK(cove_set_insert(set, &v, NULL));
    }
    cove_release(set);
    if (best) {
        v = link_to(best);
        CHECK_OK(cove_object_set(p, "best", &v));
    }
    cove_release(p);
}

/* Five people and three dogs:
 *   Ann 31 8.5  [dev, admin] dogs [Rex, Fido] nums {1, 2, 3, 4}
 *   Bob 25 null []           dogs []          nums {}            best Rex
 *   Cid 40 3.0  [ops]        dogs [Max]       nums {7}
 *   Dee 25 9.75 [dev]        dogs [Rex]       nums {}
 *   Eve 31 null []           dogs [Rex, Rex]  nums {}
 *   Rex 3, Fido 5, Max 8 */
static cove_realm_t* open_with_data(const char* path) {
    static const char* const none[] = {NULL};
    static const char* const ann_tags[] = {"dev", "admin", NULL};
    static const char* const cid_tags[] = {"ops", NULL};
    static const char* const dee_tags[] = {"dev", NULL};
    static const int64_t no_nums[] = {-1};
    static const int64_t ann_nums[] = {3, 1, 4, 2, -1};
    static const int64_t cid_nums[] = {7, -1};
    cove_realm_t* realm = open_realm(path);
    cove_object_t *rex, *fido, *max;
    CHECK_OK(cove_begin_write(realm));
    rex = dog(realm, "Rex", 3);
    fido = dog(realm, "Fido", 5);
    max = dog(realm, "Max", 8);
    {
        cove_object_t* const no_dogs[] = {NULL};
        cove_object_t* const ann_dogs[] = {rex, fido, NULL};
        cove_object_t* const cid_dogs[] = {max, NULL};
        cove_object_t* const dee_dogs[] = {rex, NULL};
        cove_object_t* const eve_dogs[] = {rex, rex, NULL};
        person(realm, "Ann", 31, 8.5, ann_tags, ann_dogs, ann_nums, NULL);
        person(realm, "Bob", 25, NAN, none, no_dogs, no_nums, rex);
        person(realm, "Cid", 40, 3.0, cid_tags, cid_dogs, cid_nums, NULL);
        person(realm, "Dee", 25, 9.75, dee_tags, dee_dogs, no_nums, NULL);
        person(realm, "Eve", 31, NAN, none, eve_dogs, no_nums, NULL);
    }
    CHECK_OK(cove_commit(realm));
    cove_release(rex);
    cove_release(fido);
    cove_release(max);
    return realm;
}

/* The `name` of each object of the results, joined by commas, in `out`. */
static const char* names(cove_results_t* results) {
    static char out[256];
    size_t n = 0, i;
    out[0] = '\0';
    if (cove_results_count(results, &n) != COVE_OK) return "(count failed)";
    for (i = 0; i < n; i++) {
        cove_object_t* object = NULL;
        cove_value_t v = null_value();
        if (cove_results_get_object(results, i, &object) != COVE_OK) return "(get_object failed)";
        if (cove_object_get(object, "name", &v) != COVE_OK || v.type != COVE_TYPE_STRING) return "(get failed)";
        if (i > 0) strcat(out, ",");
        strncat(out, v.u.string.data, v.u.string.size);
        cove_release(object);
    }
    return out;
}

/* The elements of results of ints, joined by commas. */
static const char* ints(cove_results_t* results) {
    static char out[256];
    size_t n = 0, i;
    out[0] = '\0';
    if (cove_results_count(results, &n) != COVE_OK) return "(count failed)";
    for (i = 0; i < n; i++) {
        cove_value_t v = null_value();
        char number[32];
        if (cove_results_get_value(results, i, &v) != COVE_OK || v.type != COVE_TYPE_INT) return "(get_value failed)";
        snprintf(number, sizeof number, "%s%lld", i > 0 ? "," : "", (long long)v.u.integer);
        strcat(out, number);
    }
    return out;
}

static size_t count_of(cove_results_t* results) {
    size_t n = (size_t)-1;
    CHECK_OK(cove_results_count(results, &n));
    return n;
}

/* cove_query with the text alone, checked to succeed. */
static cove_results_t* query(cove_realm_t* realm, const char* class_name, const char* rql) {
    cove_results_t* results = NULL;
    CHECK_OK(cove_query(realm, class_name, rql, NULL, 0, &results));
    return results;
}

/* Whether the query selects exactly the objects named `expected` (comma-separated, in order). */
static int selects(cove_realm_t* realm, const char* class_name, const char* rql, const char* expected) {
    cove_results_t* r = query(realm, class_name, rql);
    int same = strcmp(names(r), expected) == 0;
    cove_release(r);
    return same;
}

static cove_object_t* find_person(cove_realm_t* realm, const char* name) {
    cove_value_t arg = string_value(name);
    cove_results_t* results = NULL;
    cove_object_t* object = NULL;
    CHECK_OK(cove_query(realm, "Person", "name == $0", &arg, 1, &results));
    CHECK_OK(cove_results_get_object(results, 0, &object));
    cove_release(results);
    return object;
}

static void test_query_filter_sort_distinct(void) {
    cove_realm_t* realm = open_with_data(NULL);
    cove_value_t args[2];
    cove_results_t *r = NULL, *f = NULL, *g = NULL, *s = NULL;

    /* $0 an int, $1 a string. */
    args[0] = int_value(25);
    args[1] = string_value("Cid");
    CHECK_OK(cove_query(realm, "Person", "age > $0 AND name != $1", args, 2, &r));
    CHECK(strcmp(names(r), "Ann,Eve") == 0);
    cove_release(r);
    /* %@ takes the arguments in order too. */
    CHECK_OK(cove_query(realm, "Person", "age == %@ OR name == %@", args, 2, &r));
    CHECK(strcmp(names(r), "Bob,Cid,Dee") == 0);
    cove_release(r);
    /* n_args 0 with args NULL. */
    r = query(realm, "Person", "TRUEPREDICATE");
    CHECK(count_of(r) == 5);
    CHECK(strcmp(names(r), "Ann,Bob,Cid,Dee,Eve") == 0);

    /* Chained filters leave their source as it was. */
    CHECK_OK(cove_results_filter(r, "score != nil", NULL, 0, &f));
    CHECK(strcmp(names(f), "Ann,Cid,Dee") == 0);
    CHECK_OK(cove_results_filter(f, "name BEGINSWITH[c] $0", &args[1], 1, &g));
    CHECK(strcmp(names(g), "Cid") == 0);
    CHECK(count_of(r) == 5);
    cove_release(g);
    cove_release(f);

    /* Sorts are stable: ties keep their order, descending too. */
    CHECK_OK(cove_results_sort(r, "age", true, &s));
    CHECK(strcmp(names(s), "Bob,Dee,Ann,Eve,Cid") == 0);
    cove_release(s);
    CHECK_OK(cove_results_sort(r, "age", false, &s));
    CHECK(strcmp(names(s), "Cid,Ann,Eve,Bob,Dee") == 0);
    /* Sorting again makes the new key the primary one; through a link. */
    CHECK_OK(cove_results_sort(s, "name", false, &g));
    CHECK(strcmp(names(g), "Eve,Dee,Cid,Bob,Ann") == 0);
    cove_release(g);
    cove_release(s);

    /* Distinct keeps the first of each value, in order. */
    CHECK_OK(cove_results_distinct(r, "age", &s));
    CHECK(strcmp(names(s), "Ann,Bob,Cid") == 0);
    CHECK_OK(cove_results_sort(s, "age", true, &g));
    CHECK(strcmp(names(g), "Bob,Ann,Cid") == 0);
    cove_release(g);
    cove_release(s);
    cove_release(r);

    /* SORT, DISTINCT, OFFSET and LIMIT in the text, applied left to right. */
    r = query(realm, "Person", "TRUEPREDICATE SORT(age ASC) OFFSET(1) LIMIT(2)");
    CHECK(strcmp(names(r), "Dee,Ann") == 0);
    cove_release(r);
    r = query(realm, "Person", "age < 40 DISTINCT(age) SORT(name DESC)");
    CHECK(strcmp(names(r), "Bob,Ann") == 0);
    CHECK_OK(cove_results_filter(r, "TRUEPREDICATE LIMIT(1)", NULL, 0, &f));
    CHECK(strcmp(names(f), "Bob") == 0);
    cove_release(f);
    cove_release(r);
    r = query(realm, "Person", "ANY dogs.age > 4 AND tags.@count >= 1");
    CHECK(strcmp(names(r), "Ann,Cid") == 0);
    cove_release(r);
    r = query(realm, "Dog", "name IN {'Max', 'Rex'} SORT(age DESC)");
    CHECK(strcmp(names(r), "Max,Rex") == 0);
    cove_release(r);
    cove_release(realm);
}

static void test_reads(void) {
    cove_realm_t* realm = open_with_data(NULL);
    cove_results_t* r = query(realm, "Person", "TRUEPREDICATE SORT(age DESC)");
    cove_object_t* object = NULL;
    cove_value_t v = null_value(), name = null_value();
    int64_t keys[8];
    size_t n = 99, i;

    /* get_object and get_value name the same objects; get_value gives links. */
    for (i = 0; i < 5; i++) {
        cove_value_t link;
        CHECK_OK(cove_results_get_object(r, i, &object));
        CHECK_OK(cove_results_get_value(r, i, &v));
        link = link_to(object);
        CHECK(v.type == COVE_TYPE_LINK && v.u.link.class_key == link.u.link.class_key &&
              v.u.link.object_key == link.u.link.object_key);
        cove_release(object);
    }
    CHECK_OK(cove_object_from_link(realm, &v, &object));
    CHECK_OK(cove_object_get(object, "name", &name));
    CHECK(name.u.string.size == 3 && memcmp(name.u.string.data, "Dee", 3) == 0);
    cove_release(object);

    /* Keys in batches from a start. */
    CHECK_OK(cove_results_get_keys(r, 1, 8, keys, &n));
    CHECK(n == 4);
    for (i = 0; i < n; i++) {
        cove_value_t link;
        CHECK_OK(cove_results_get_object(r, i + 1, &object));
        link = link_to(object);
        CHECK(keys[i] == link.u.link.object_key);
        cove_release(object);
    }
    CHECK_OK(cove_object_get_by_object_key(realm, "Person", keys[0], &object));
    CHECK_OK(cove_object_get(object, "name", &name));
    CHECK(name.u.string.size == 3 && memcmp(name.u.string.data, "Ann", 3) == 0);
    cove_release(object);
    CHECK_OK(cove_results_get_keys(r, 0, 2, keys, &n));
    CHECK(n == 2);
    CHECK_OK(cove_results_get_keys(r, 5, 8, keys, &n));
    CHECK(n == 0);
    CHECK_OK(cove_results_get_keys(r, 0, 0, NULL, &n));
    CHECK(n == 0);

    /* Out of range. */
    CHECK_FAILS(cove_results_get_object(r, 5, &object), COVE_ERR_OUT_OF_RANGE, "index 5 is out of range for results of 5");
    CHECK_FAILS(cove_results_get_value(r, 99, &v), COVE_ERR_OUT_OF_RANGE, "index 99");
    CHECK_FAILS(cove_results_get_value(r, (size_t)-1, &v), COVE_ERR_OUT_OF_RANGE, "index 18446744073709551615");
    CHECK_FAILS(cove_results_get_keys(r, 6, 8, keys, &n), COVE_ERR_OUT_OF_RANGE, "start 6");
    CHECK_FAILS(cove_results_get_keys(r, 0, 2, NULL, &n), COVE_ERR_INVALID_ARGUMENT, "out_keys is NULL with count 2");
    CHECK_FAILS(cove_results_get_keys(r, 0, 2, keys, NULL), COVE_ERR_INVALID_ARGUMENT, "out_n is NULL");
    CHECK_FAILS(cove_results_count(r, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    cove_release(r);
    cove_release(realm);
}

static void test_aggregates(void) {
    cove_realm_t* realm = open_with_data(NULL);
    cove_results_t* r = query(realm, "Person", "TRUEPREDICATE");
    cove_results_t* empty = query(realm, "Person", "age > 100");
    cove_value_t v = null_value();
    bool found = false;

    CHECK_OK(cove_results_min(r, "age", &v, &found));
    CHECK(found && v.type == COVE_TYPE_INT && v.u.integer == 25);
    CHECK_OK(cove_results_max(r, "score", &v, &found));
    CHECK(found && v.type == COVE_TYPE_DOUBLE && v.u.dnum == 9.75);
    CHECK_OK(cove_results_sum(r, "age", &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 152);
    CHECK_OK(cove_results_average(r, "score", &v, &found));
    CHECK(found && v.type == COVE_TYPE_DOUBLE && v.u.dnum == (8.5 + 3.0 + 9.75) / 3);
    CHECK_OK(cove_results_max(r, "best.age", &v, &found));
    CHECK(found && v.type == COVE_TYPE_INT && v.u.integer == 3);

    /* Nothing to aggregate: found false and a null, a sum of zero. */
    v = int_value(7);
    found = true;
    CHECK_OK(cove_results_min(empty, "age", &v, &found));
    CHECK(!found && v.type == COVE_TYPE_NULL);
    found = true;
    CHECK_OK(cove_results_max(empty, "score", &v, &found));
    CHECK(!found && v.type == COVE_TYPE_NULL);
    found = true;
    CHECK_OK(cove_results_average(empty, "score", &v, &found));
    CHECK(!found && v.type == COVE_TYPE_NULL);
    CHECK_OK(cove_results_sum(empty, "age", &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 0);
    /* Only nulls. */
    cove_release(empty);
    empty = query(realm, "Person", "score == nil");
    found = true;
    CHECK_OK(cove_results_average(empty, "score", &v, &found));
    CHECK(!found && v.type == COVE_TYPE_NULL);

    /* Errors. */
    CHECK_FAILS(cove_results_min(r, "name", &v, &found), COVE_ERR_WRONG_TYPE, "string");
    CHECK_FAILS(cove_results_sum(r, "name", &v), COVE_ERR_WRONG_TYPE, "string");
    CHECK_FAILS(cove_results_min(r, "nope", &v, &found), COVE_ERR_INVALID_ARGUMENT, "no property 'nope'");
    CHECK_FAILS(cove_results_min(r, NULL, &v, &found), COVE_ERR_INVALID_ARGUMENT, "need a property name");
    CHECK_FAILS(cove_results_sum(r, "tags", &v), COVE_ERR_INVALID_ARGUMENT, "collection");
    CHECK_FAILS(cove_results_min(r, "age", &v, NULL), COVE_ERR_INVALID_ARGUMENT, "out_found is NULL");
    CHECK_FAILS(cove_results_average(r, "age", NULL, &found), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    cove_release(empty);
    cove_release(r);
    cove_release(realm);
}

static void test_json_and_explain(void) {
    cove_realm_t* realm = open_with_data(NULL);
    cove_results_t* r = query(realm, "Dog", "age < 6 SORT(age ASC)");
    char* text = NULL;

    CHECK_OK(cove_results_to_json(r, &text));
    CHECK(text != NULL && strcmp(text, "[{\"name\":\"Rex\",\"age\":3},{\"name\":\"Fido\",\"age\":5}]") == 0);
    if (text && strcmp(text, "[{\"name\":\"Rex\",\"age\":3},{\"name\":\"Fido\",\"age\":5}]") != 0) fprintf(stderr, "  json: %s\n", text);
    cove_free(text);
    cove_release(r);

    /* An equality on an indexed property, and on the primary key, goes through the index. */
    r = query(realm, "Person", "age == 25 AND name BEGINSWITH 'D'");
    CHECK(strcmp(names(r), "Dee") == 0);
    text = NULL;
    CHECK_OK(cove_results_explain(r, &text));
    CHECK(text != NULL && strstr(text, "secondary index on Person.age") != NULL);
    cove_free(text);
    cove_release(r);
    r = query(realm, "Dog", "name == 'Max'");
    CHECK_OK(cove_results_explain(r, &text));
    CHECK(text != NULL && strstr(text, "primary-key index on Dog.name") != NULL);
    cove_free(text);
    cove_release(r);
    r = query(realm, "Person", "score > 1");
    CHECK_OK(cove_results_explain(r, &text));
    CHECK(text != NULL && strstr(text, "scan of 5 Person objects") != NULL);
    cove_free(text);
    CHECK_FAILS(cove_results_explain(r, NULL), COVE_ERR_INVALID_ARGUMENT, "out_text is NULL");
    CHECK_FAILS(cove_results_to_json(r, NULL), COVE_ERR_INVALID_ARGUMENT, "out_json is NULL");
    cove_release(r);

    /* A sort by a string and then a limit keeps the first few while the table is scanned,
       including the objects of the write in progress. */
    {
        static const char* const more[] = {"Zed", "Amy", "Kim", "Ian"};
        size_t k;
        CHECK_OK(cove_begin_write(realm));
        for (k = 0; k < 4; k++) {
            cove_object_t* p = NULL;
            cove_value_t name = string_value(more[k]), age = int_value(50);
            CHECK_OK(cove_object_create(realm, "Person", &p));
            CHECK_OK(cove_object_set(p, "name", &name));
            CHECK_OK(cove_object_set(p, "age", &age));
            cove_release(p);
        }
        /* Nine objects: a limit under a quarter of them is kept while scanning. */
        r = query(realm, "Person", "age > 24 SORT(name DESC) LIMIT(1)");
        CHECK(strcmp(names(r), "Zed") == 0);
        CHECK_OK(cove_results_explain(r, &text));
        CHECK(text != NULL && strstr(text, "keeping the first 1 by name DESC") != NULL);
        cove_free(text);
        cove_release(r);
        r = query(realm, "Person", "age > 24 SORT(name DESC) LIMIT(3)");
        CHECK(strcmp(names(r), "Zed,Kim,Ian") == 0);
        cove_release(r);
        CHECK_OK(cove_cancel_write(realm));
    }
    cove_release(realm);
}

static void test_lists_and_sets(void) {
    cove_realm_t* realm = open_with_data(NULL);
    cove_object_t *ann = find_person(realm, "Ann"), *object = NULL;
    cove_list_t *dogs = NULL, *tags = NULL;
    cove_set_t* nums = NULL;
    cove_results_t *r = NULL, *f = NULL, *s = NULL;
    cove_value_t v = null_value();
    int64_t keys[4];
    size_t n = 0;
    bool found = false;
    char* text = NULL;

    /* A list of objects: its results hold objects, in list order. */
    CHECK_OK(cove_object_get_list(ann, "dogs", &dogs));
    CHECK_OK(cove_list_as_results(dogs, &r));
    CHECK(strcmp(names(r), "Rex,Fido") == 0);
    CHECK_OK(cove_results_filter(r, "age > 4", NULL, 0, &f));
    CHECK(strcmp(names(f), "Fido") == 0);
    CHECK_OK(cove_results_get_value(f, 0, &v));
    CHECK(v.type == COVE_TYPE_LINK);
    CHECK_OK(cove_results_get_keys(f, 0, 4, keys, &n));
    CHECK(n == 1 && keys[0] == v.u.link.object_key);
    cove_release(f);
    CHECK_OK(cove_results_sort(r, "age", false, &f));
    CHECK(strcmp(names(f), "Fido,Rex") == 0);
    CHECK_OK(cove_results_sum(f, "age", &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 8);
    cove_release(f);
    cove_release(r);

    /* A list of values. */
    CHECK_OK(cove_object_get_list(ann, "tags", &tags));
    CHECK_OK(cove_list_as_results(tags, &r));
    CHECK_OK(cove_results_sort(r, "self", true, &s));
    CHECK_OK(cove_results_get_value(s, 0, &v));
    CHECK(v.type == COVE_TYPE_STRING && v.u.string.size == 5 && memcmp(v.u.string.data, "admin", 5) == 0);
    CHECK_OK(cove_results_to_json(s, &text));
    CHECK(text != NULL && strcmp(text, "[\"admin\",\"dev\"]") == 0);
    cove_free(text);
    CHECK_FAILS(cove_results_get_object(s, 0, &object), COVE_ERR_WRONG_TYPE, "list 'tags' of class 'Person' (string[]), not objects");
    CHECK_FAILS(cove_results_get_keys(s, 0, 4, keys, &n), COVE_ERR_WRONG_TYPE, "no object keys");
    cove_release(s);
    cove_release(r);

    /* A set of values: `self` names the element; aggregates take NULL. */
    CHECK_OK(cove_object_get_set(ann, "nums", &nums));
    CHECK_OK(cove_set_as_results(nums, &r));
    CHECK(strcmp(ints(r), "1,2,3,4") == 0);
    CHECK_OK(cove_results_filter(r, "self > 2", NULL, 0, &f));
    CHECK(strcmp(ints(f), "3,4") == 0);
    CHECK_OK(cove_results_sum(f, NULL, &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 7);
    CHECK_OK(cove_results_min(r, NULL, &v, &found));
    CHECK(found && v.type == COVE_TYPE_INT && v.u.integer == 1);
    CHECK_OK(cove_results_average(r, NULL, &v, &found));
    CHECK(found && v.type == COVE_TYPE_DOUBLE && v.u.dnum == 2.5);
    CHECK_OK(cove_results_sort(f, "self", false, &s));
    CHECK(strcmp(ints(s), "4,3") == 0);
    CHECK_FAILS(cove_results_min(r, "age", &v, &found), COVE_ERR_INVALID_ARGUMENT, "hold values");
    CHECK_FAILS(cove_results_filter(r, "self > 'x'", NULL, 0, &s), COVE_ERR_INVALID_ARGUMENT, "cannot compare");
    cove_release(s);
    cove_release(f);

    /* The results follow the set. */
    CHECK_OK(cove_begin_write(realm));
    v = int_value(10);
    CHECK_OK(cove_set_insert(nums, &v, NULL));
    CHECK(strcmp(ints(r), "1,2,3,4,10") == 0);
    CHECK_OK(cove_commit(realm));
    CHECK(count_of(r) == 5);
    cove_release(r);

    CHECK_FAILS(cove_list_as_results((cove_list_t*)nums, &r), COVE_ERR_INVALID_ARGUMENT, "list is a cove_set_t, expected a cove_list_t");
    CHECK_FAILS(cove_set_as_results(NULL, &r), COVE_ERR_INVALID_ARGUMENT, "set is NULL");
    CHECK_FAILS(cove_set_as_results(nums, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    cove_release(nums);
    cove_release(tags);
    cove_release(dogs);
    cove_release(ann);
    cove_release(realm);
}

static void test_liveness_freeze_thaw(void) {
    cove_realm_t* realm = open_with_data("live.cove");
    cove_results_t* r = query(realm, "Person", "age > 30 SORT(age DESC)");
    cove_results_t *frozen = NULL, *again = NULL, *thawed = NULL;
    cove_object_t* p = NULL;
    cove_value_t v;
    bool flag = false;

    CHECK(count_of(r) == 3);
    CHECK_OK(cove_results_freeze(r, &frozen));
    CHECK_OK(cove_is_frozen(frozen, &flag));
    CHECK(flag);
    CHECK_OK(cove_is_frozen(r, &flag));
    CHECK(!flag);
    CHECK_OK(cove_results_freeze(frozen, &again));
    CHECK(again == frozen);
    cove_release(again);

    /* A write in progress shows on the same thread; a cancel takes it back. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Person", &p));
    v = int_value(50);
    CHECK_OK(cove_object_set(p, "age", &v));
    v = string_value("Fay");
    CHECK_OK(cove_object_set(p, "name", &v));
    CHECK(count_of(r) == 4);
    CHECK(strcmp(names(r), "Fay,Cid,Ann,Eve") == 0);
    CHECK_FAILS(cove_results_freeze(r, &again), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_cancel_write(realm));
    cove_release(p);
    CHECK(count_of(r) == 3);

    /* After a commit too. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Person", &p));
    v = int_value(60);
    CHECK_OK(cove_object_set(p, "age", &v));
    v = string_value("Gus");
    CHECK_OK(cove_object_set(p, "name", &v));
    CHECK(count_of(r) == 4);
    CHECK_OK(cove_commit(realm));
    CHECK(count_of(r) == 4);
    CHECK(strcmp(names(r), "Gus,Cid,Ann,Eve") == 0);

    /* Frozen results keep their version. */
    CHECK(count_of(frozen) == 3);
    CHECK(strcmp(names(frozen), "Cid,Ann,Eve") == 0);
    CHECK_OK(cove_results_thaw(frozen, realm, &thawed));
    CHECK(thawed != NULL);
    CHECK(strcmp(names(thawed), "Gus,Cid,Ann,Eve") == 0);
    CHECK_OK(cove_is_frozen(thawed, &flag));
    CHECK(!flag);
    cove_release(thawed);
    {
        cove_realm_t* frozen_realm = NULL;
        CHECK_OK(cove_freeze(realm, &frozen_realm));
        CHECK_FAILS(cove_results_thaw(frozen, frozen_realm, &thawed), COVE_ERR_INVALID_ARGUMENT, "live is a frozen realm");
        cove_release(frozen_realm);
    }
    CHECK_FAILS(cove_results_thaw(frozen, NULL, &thawed), COVE_ERR_INVALID_ARGUMENT, "live is NULL");
    CHECK_FAILS(cove_results_thaw((cove_results_t*)realm, realm, &thawed), COVE_ERR_INVALID_ARGUMENT,
                "frozen is a cove_realm_t, expected a cove_results_t");
    CHECK_FAILS(cove_results_filter(frozen, "age >", NULL, 0, &again), COVE_ERR_QUERY_SYNTAX, "position");
    CHECK_OK(cove_results_filter(frozen, "name != 'Cid'", NULL, 0, &again));
    CHECK(strcmp(names(again), "Ann,Eve") == 0);
    CHECK_OK(cove_is_frozen(again, &flag));
    CHECK(flag);
    cove_release(again);

    /* Releasing the live realm first is fine: the frozen results keep their own. */
    cove_release(p);
    cove_release(r);
    cove_release(realm);
    CHECK(count_of(frozen) == 3);
    cove_release(frozen);
}

/* Frozen results read by several threads at once: objects (links) and strings. */
struct reader {
    cove_results_t* people;
    cove_results_t* tags;
    int failures;
};

static void* read_frozen(void* arg) {
    struct reader* reader = arg;
    int round;
    for (round = 0; round < 200; round++) {
        size_t n = 0, i;
        cove_value_t v;
        if (cove_results_count(reader->people, &n) != COVE_OK || n != 5) reader->failures++;
        for (i = 0; i < n; i++) {
            if (cove_results_get_value(reader->people, i, &v) != COVE_OK || v.type != COVE_TYPE_LINK) reader->failures++;
        }
        if (cove_results_get_value(reader->tags, 0, &v) != COVE_OK || v.type != COVE_TYPE_STRING ||
            v.u.string.size != 3 || memcmp(v.u.string.data, "dev", 3) != 0)
            reader->failures++;
    }
    return NULL;
}

static void test_frozen_threads(void) {
    cove_realm_t* realm = open_with_data("threads.cove");
    cove_object_t* ann = find_person(realm, "Ann");
    cove_list_t* tags = NULL;
    cove_results_t *r = NULL, *sorted = NULL, *people = NULL, *all_tags = NULL, *frozen_tags = NULL;
    struct reader readers[4];
    pthread_t threads[4];
    int i;
    r = query(realm, "Person", "TRUEPREDICATE");
    CHECK_OK(cove_results_sort(r, "age", true, &sorted));
    CHECK_OK(cove_results_freeze(sorted, &people));
    cove_release(r);
    CHECK_OK(cove_object_get_list(ann, "tags", &tags));
    CHECK_OK(cove_list_as_results(tags, &all_tags));
    CHECK_OK(cove_results_freeze(all_tags, &frozen_tags));
    for (i = 0; i < 4; i++) {
        readers[i].people = people;
        readers[i].tags = frozen_tags;
        readers[i].failures = 0;
        CHECK(pthread_create(&threads[i], NULL, read_frozen, &readers[i]) == 0);
    }
    for (i = 0; i < 4; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK(readers[i].failures == 0);
    }
    cove_release(frozen_tags);
    cove_release(people);
    cove_release(sorted);
    cove_release(all_tags);
    cove_release(tags);
    cove_release(ann);
    cove_release(realm);
}

/* Eve's list holds Rex twice: taking one out leaves one backlink, a move keeps both, and
 * clearing the list takes both. */
static void test_backlinks_of_eve(cove_realm_t* realm, cove_object_t* rex, cove_results_t* owners) {
    cove_object_t* eve = find_person(realm, "Eve");
    cove_list_t* dogs = NULL;
    cove_value_t v = link_to(rex);
    CHECK_OK(cove_object_get_list(eve, "dogs", &dogs));
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_list_erase(dogs, 1));
    CHECK(strcmp(names(owners), "Ann,Bob,Dee,Eve") == 0);
    CHECK_OK(cove_list_insert(dogs, 0, &v));
    CHECK_OK(cove_list_move(dogs, 0, 1));
    CHECK(strcmp(names(owners), "Ann,Bob,Dee,Eve,Eve") == 0);
    CHECK(selects(realm, "Dog", "@links.Person.dogs.@count == 5", "Rex"));
    CHECK_OK(cove_list_clear(dogs));
    CHECK(strcmp(names(owners), "Ann,Bob,Dee") == 0);
    CHECK_OK(cove_list_insert(dogs, 0, &v));
    CHECK_OK(cove_list_insert(dogs, 0, &v));
    CHECK_OK(cove_commit(realm));
    CHECK(strcmp(names(owners), "Ann,Bob,Dee,Eve,Eve") == 0);
    /* Deleting the owner takes both of its links. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(eve));
    CHECK_OK(cove_commit(realm));
    CHECK(strcmp(names(owners), "Ann,Bob,Dee") == 0);
    CHECK(selects(realm, "Dog", "owners.@count == 3", "Rex"));
    cove_release(dogs);
    cove_release(eve);
}

static void test_backlinks(void) {
    cove_realm_t* realm = open_with_data(NULL);
    cove_value_t pk = string_value("Rex"), v;
    cove_object_t *rex = NULL, *max = NULL, *bob = NULL;
    cove_results_t *owners = NULL, *fans = NULL, *f = NULL;
    cove_list_t* dogs = NULL;

    CHECK_OK(cove_object_find(realm, "Dog", &pk, &rex));
    /* A list of links: each link counts, so Eve, whose list holds Rex twice, is there twice. */
    CHECK_OK(cove_object_get_backlinks(rex, "owners", &owners));
    CHECK(strcmp(names(owners), "Ann,Dee,Eve,Eve") == 0);
    CHECK_OK(cove_results_filter(owners, "age > 30", NULL, 0, &f));
    CHECK(strcmp(names(f), "Ann,Eve,Eve") == 0);
    cove_release(f);
    CHECK(selects(realm, "Dog", "owners.@count == 4 AND @links.Person.dogs.@count == 4", "Rex"));
    /* A single link. */
    CHECK_OK(cove_object_get_backlinks(rex, "fans", &fans));
    CHECK(strcmp(names(fans), "Bob") == 0);
    pk = string_value("Max");
    CHECK_OK(cove_object_find(realm, "Dog", &pk, &max));
    CHECK_OK(cove_object_get_backlinks(max, "fans", &f));
    CHECK(count_of(f) == 0);
    cove_release(f);

    /* Live. */
    bob = find_person(realm, "Bob");
    CHECK_OK(cove_object_get_list(bob, "dogs", &dogs));
    CHECK_OK(cove_begin_write(realm));
    v = link_to(rex);
    CHECK_OK(cove_list_insert(dogs, 0, &v));
    CHECK(strcmp(names(owners), "Ann,Bob,Dee,Eve,Eve") == 0);
    CHECK_OK(cove_commit(realm));
    CHECK(count_of(owners) == 5);
    test_backlinks_of_eve(realm, rex, owners);

    CHECK_FAILS(cove_object_get_backlinks(rex, "name", &f), COVE_ERR_WRONG_TYPE, "property 'name' of class 'Dog' is string, not backlinks");
    CHECK_FAILS(cove_object_get_backlinks(rex, "nope", &f), COVE_ERR_NOT_FOUND, "class 'Dog' has no property 'nope'");
    CHECK_FAILS(cove_object_get_backlinks(rex, NULL, &f), COVE_ERR_INVALID_ARGUMENT, "property is NULL");
    CHECK_FAILS(cove_object_get_backlinks((cove_object_t*)owners, "owners", &f), COVE_ERR_INVALID_ARGUMENT,
                "object is a cove_results_t, expected a cove_object_t");

    /* A deleted object: nothing links to it any more. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(rex));
    CHECK(count_of(owners) == 0);
    CHECK_OK(cove_commit(realm));
    CHECK(count_of(fans) == 0);
    CHECK_FAILS(cove_object_get_backlinks(rex, "owners", &f), COVE_ERR_INVALIDATED, "was deleted");

    cove_release(dogs);
    cove_release(bob);
    cove_release(fans);
    cove_release(owners);
    cove_release(max);
    cove_release(rex);
    cove_release(realm);
}

static void test_errors(void) {
    cove_realm_t* realm = open_with_data(NULL);
    cove_results_t *r = query(realm, "Person", "TRUEPREDICATE"), *out = NULL;
    cove_value_t args[2];
    size_t n = 0;
    char bad[] = {'a', (char)0xff, 0};

    /* Syntax: the engine's message, with the position. */
    CHECK_FAILS(cove_query(realm, "Person", "age >", NULL, 0, &out), COVE_ERR_QUERY_SYNTAX, "expected a value at position 6");
    CHECK_FAILS(cove_query(realm, "Person", "", NULL, 0, &out), COVE_ERR_QUERY_SYNTAX, "position");
    CHECK_FAILS(cove_query(realm, "Person", "age > 3 LIMIT(-1)", NULL, 0, &out), COVE_ERR_QUERY_SYNTAX, "position");
    CHECK_FAILS(cove_results_filter(r, "name ==", NULL, 0, &out), COVE_ERR_QUERY_SYNTAX, "position");
    CHECK(out == NULL);

    /* Meaning: found when the query is made, not at the first read. */
    CHECK_FAILS(cove_query(realm, "Person", "nope > 1", NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT, "no property 'nope'");
    CHECK_FAILS(cove_results_filter(r, "nope > 1", NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT, "no property 'nope'");
    CHECK_FAILS(cove_query(realm, "Person", "age > 'x'", NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT, "cannot compare 'age' (int) with string");
    args[0] = string_value("x");
    CHECK_FAILS(cove_query(realm, "Person", "age > $0", args, 1, &out), COVE_ERR_INVALID_ARGUMENT, "cannot compare");
    args[0] = int_value(1);
    CHECK_FAILS(cove_query(realm, "Person", "age > $1", args, 1, &out), COVE_ERR_INVALID_ARGUMENT, "out of range");
    CHECK_FAILS(cove_results_sort(r, "nope", true, &out), COVE_ERR_INVALID_ARGUMENT, "no property 'nope'");
    CHECK_FAILS(cove_results_sort(r, "tags", true, &out), COVE_ERR_INVALID_ARGUMENT, "cannot sort on 'tags'");
    CHECK_FAILS(cove_results_distinct(r, "dogs", &out), COVE_ERR_INVALID_ARGUMENT, "dogs");
    CHECK_FAILS(cove_query(realm, "Nope", "TRUEPREDICATE", NULL, 0, &out), COVE_ERR_NOT_FOUND, "no class 'Nope'");
    CHECK(out == NULL);

    /* Arguments. */
    CHECK_FAILS(cove_query(realm, "Person", "age > $0", NULL, 2, &out), COVE_ERR_INVALID_ARGUMENT, "args is NULL with n_args 2");
    CHECK_FAILS(cove_results_filter(r, "age > $0", NULL, 1, &out), COVE_ERR_INVALID_ARGUMENT, "args is NULL with n_args 1");
    args[0] = int_value(1);
    args[1] = string_value(bad);
    CHECK_FAILS(cove_query(realm, "Person", "age > $0 AND name == $1", args, 2, &out), COVE_ERR_INVALID_ARGUMENT,
                "args[1] ($1): argument is a string that is not valid UTF-8");
    args[1].type = 99;
    CHECK_FAILS(cove_query(realm, "Person", "age > $0", args, 2, &out), COVE_ERR_INVALID_ARGUMENT, "args[1] ($1): argument has type tag 99");
    CHECK_FAILS(cove_query(realm, "Person", "age > 1", args, (size_t)-1, &out), COVE_ERR_INVALID_ARGUMENT, "n_args 18446744073709551615 is too large");
    CHECK_FAILS(cove_query(realm, "Person", bad, NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT, "rql is not valid UTF-8");
    CHECK_FAILS(cove_query(realm, "Person", NULL, NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT, "rql is NULL");
    CHECK_FAILS(cove_query(realm, NULL, "TRUEPREDICATE", NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT, "class_name is NULL");
    CHECK_FAILS(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_results_sort(r, NULL, true, &out), COVE_ERR_INVALID_ARGUMENT, "key_path is NULL");
    CHECK(out == NULL);

    /* Handles: NULL and the wrong kind. */
    CHECK_FAILS(cove_results_count(NULL, &n), COVE_ERR_INVALID_ARGUMENT, "results is NULL");
    CHECK_FAILS(cove_results_count((cove_results_t*)realm, &n), COVE_ERR_INVALID_ARGUMENT,
                "results is a cove_realm_t, expected a cove_results_t");
    CHECK_FAILS(cove_query(NULL, "Person", "TRUEPREDICATE", NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT, "realm is NULL");
    CHECK_FAILS(cove_query((cove_realm_t*)r, "Person", "TRUEPREDICATE", NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT,
                "realm is a cove_results_t, expected a cove_realm_t");
    CHECK_FAILS(cove_results_freeze(NULL, &out), COVE_ERR_INVALID_ARGUMENT, "results is NULL");
    {
        bool valid = false;
        CHECK_FAILS(cove_results_is_valid(NULL, &valid), COVE_ERR_INVALID_ARGUMENT, "results is NULL");
        CHECK_OK(cove_results_is_valid(r, &valid));
        CHECK(valid);
    }

    /* A closed realm. */
    CHECK_OK(cove_close(realm));
    CHECK_FAILS(cove_results_count(r, &n), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &out), COVE_ERR_CLOSED, "closed");
    {
        bool valid = true;
        CHECK_OK(cove_results_is_valid(r, &valid));
        CHECK(!valid);
    }
    cove_release(r);
    cove_release(realm);
}

/* `@type` on mixed values, and comparisons RQL calls type errors: COVE_ERR_INVALID_ARGUMENT
 * naming the property and the problem, from the call that makes the results. */
static void test_type_attribute_and_type_errors(void) {
    static const char* const things =
        "{\"Thing\": {\"properties\": {\"name\": \"string\", \"n\": \"int\", \"extra\": \"mixed\","
        "   \"many\": \"mixed[]\", \"tags\": \"string[]\", \"tags2\": \"string[]\", \"dogs\": \"Dog[]\"}},"
        " \"Dog\": {\"properties\": {\"name\": \"string\", \"age\": \"int\", \"owners\": \"@links(Thing.dogs)\"}}}";
    cove_realm_t* realm = open_schema(NULL, things, 1);
    cove_object_t *o = NULL, *rex = NULL;
    cove_list_t* many = NULL;
    cove_results_t *r = NULL, *out = NULL;
    cove_value_t v, args[1];
    const char* names_of[] = {"int", "double", "float", "string", "bool", "link", "null"};
    static const struct { const char* class_name; const char* rql; const char* message; } bad[] = {
        {"Thing", "extra.@type == 'nope'", "'extra.@type': unknown type name 'nope'"},
        {"Thing", "n.@type == 'int'", "@type applies to mixed values, but 'n' is int"},
        {"Thing", "extra.@type > 'int'", "@type compares with ==, != and IN only"},
        {"Thing", "dogs == nil", "cannot compare 'dogs' (a list of Dog objects) with null"},
        {"Dog", "owners != nil", "'owners' (backlinks from Thing.dogs)"},
        {"Thing", "tags == tags2", "cannot compare two collections, 'tags' and 'tags2'"},
        {"Thing", "dogs.age == many", "'dogs.age' and 'many'"},
        {"Thing", "tags.@sum > 1", "@sum needs numbers, but 'tags.@sum' is string"},
        {"Thing", "dogs.@avg > 1", "@avg over 'dogs' needs a property of the Dog objects"},
        {"Thing", "dogs.@avg.name > 1", "'dogs.@avg.name' is string"},
    };
    size_t i;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &rex));
    for (i = 0; i < 7; i++) {
        CHECK_OK(cove_object_create(realm, "Thing", &o));
        v = string_value(names_of[i]);
        CHECK_OK(cove_object_set(o, "name", &v));
        switch (i) {
        case 0: v = int_value(4); break;
        case 1: v = double_value(2.5); break;
        case 2: v = null_value(); v.type = COVE_TYPE_FLOAT; v.u.fnum = 1.5f; break;
        case 3: v = string_value("s"); break;
        case 4: v = null_value(); v.type = COVE_TYPE_BOOL; v.u.boolean = true; break;
        case 5: v = link_to(rex); break;
        default: v = null_value(); break;
        }
        CHECK_OK(cove_object_set(o, "extra", &v));
        if (i == 0) {
            CHECK_OK(cove_object_get_list(o, "many", &many));
            v = string_value("a");
            CHECK_OK(cove_list_insert(many, 0, &v));
            cove_release(many);
        }
        cove_release(o);
    }
    CHECK_OK(cove_commit(realm));

    CHECK(selects(realm, "Thing", "extra.@type == 'numeric'", "int,double,float"));
    CHECK(selects(realm, "Thing", "extra.@type IN {'string', 'object', 'null'}", "string,link,null"));
    CHECK(selects(realm, "Thing", "extra.@type != 'numeric' AND extra.@type != 'Bool'", "string,link,null"));
    args[0] = string_value("float");
    CHECK_OK(cove_query(realm, "Thing", "extra.@type == $0", args, 1, &r));
    CHECK(strcmp(names(r), "float") == 0);
    cove_release(r);
    CHECK(selects(realm, "Thing", "ANY many.@type == 'string'", "int"));

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_FAILS(cove_query(realm, bad[i].class_name, bad[i].rql, NULL, 0, &out), COVE_ERR_INVALID_ARGUMENT, bad[i].message);
    }
    args[0] = int_value(1);
    CHECK_FAILS(cove_query(realm, "Thing", "extra.@type == $0", args, 1, &out), COVE_ERR_INVALID_ARGUMENT, "got int 1");
    CHECK(out == NULL);
    /* A list of mixed sums its numbers. */
    CHECK(selects(realm, "Thing", "many.@sum == 0 AND many.@count == 1", "int"));

    cove_release(rex);
    cove_release(realm);
}

static void test_deleted_owner(void) {
    cove_realm_t* realm = open_with_data(NULL);
    cove_object_t* ann = find_person(realm, "Ann");
    cove_list_t* dogs = NULL;
    cove_set_t* nums = NULL;
    cove_results_t *r = NULL, *s = NULL, *frozen = NULL, *out = NULL;
    size_t n = 0;
    bool valid = false;

    CHECK_OK(cove_object_get_list(ann, "dogs", &dogs));
    CHECK_OK(cove_object_get_set(ann, "nums", &nums));
    CHECK_OK(cove_list_as_results(dogs, &r));
    CHECK_OK(cove_set_as_results(nums, &s));
    CHECK_OK(cove_results_freeze(r, &frozen));
    CHECK_OK(cove_results_is_valid(r, &valid));
    CHECK(valid);

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(ann));
    CHECK_FAILS(cove_results_count(r, &n), COVE_ERR_INVALIDATED, "deleted");
    CHECK_OK(cove_commit(realm));
    CHECK_FAILS(cove_results_count(r, &n), COVE_ERR_INVALIDATED, "deleted");
    CHECK_FAILS(cove_results_count(s, &n), COVE_ERR_INVALIDATED, "deleted");
    CHECK_FAILS(cove_results_filter(r, "age > 1", NULL, 0, &out), COVE_ERR_INVALIDATED, "deleted");
    CHECK_FAILS(cove_results_freeze(r, &out), COVE_ERR_INVALIDATED, "deleted");
    CHECK_FAILS(cove_list_as_results(dogs, &out), COVE_ERR_INVALIDATED, "the Person object");
    CHECK_FAILS(cove_set_as_results(nums, &out), COVE_ERR_INVALIDATED, "set 'nums' of class 'Person' was deleted");
    CHECK_OK(cove_results_is_valid(r, &valid));
    CHECK(!valid);
    CHECK(out == NULL);

    /* The frozen results still read the old version; thawing them finds no owner. */
    CHECK(strcmp(names(frozen), "Rex,Fido") == 0);
    CHECK_OK(cove_results_is_valid(frozen, &valid));
    CHECK(valid);
    out = (cove_results_t*)frozen;
    CHECK_OK(cove_results_thaw(frozen, realm, &out));
    CHECK(out == NULL);

    cove_release(frozen);
    cove_release(s);
    cove_release(r);
    cove_release(nums);
    cove_release(dogs);
    cove_release(ann);
    cove_release(realm);
}

int main(void) {
    test_query_filter_sort_distinct();
    test_reads();
    test_aggregates();
    test_json_and_explain();
    test_lists_and_sets();
    test_liveness_freeze_thaw();
    test_frozen_threads();
    test_backlinks();
    test_errors();
    test_type_attribute_and_type_errors();
    test_deleted_owner();
    return check_summary("test_queries");
}
