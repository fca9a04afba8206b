/* Objects created with their primary key and then filled with cove_object_set_by_key in the same
 * write (more of them than a table keeps pending, so some are written mid-way): against the same
 * objects made by cove_object_create_with_values, the same values inside and after the write,
 * the same primary-key lookups, index queries, backlinks and change sets delivered, and a file
 * that verifies. Runs in an empty working directory. */
#include <cove.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    "   \"age\": \"int\", \"dog\": \"Dog?\"}, \"indexed\": [\"age\"]},"
    " \"Dog\": {\"properties\": {\"name\": \"string\", \"owners\": \"@links(Person.dog)\"}}}";

#define PEOPLE 3000

static char names[PEOPLE][16];

/* Person i: id 3i in a shuffled order of creation, name, age i % 50, and a dog every third. */
static int64_t id_of(int i) { return (int64_t)((i * 1237) % PEOPLE) * 3; }

typedef struct {
    int calls, insertions, modifications, deletions;
} change_log;

static void record(void* userdata, const cove_collection_changes_t* changes) {
    change_log* log = userdata;
    log->calls++;
    if (cove_changes_is_initial(changes)) return;
    log->insertions += (int)cove_changes_insertions(changes, NULL);
    log->modifications += (int)cove_changes_modifications(changes, NULL);
    log->deletions += (int)cove_changes_deletions(changes, NULL);
}

/* Whether `o` holds person i's values. */
static int holds(cove_object_t* o, int i) {
    cove_value_t v;
    int ok = 1;
    ok &= cove_object_get(o, "id", &v) == COVE_OK && v.type == COVE_TYPE_INT && v.u.integer == id_of(i);
    ok &= cove_object_get(o, "name", &v) == COVE_OK && is_string(&v, names[i]);
    ok &= cove_object_get(o, "age", &v) == COVE_OK && v.type == COVE_TYPE_INT && v.u.integer == i % 50;
    ok &= cove_object_get(o, "dog", &v) == COVE_OK && (i % 3 == 0 ? v.type == COVE_TYPE_LINK : v.type == COVE_TYPE_NULL);
    return ok;
}

/* Creates the people in one write, filled one property at a time (`filled`) or with all their
 * values; returns the realm, its dog and what its observer of every person received. */
static cove_realm_t* make(const char* path, int filled, cove_object_t** out_dog, change_log* log) {
    cove_realm_t* realm = open_schema(path, SCHEMA, 1);
    cove_results_t* all = NULL;
    cove_token_t* token = NULL;
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &all));
    CHECK_OK(cove_results_observe(all, NULL, 0, record, log, NULL, &token));
    CHECK_OK(cove_deliver(realm));
    int64_t name_key = 0, age_key = 0, dog_key = 0;
    CHECK_OK(cove_property_key(realm, "Person", "name", &name_key));
    CHECK_OK(cove_property_key(realm, "Person", "age", &age_key));
    CHECK_OK(cove_property_key(realm, "Person", "dog", &dog_key));

    CHECK_OK(cove_begin_write(realm));
    cove_object_t* dog = NULL;
    const char* dog_names[] = {"name"};
    cove_value_t rex = string_value("rex");
    CHECK_OK(cove_object_create_with_values(realm, "Dog", dog_names, 1, &rex, &dog));
    cove_value_t to_dog = link_to(dog);
    int right = 0;
    for (int i = 0; i < PEOPLE; i++) {
        cove_object_t* p = NULL;
        cove_value_t id = int_value(id_of(i)), name = string_value(names[i]), age = int_value(i % 50);
        cove_value_t link = i % 3 == 0 ? to_dog : null_value();
        if (filled) {
            CHECK_OK(cove_object_create_with_primary_key(realm, "Person", &id, &p));
            CHECK_OK(cove_object_set_by_key(p, name_key, &name));
            if (i % 4 == 0) { /* an age set twice */
                cove_value_t other = int_value(99);
                CHECK_OK(cove_object_set_by_key(p, age_key, &other));
            }
            CHECK_OK(cove_object_set_by_key(p, age_key, &age));
            CHECK_OK(cove_object_set_by_key(p, dog_key, &link));
        } else {
            const char* props[] = {"id", "name", "age", "dog"};
            cove_value_t values[] = {id, name, age, link};
            CHECK_OK(cove_object_create_with_values(realm, "Person", props, 4, values, &p));
        }
        right += holds(p, i); /* read back at once, inside the write */
        cove_release(p);
    }
    CHECK(right == PEOPLE);
    /* Inside the write: lookups, index and backlinks see every object. */
    cove_value_t seven = int_value(7);
    CHECK(query_count(realm, "Person", "age == $0", &seven, 1) == PEOPLE / 50);
    cove_results_t* owners = NULL;
    size_t n = 0;
    CHECK_OK(cove_object_get_backlinks(dog, "owners", &owners));
    CHECK_OK(cove_results_count(owners, &n));
    CHECK(n == (PEOPLE + 2) / 3);
    cove_release(owners);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_refresh(realm, NULL));
    *out_dog = dog;
    cove_release(token);
    cove_release(all);
    return realm;
}

int main(void) {
    for (int i = 0; i < PEOPLE; i++) snprintf(names[i], sizeof names[i], "p%d", i);
    change_log filled_log = {0}, whole_log = {0};
    cove_object_t *filled_dog = NULL, *whole_dog = NULL;
    cove_realm_t* filled = make("filled.cove", 1, &filled_dog, &filled_log);
    cove_realm_t* whole = make("whole.cove", 0, &whole_dog, &whole_log);

    /* The change sets: every person inserted, none also modified. */
    CHECK(filled_log.calls == 2 && whole_log.calls == 2);
    CHECK(filled_log.insertions == PEOPLE && whole_log.insertions == PEOPLE);
    CHECK(filled_log.modifications == 0 && whole_log.modifications == 0);
    CHECK(filled_log.deletions == 0 && whole_log.deletions == 0);

    /* After the commit: the same objects under the same keys, found by primary key. */
    int same = 0;
    for (int i = 0; i < PEOPLE; i++) {
        cove_value_t id = int_value(id_of(i));
        cove_object_t *a = NULL, *b = NULL;
        CHECK_OK(cove_object_find(filled, "Person", &id, &a));
        CHECK_OK(cove_object_find(whole, "Person", &id, &b));
        if (a && b)
            same += link_to(a).u.link.object_key == link_to(b).u.link.object_key && holds(a, i) && holds(b, i);
        cove_release(a);
        cove_release(b);
    }
    CHECK(same == PEOPLE);
    /* The age index and the dog's backlinks. */
    for (int64_t age = 0; age < 50; age += 7) {
        cove_value_t v = int_value(age);
        CHECK(query_count(filled, "Person", "age == $0", &v, 1) == query_count(whole, "Person", "age == $0", &v, 1));
        CHECK(query_count(filled, "Person", "age == $0", &v, 1) == PEOPLE / 50);
    }
    cove_value_t ninety_nine = int_value(99);
    CHECK(query_count(filled, "Person", "age == $0", &ninety_nine, 1) == 0);
    size_t owners_filled = 0, owners_whole = 0;
    cove_results_t* owners = NULL;
    CHECK_OK(cove_object_get_backlinks(filled_dog, "owners", &owners));
    CHECK_OK(cove_results_count(owners, &owners_filled));
    cove_release(owners);
    CHECK_OK(cove_object_get_backlinks(whole_dog, "owners", &owners));
    CHECK_OK(cove_results_count(owners, &owners_whole));
    cove_release(owners);
    CHECK(owners_filled == (PEOPLE + 2) / 3 && owners_whole == owners_filled);

    char* report = NULL;
    CHECK_OK(cove_verify(filled, &report));
    cove_free(report);
    CHECK_OK(cove_verify(whole, &report));
    cove_free(report);
    cove_release(filled_dog);
    cove_release(whole_dog);
    cove_release(filled);
    cove_release(whole);
    return check_summary("test_fill_then_set");
}
