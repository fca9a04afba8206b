/* Notifications through the C API: the initial call at the first delivery, exact change sets of
 * results, lists (with moves and clears), sets and maps (by key), object changes with old and new
 * values, exact key-path filters, commits of another realm handle merged into one change,
 * tokens released inside their own callbacks, user data freed exactly once, the refusals of
 * registration, and the notification descriptor and cove_wait_for_change. */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Person\": {\"properties\": {\"name\": \"string\", \"age\": \"int\", \"dog\": \"Dog?\","
    "   \"tags\": \"string[]\", \"nums\": \"int<>\", \"scores\": \"double{}\", \"dogs\": \"Dog[]\"}},"
    " \"Dog\": {\"properties\": {\"name\": \"string\", \"age\": \"int\"}},"
    " \"Other\": {\"properties\": {\"x\": \"int\"}}}";

static cove_realm_t* open_realm(const char* path) {
    return open_schema(path, SCHEMA, 1);
}

/* An index list for same(): IDX(0, 2) expands to the array and its length. */
#define IDX(...) ((const size_t[]){__VA_ARGS__}), (sizeof((const size_t[]){__VA_ARGS__}) / sizeof(size_t))

static bool same(const size_t* got, size_t n_got, const size_t* want, size_t n_want) {
    if (n_got != n_want) return false;
    for (size_t i = 0; i < n_got; i++)
        if (got[i] != want[i]) return false;
    return true;
}

/* ---- what a collection callback received ------------------------------------------------- */

#define MAX_ROWS 32

typedef struct {
    int calls, initial, errors;
    /* The last update. */
    size_t deletions[MAX_ROWS], n_deletions;
    size_t insertions[MAX_ROWS], n_insertions;
    size_t modifications[MAX_ROWS], n_modifications;
    size_t modifications_old[MAX_ROWS], n_modifications_old;
    size_t moves_from[MAX_ROWS], moves_to[MAX_ROWS], n_moves;
    bool cleared, root_deleted;
    char error[256];
    /* Token handling inside the callback. */
    cove_token_t* token;
    bool release_inside, invalidate_inside;
    int freed;               /* set by count_free */
    int freed_during_call;   /* what `freed` was when the callback returned */
} collection_log;

static size_t copy_indices(size_t n, const size_t* from, size_t* to) {
    if (n > MAX_ROWS) n = MAX_ROWS;
    for (size_t i = 0; i < n; i++) to[i] = from[i];
    return n;
}

static void record_collection(void* userdata, const cove_collection_changes_t* changes) {
    collection_log* log = userdata;
    const size_t *p = NULL, *q = NULL;
    size_t n;
    log->calls++;
    if (cove_changes_is_initial(changes)) {
        log->initial++;
        /* Nothing else is set on the initial call. */
        CHECK(cove_changes_deletions(changes, &p) == 0 && p == NULL);
        CHECK(cove_changes_insertions(changes, NULL) == 0);
        CHECK(cove_changes_error(changes) == NULL);
    } else if (cove_changes_error(changes) != NULL) {
        log->errors++;
        snprintf(log->error, sizeof log->error, "%s", cove_changes_error(changes));
    } else {
        n = cove_changes_deletions(changes, &p);
        log->n_deletions = copy_indices(n, p, log->deletions);
        n = cove_changes_insertions(changes, &p);
        log->n_insertions = copy_indices(n, p, log->insertions);
        n = cove_changes_modifications(changes, &p);
        log->n_modifications = copy_indices(n, p, log->modifications);
        n = cove_changes_modifications_old(changes, &p);
        log->n_modifications_old = copy_indices(n, p, log->modifications_old);
        n = cove_changes_moves(changes, &p, &q);
        log->n_moves = copy_indices(n, p, log->moves_from);
        copy_indices(n, q, log->moves_to);
        log->cleared = cove_changes_cleared(changes);
        log->root_deleted = cove_changes_root_deleted(changes);
    }
    if (log->release_inside && !cove_changes_is_initial(changes)) {
        cove_release(log->token);
        log->token = NULL;
    }
    if (log->invalidate_inside && !cove_changes_is_initial(changes)) CHECK_OK(cove_token_invalidate(log->token));
    log->freed_during_call = log->freed;
}

static void count_free(void* userdata) {
    ((collection_log*)userdata)->freed++;
}

static cove_token_t* observe_results(cove_results_t* results, const char* const* key_paths, size_t n, collection_log* log) {
    cove_token_t* token = NULL;
    CHECK_OK(cove_results_observe(results, key_paths, n, record_collection, log, count_free, &token));
    log->token = token;
    return token;
}

/* ---- helpers ------------------------------------------------------------------------------ */

static cove_object_t* make_person(cove_realm_t* realm, const char* name, int64_t age) {
    cove_object_t* person = NULL;
    cove_value_t v;
    CHECK_OK(cove_object_create(realm, "Person", &person));
    v = string_value(name);
    CHECK_OK(cove_object_set(person, "name", &v));
    v = int_value(age);
    CHECK_OK(cove_object_set(person, "age", &v));
    return person;
}

static void set_int(cove_object_t* object, const char* property, int64_t i) {
    cove_value_t v = int_value(i);
    CHECK_OK(cove_object_set(object, property, &v));
}

static void set_string(cove_object_t* object, const char* property, const char* s) {
    cove_value_t v = string_value(s);
    CHECK_OK(cove_object_set(object, property, &v));
}

/* A commit of one new Other object: a change no Person observer hears of. */
static void commit_other(cove_realm_t* realm) {
    cove_object_t* other = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Other", &other));
    CHECK_OK(cove_commit(realm));
    cove_release(other);
}

static void commit_person(cove_realm_t* realm, const char* name, int64_t age) {
    CHECK_OK(cove_begin_write(realm));
    cove_release(make_person(realm, name, age));
    CHECK_OK(cove_commit(realm));
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

/* ---- results ------------------------------------------------------------------------------ */

static void test_results_change_sets(void) {
    cove_realm_t* realm = open_realm("results.cove");
    cove_object_t* people[4];
    const char* names[] = {"a", "b", "c", "d"};
    const int64_t ages[] = {30, 60, 45, 20};
    cove_results_t* adults = NULL;
    collection_log log = {0};
    bool advanced = true;

    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < 4; i++) people[i] = make_person(realm, names[i], ages[i]);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_query(realm, "Person", "age > 25 SORT(age ASC)", NULL, 0, &adults));   /* a c b */
    cove_token_t* token = observe_results(adults, NULL, 0, &log);
    CHECK(log.calls == 0);                               /* nothing before a delivery */
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 1 && log.initial == 1);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 1);                               /* nothing new */

    CHECK_OK(cove_begin_write(realm));
    set_int(people[3], "age", 50);                       /* d comes in between c and b */
    set_string(people[1], "name", "B");                  /* b modified in place */
    CHECK_OK(cove_object_delete(people[0]));             /* a leaves */
    CHECK_OK(cove_commit(realm));
    CHECK(log.calls == 1);                               /* not inside the commit */
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK(!advanced);                                    /* its own commit: already there */
    CHECK(log.calls == 2);                               /* c d B */
    CHECK(same(log.deletions, log.n_deletions, IDX(0)));
    CHECK(same(log.insertions, log.n_insertions, IDX(1)));
    CHECK(same(log.modifications, log.n_modifications, IDX(2)));
    CHECK(same(log.modifications_old, log.n_modifications_old, IDX(2)));
    CHECK(log.n_moves == 0 && !log.cleared && !log.root_deleted);

    /* A commit to a class the results do not depend on calls nothing. */
    commit_other(realm);
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK(log.calls == 2);

    /* Insertions, and a sort key written: the row moves (deleted and inserted). */
    CHECK_OK(cove_begin_write(realm));
    cove_release(make_person(realm, "e", 26));           /* e c d B */
    cove_release(make_person(realm, "f", 99));           /* e c d B f */
    set_int(people[2], "age", 100);                      /* e d B f c */
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 3);
    CHECK(same(log.insertions, log.n_insertions, IDX(0, 3, 4)));
    CHECK(same(log.deletions, log.n_deletions, IDX(0)));
    CHECK(log.n_modifications == 0);

    /* Writing a value equal to the old one is a modification. */
    CHECK_OK(cove_begin_write(realm));
    set_string(people[1], "name", "B");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 4);
    CHECK(same(log.modifications, log.n_modifications, IDX(2)));
    CHECK(log.n_insertions == 0 && log.n_deletions == 0);

    CHECK(log.freed == 0);
    cove_release(token);
    CHECK(log.freed == 1);
    for (int i = 0; i < 4; i++) cove_release(people[i]);
    cove_release(adults);
    cove_release(realm);
}

static void test_key_path_filters(void) {
    cove_realm_t* realm = open_realm("keypaths.cove");
    cove_object_t *ann = NULL, *bob = NULL, *rex = NULL;
    cove_results_t* people = NULL;
    collection_log by_age = {0}, all = {0}, rows_only = {0}, by_dog = {0};
    const char* age_path[] = {"age"};
    const char* dog_path[] = {"dog.name"};
    const char* none[] = {NULL};
    cove_token_t* token = NULL;
    cove_value_t v;

    CHECK_OK(cove_begin_write(realm));
    ann = make_person(realm, "Ann", 30);
    bob = make_person(realm, "Bob", 40);
    CHECK_OK(cove_object_create(realm, "Dog", &rex));
    v = link_to(rex);
    CHECK_OK(cove_object_set(ann, "dog", &v));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &people));
    cove_token_t* t1 = observe_results(people, age_path, 1, &by_age);
    cove_token_t* t2 = observe_results(people, NULL, 0, &all);
    cove_token_t* t3 = observe_results(people, none, 0, &rows_only);
    cove_token_t* t4 = observe_results(people, dog_path, 1, &by_dog);
    CHECK_OK(cove_deliver(realm));
    CHECK(by_age.initial == 1 && all.initial == 1 && rows_only.initial == 1 && by_dog.initial == 1);

    /* A name: only the unfiltered callback hears it. */
    CHECK_OK(cove_begin_write(realm));
    set_string(ann, "name", "Anna");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK(all.calls == 2 && same(all.modifications, all.n_modifications, IDX(0)));
    CHECK(by_age.calls == 1 && rows_only.calls == 1 && by_dog.calls == 1);

    /* An age: the age filter and the unfiltered callback. */
    CHECK_OK(cove_begin_write(realm));
    set_int(bob, "age", 41);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK(by_age.calls == 2 && same(by_age.modifications, by_age.n_modifications, IDX(1)));
    CHECK(all.calls == 3 && same(all.modifications, all.n_modifications, IDX(1)));
    CHECK(rows_only.calls == 1 && by_dog.calls == 1);

    /* A linked dog's name: "dog.name" and the unfiltered (deep) callback. */
    CHECK_OK(cove_begin_write(realm));
    set_string(rex, "name", "Rex");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK(by_dog.calls == 2 && same(by_dog.modifications, by_dog.n_modifications, IDX(0)));
    CHECK(all.calls == 4 && same(all.modifications, all.n_modifications, IDX(0)));
    CHECK(by_age.calls == 2 && rows_only.calls == 1);

    /* A new row: everyone, the empty key path list included. */
    commit_person(realm, "Cy", 5);
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK(rows_only.calls == 2 && same(rows_only.insertions, rows_only.n_insertions, IDX(2)));
    CHECK(rows_only.n_modifications == 0);
    CHECK(by_age.calls == 3 && all.calls == 5 && by_dog.calls == 3);

    /* Paths that name no property, and malformed arrays. */
    const char* bad[] = {"nope"};
    const char* bad_link[] = {"dog.nope"};
    const char* through_value[] = {"age.x"};
    const char* with_null[] = {"age", NULL};
    collection_log unused = {0};
    CHECK_FAILS(cove_results_observe(people, bad, 1, record_collection, &unused, count_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "nope");
    CHECK_FAILS(cove_results_observe(people, bad_link, 1, record_collection, &unused, count_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "class 'Dog' has no property 'nope'");
    CHECK_FAILS(cove_results_observe(people, through_value, 1, record_collection, &unused, count_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "not a link");
    CHECK_FAILS(cove_results_observe(people, with_null, 2, record_collection, &unused, count_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "key_paths[1] is NULL");
    CHECK_FAILS(cove_results_observe(people, NULL, 1, record_collection, &unused, count_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "key_paths is NULL");
    CHECK(unused.freed == 0);                             /* a failed registration keeps the user data */

    cove_release(t1);
    cove_release(t2);
    cove_release(t3);
    cove_release(t4);
    CHECK(by_age.freed == 1 && all.freed == 1 && rows_only.freed == 1 && by_dog.freed == 1);
    cove_release(ann);
    cove_release(bob);
    cove_release(rex);
    cove_release(people);
    cove_release(realm);
}

static void test_commits_of_another_handle_merge(void) {
    cove_realm_t* realm = open_realm("merge.cove");
    cove_realm_t* other = open_realm("merge.cove");
    cove_results_t* people = NULL;
    collection_log log = {0};
    bool advanced = false;

    commit_person(realm, "m", 1);
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE SORT(name ASC)", NULL, 0, &people));
    cove_token_t* token = observe_results(people, NULL, 0, &log);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.initial == 1);

    commit_person(other, "x", 2);
    commit_person(other, "a", 3);
    /* cove_deliver() advances to the other handle's commits first, as Realm's autorefresh. */
    CHECK_OK(cove_deliver(realm));
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK(!advanced);
    CHECK(log.calls == 2);                                /* two commits, one change: a m x */
    CHECK(same(log.insertions, log.n_insertions, IDX(0, 2)));
    CHECK(log.n_deletions == 0 && log.n_modifications == 0);

    /* A net no-op across commits (created, then deleted) calls nothing. */
    cove_object_t* z = NULL;
    CHECK_OK(cove_begin_write(other));
    z = make_person(other, "z", 9);
    CHECK_OK(cove_commit(other));
    CHECK_OK(cove_begin_write(other));
    CHECK_OK(cove_object_delete(z));
    CHECK_OK(cove_commit(other));
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK(advanced);
    CHECK(log.calls == 2);

    /* cove_begin_write delivers what came before the write starts. */
    commit_person(other, "b", 4);
    CHECK_OK(cove_begin_write(realm));
    CHECK(log.calls == 3 && same(log.insertions, log.n_insertions, IDX(1)));
    CHECK_OK(cove_cancel_write(realm));

    cove_release(z);
    cove_release(token);
    cove_release(people);
    cove_release(other);
    cove_release(realm);
}

/* ---- lists, sets and maps ----------------------------------------------------------------- */

static void test_list_moves_and_clear(void) {
    cove_realm_t* realm = open_realm("list.cove");
    cove_realm_t* other = open_realm("list.cove");
    cove_object_t *ann = NULL, *ann_there = NULL, *dog = NULL;
    cove_list_t *tags = NULL, *tags_there = NULL, *dogs = NULL;
    collection_log log = {0}, dog_log = {0};
    const char* letters[] = {"a", "b", "c", "d"};
    const char* name_path[] = {"name"};
    cove_token_t *token = NULL, *dog_token = NULL;
    cove_value_t v, link;
    int64_t key = 0;

    CHECK_OK(cove_begin_write(realm));
    ann = make_person(realm, "Ann", 1);
    CHECK_OK(cove_object_get_list(ann, "tags", &tags));
    for (size_t i = 0; i < 4; i++) {
        v = string_value(letters[i]);
        CHECK_OK(cove_list_insert(tags, i, &v));
    }
    CHECK_OK(cove_object_get_list(ann, "dogs", &dogs));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    link = link_to(dog);
    CHECK_OK(cove_list_insert(dogs, 0, &link));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_list_observe(tags, NULL, 0, record_collection, &log, count_free, &token));
    CHECK_OK(cove_list_observe(dogs, name_path, 1, record_collection, &dog_log, count_free, &dog_token));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.initial == 1 && dog_log.initial == 1);

    /* Several operations in one commit, from another realm handle. */
    CHECK_OK(cove_refresh(other, NULL));
    link = link_to(ann);
    key = link.u.link.object_key;
    CHECK_OK(cove_object_get_by_object_key(other, "Person", key, &ann_there));
    CHECK_OK(cove_object_get_list(ann_there, "tags", &tags_there));
    CHECK_OK(cove_begin_write(other));
    CHECK_OK(cove_list_move(tags_there, 0, 3));           /* b c d a */
    v = string_value("x");
    CHECK_OK(cove_list_insert(tags_there, 1, &v));        /* b x c d a */
    v = string_value("C");
    CHECK_OK(cove_list_set(tags_there, 2, &v));           /* b x C d a */
    CHECK_OK(cove_list_erase(tags_there, 3));             /* b x C a */
    CHECK_OK(cove_commit(other));
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK(log.calls == 2);
    CHECK(same(log.deletions, log.n_deletions, IDX(0, 3)));      /* the moved element too */
    CHECK(same(log.insertions, log.n_insertions, IDX(1, 3)));
    CHECK(same(log.modifications, log.n_modifications, IDX(2)));
    CHECK(same(log.modifications_old, log.n_modifications_old, IDX(2)));
    CHECK(same(log.moves_from, log.n_moves, IDX(0)));
    CHECK(same(log.moves_to, log.n_moves, IDX(3)));
    CHECK(!log.cleared);
    CHECK(dog_log.calls == 1);                            /* its list did not change */

    /* A list of objects with a key path: the dog's age is not observed, its name is. */
    CHECK_OK(cove_begin_write(realm));
    set_int(dog, "age", 3);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(dog_log.calls == 1);
    CHECK_OK(cove_begin_write(realm));
    set_string(dog, "name", "Rex");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(dog_log.calls == 2 && same(dog_log.modifications, dog_log.n_modifications, IDX(0)));
    CHECK(log.calls == 2);

    /* A clear. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_list_clear(tags));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 3 && log.cleared);
    CHECK(same(log.deletions, log.n_deletions, IDX(0, 1, 2, 3)));

    /* The owner's deletion: every old index deleted, once. */
    CHECK_OK(cove_begin_write(realm));
    v = string_value("y");
    CHECK_OK(cove_list_insert(tags, 0, &v));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 4 && same(log.insertions, log.n_insertions, IDX(0)) && !log.cleared);
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(ann));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 5 && log.root_deleted);
    CHECK(same(log.deletions, log.n_deletions, IDX(0)));
    commit_person(realm, "later", 2);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 5);

    /* A list of values takes no key paths. */
    cove_object_t* bob = NULL;
    cove_list_t* bob_tags = NULL;
    collection_log unused = {0};
    CHECK_OK(cove_begin_write(realm));
    bob = make_person(realm, "Bob", 2);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_get_list(bob, "tags", &bob_tags));
    CHECK_FAILS(cove_list_observe(bob_tags, name_path, 1, record_collection, &unused, count_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "key paths");
    CHECK(unused.freed == 0);

    cove_release(bob_tags);
    cove_release(bob);
    cove_release(token);
    cove_release(dog_token);
    CHECK(log.freed == 1 && dog_log.freed == 1);
    cove_release(tags_there);
    cove_release(ann_there);
    cove_release(tags);
    cove_release(dogs);
    cove_release(dog);
    cove_release(ann);
    cove_release(other);
    cove_release(realm);
}

/* What a map callback received, keys copied. */
typedef struct {
    int calls, initial;
    char deletions[8][16], insertions[8][16], modifications[8][16];
    size_t n_deletions, n_insertions, n_modifications;
    bool root_deleted, nul_terminated;
    int freed;
} map_log;

static size_t copy_keys(size_t n, const cove_string_t* keys, char to[8][16], bool* nul_terminated) {
    if (n > 8) n = 8;
    for (size_t i = 0; i < n; i++) {
        size_t size = keys[i].size < 15 ? keys[i].size : 15;
        memcpy(to[i], keys[i].data, size);
        to[i][size] = '\0';
        if (keys[i].data[keys[i].size] != '\0') *nul_terminated = false;
    }
    return n;
}

static void record_map(void* userdata, const cove_map_changes_t* changes) {
    map_log* log = userdata;
    const cove_string_t* keys = NULL;
    log->calls++;
    if (cove_map_changes_is_initial(changes)) {
        log->initial++;
        CHECK(cove_map_changes_insertions(changes, &keys) == 0 && keys == NULL);
        return;
    }
    CHECK(cove_map_changes_error(changes) == NULL);
    size_t n = cove_map_changes_deletions(changes, &keys);
    log->n_deletions = copy_keys(n, keys, log->deletions, &log->nul_terminated);
    n = cove_map_changes_insertions(changes, &keys);
    log->n_insertions = copy_keys(n, keys, log->insertions, &log->nul_terminated);
    n = cove_map_changes_modifications(changes, &keys);
    log->n_modifications = copy_keys(n, keys, log->modifications, &log->nul_terminated);
    log->root_deleted = cove_map_changes_root_deleted(changes);
}

static void count_map_free(void* userdata) {
    ((map_log*)userdata)->freed++;
}

static void test_set_and_map(void) {
    cove_realm_t* realm = open_realm("setmap.cove");
    cove_object_t* ann = NULL;
    cove_set_t* nums = NULL;
    cove_map_t* scores = NULL;
    collection_log set_log = {0};
    map_log mlog = {0};
    cove_token_t *set_token = NULL, *map_token = NULL;
    cove_value_t v;
    bool erased = false;
    mlog.nul_terminated = true;

    CHECK_OK(cove_begin_write(realm));
    ann = make_person(realm, "Ann", 1);
    CHECK_OK(cove_object_get_set(ann, "nums", &nums));
    CHECK_OK(cove_object_get_map(ann, "scores", &scores));
    v = double_value(1);
    CHECK_OK(cove_map_set(scores, "a", &v));
    v = double_value(2);
    CHECK_OK(cove_map_set(scores, "b", &v));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_set_observe(nums, NULL, 0, record_collection, &set_log, count_free, &set_token));
    CHECK_OK(cove_map_observe(scores, NULL, 0, record_map, &mlog, count_map_free, &map_token));
    CHECK_OK(cove_deliver(realm));
    CHECK(set_log.initial == 1 && mlog.initial == 1);

    CHECK_OK(cove_begin_write(realm));
    v = double_value(3);
    CHECK_OK(cove_map_set(scores, "c", &v));
    v = double_value(9);
    CHECK_OK(cove_map_set(scores, "a", &v));
    CHECK_OK(cove_map_erase(scores, "b", &erased));
    v = int_value(5);
    CHECK_OK(cove_set_insert(nums, &v, NULL));
    v = int_value(1);
    CHECK_OK(cove_set_insert(nums, &v, NULL));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(mlog.calls == 2);
    CHECK(mlog.n_insertions == 1 && strcmp(mlog.insertions[0], "c") == 0);
    CHECK(mlog.n_deletions == 1 && strcmp(mlog.deletions[0], "b") == 0);
    CHECK(mlog.n_modifications == 1 && strcmp(mlog.modifications[0], "a") == 0);
    CHECK(mlog.nul_terminated && !mlog.root_deleted);
    CHECK(set_log.calls == 2 && same(set_log.insertions, set_log.n_insertions, IDX(0, 1)));

    /* A set's deletions are positions in its order (1 5). */
    CHECK_OK(cove_begin_write(realm));
    v = int_value(5);
    CHECK_OK(cove_set_erase(nums, &v, NULL));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(set_log.calls == 3 && same(set_log.deletions, set_log.n_deletions, IDX(1)));
    CHECK(mlog.calls == 2);

    /* The owner's deletion: every key deleted, once. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(ann));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(mlog.calls == 3 && mlog.root_deleted);
    CHECK(mlog.n_deletions == 2 && strcmp(mlog.deletions[0], "a") == 0 && strcmp(mlog.deletions[1], "c") == 0);
    CHECK(set_log.calls == 4 && set_log.root_deleted && same(set_log.deletions, set_log.n_deletions, IDX(0)));
    commit_person(realm, "later", 2);
    CHECK_OK(cove_deliver(realm));
    CHECK(mlog.calls == 3 && set_log.calls == 4);

    cove_release(set_token);
    cove_release(map_token);
    CHECK(set_log.freed == 1 && mlog.freed == 1);
    cove_release(nums);
    cove_release(scores);
    cove_release(ann);
    cove_release(realm);
}

/* ---- objects ------------------------------------------------------------------------------ */

typedef struct {
    int calls, deleted, errors;
    size_t count;
    char names[8][16];
    cove_value_t old_values[8], new_values[8];
    char old_strings[8][16], new_strings[8][16];
    cove_status_t collection_status;   /* old_value of a list property */
    bool out_of_range_refused;
    const cove_object_changes_t* kept; /* retained past the call */
    bool keep;
    int freed;
} object_log;

static void copy_value(const cove_value_t* from, cove_value_t* to, char* text) {
    *to = *from;
    text[0] = '\0';
    if (from->type == COVE_TYPE_STRING) {
        size_t n = from->u.string.size < 15 ? from->u.string.size : 15;
        memcpy(text, from->u.string.data, n);
        text[n] = '\0';
        to->u.string.data = text;
        to->u.string.size = n;
    }
}

static void record_object(void* userdata, const cove_object_changes_t* changes) {
    object_log* log = userdata;
    cove_value_t v;
    log->calls++;
    if (cove_object_changes_is_deleted(changes)) {
        log->deleted++;
        CHECK(cove_object_changes_count(changes) == 0);
        return;
    }
    if (cove_object_changes_error(changes) != NULL) {
        log->errors++;
        return;
    }
    log->count = cove_object_changes_count(changes);
    log->collection_status = COVE_OK;
    for (size_t i = 0; i < log->count && i < 8; i++) {
        snprintf(log->names[i], sizeof log->names[i], "%s", cove_object_changes_property(changes, i));
        cove_status_t s = cove_object_changes_old_value(changes, i, &v);
        if (s == COVE_OK) {
            copy_value(&v, &log->old_values[i], log->old_strings[i]);
            CHECK_OK(cove_object_changes_new_value(changes, i, &v));
            copy_value(&v, &log->new_values[i], log->new_strings[i]);
        } else {
            log->collection_status = s;
        }
    }
    log->out_of_range_refused = cove_object_changes_property(changes, log->count) == NULL &&
                                cove_object_changes_old_value(changes, log->count, &v) == COVE_ERR_OUT_OF_RANGE;
    if (log->keep) {
        log->kept = cove_retain((void*)changes);
        log->keep = false;
    }
}

static void count_object_free(void* userdata) {
    ((object_log*)userdata)->freed++;
}

static void test_object_changes(void) {
    cove_realm_t* realm = open_realm("object.cove");
    cove_object_t *ann = NULL, *rex = NULL;
    cove_list_t* tags = NULL;
    object_log log = {0}, age_log = {0}, none_log = {0};
    const char* age_path[] = {"age"};
    const char* none[] = {NULL};
    cove_token_t *token = NULL, *age_token = NULL, *none_token = NULL;
    cove_value_t v;

    CHECK_OK(cove_begin_write(realm));
    ann = make_person(realm, "Ann", 30);
    CHECK_OK(cove_object_create(realm, "Dog", &rex));
    set_string(rex, "name", "Rex");
    v = link_to(rex);
    CHECK_OK(cove_object_set(ann, "dog", &v));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_observe(ann, NULL, 0, record_object, &log, count_object_free, &token));
    CHECK_OK(cove_object_observe(ann, age_path, 1, record_object, &age_log, count_object_free, &age_token));
    CHECK_OK(cove_object_observe(ann, none, 0, record_object, &none_log, count_object_free, &none_token));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 0);                                /* no initial call */

    /* Old and new values, in schema order; a value written equal to the old one is listed. */
    CHECK_OK(cove_begin_write(realm));
    set_int(ann, "age", 31);
    set_string(ann, "name", "Ann");
    CHECK_OK(cove_commit(realm));
    log.keep = true;
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK(log.calls == 1 && log.count == 2);
    CHECK(strcmp(log.names[0], "name") == 0 && strcmp(log.names[1], "age") == 0);
    CHECK(is_string(&log.old_values[0], "Ann") && is_string(&log.new_values[0], "Ann"));
    CHECK(log.old_values[1].type == COVE_TYPE_INT && log.old_values[1].u.integer == 30);
    CHECK(log.new_values[1].type == COVE_TYPE_INT && log.new_values[1].u.integer == 31);
    CHECK(log.out_of_range_refused);
    CHECK(age_log.calls == 1 && age_log.count == 1 && strcmp(age_log.names[0], "age") == 0);
    CHECK(none_log.calls == 0);

    /* A change object retained past its call reads as empty. */
    CHECK(log.kept != NULL);
    CHECK(cove_object_changes_count(log.kept) == 0);
    CHECK(cove_object_changes_property(log.kept, 0) == NULL);
    CHECK_FAILS(cove_object_changes_old_value(log.kept, 0, &v), COVE_ERR_INVALIDATED, "during its callback");
    cove_release((void*)log.kept);

    /* A name only: the age filter hears nothing. */
    CHECK_OK(cove_begin_write(realm));
    set_string(ann, "name", "Anna");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 2 && log.count == 1 && is_string(&log.old_values[0], "Ann") && is_string(&log.new_values[0], "Anna"));
    CHECK(age_log.calls == 1);

    /* A change of the linked dog is a change of the link property, reported with its values. */
    CHECK_OK(cove_begin_write(realm));
    set_string(rex, "name", "Max");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 3 && log.count == 1 && strcmp(log.names[0], "dog") == 0);
    CHECK(log.old_values[0].type == COVE_TYPE_LINK && log.new_values[0].type == COVE_TYPE_LINK);
    CHECK(log.old_values[0].u.link.object_key == log.new_values[0].u.link.object_key);

    /* A list property is listed without values. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_get_list(ann, "tags", &tags));
    v = string_value("t");
    CHECK_OK(cove_list_insert(tags, 0, &v));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 4 && log.count == 1 && strcmp(log.names[0], "tags") == 0);
    CHECK(log.collection_status == COVE_ERR_WRONG_TYPE);

    /* Deletion, reported once to every callback, the empty key path list included. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(ann));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.deleted == 1 && age_log.deleted == 1 && none_log.deleted == 1 && none_log.calls == 1);
    commit_person(realm, "x", 1);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 5 && log.deleted == 1);

    cove_release(token);
    cove_release(age_token);
    cove_release(none_token);
    CHECK(log.freed == 1 && age_log.freed == 1 && none_log.freed == 1);
    cove_release(tags);
    cove_release(rex);
    cove_release(ann);
    cove_release(realm);
}

/* ---- tokens and user data ----------------------------------------------------------------- */

static void test_token_released_inside_callback(void) {
    cove_realm_t* realm = open_realm("inside.cove");
    cove_results_t* people = NULL;
    collection_log released = {0}, invalidated = {0}, watcher = {0};

    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &people));
    observe_results(people, NULL, 0, &released);
    released.release_inside = true;
    cove_token_t* invalidated_token = observe_results(people, NULL, 0, &invalidated);
    invalidated.invalidate_inside = true;
    cove_token_t* watcher_token = observe_results(people, NULL, 0, &watcher);
    CHECK_OK(cove_deliver(realm));
    CHECK(released.initial == 1 && invalidated.initial == 1);

    commit_person(realm, "a", 1);
    CHECK_OK(cove_deliver(realm));
    CHECK(released.calls == 2 && released.token == NULL);
    CHECK(released.freed_during_call == 0);               /* not while its callback ran */
    CHECK(released.freed == 1);                           /* right after it returned */
    CHECK(invalidated.calls == 2 && invalidated.freed_during_call == 0 && invalidated.freed == 1);
    CHECK(watcher.calls == 2);

    commit_person(realm, "b", 2);
    CHECK_OK(cove_deliver(realm));
    CHECK(released.calls == 2 && invalidated.calls == 2);   /* nothing more */
    CHECK(watcher.calls == 3);

    /* Invalidating again, then releasing: the user data was freed once. */
    CHECK_OK(cove_token_invalidate(invalidated_token));
    cove_release(invalidated_token);
    CHECK(invalidated.freed == 1 && released.freed == 1);

    /* A token released before a delivery hears nothing more. */
    commit_person(realm, "c", 3);
    cove_release(watcher_token);
    CHECK(watcher.freed == 1);
    CHECK_OK(cove_deliver(realm));
    CHECK(watcher.calls == 3);

    cove_release(people);
    cove_release(realm);
}

static int heap_frees = 0;

static void free_heap(void* userdata) {
    heap_frees++;
    free(userdata);
}

static void ignore_changes(void* userdata, const cove_collection_changes_t* changes) {
    (void)changes;
    (*(int*)userdata)++;
}

static int thread_token_calls = 0;
static int thread_token_frees = 0;

static void count_thread_token_call(void* userdata, const cove_collection_changes_t* changes) {
    (void)userdata;
    (void)changes;
    thread_token_calls++;
}

static void count_thread_token_free(void* userdata) {
    (void)userdata;
    thread_token_frees++;
}

static void* invalidate_on_thread(void* token) {
    CHECK_OK(cove_token_invalidate((cove_token_t*)token));
    return NULL;
}

/* A token invalidated on another thread: its user data is freed there, once, and the realm's
 * next delivery calls nothing. */
static void test_token_invalidated_on_another_thread(void) {
    cove_realm_t* realm = open_realm("thread-token.cove");
    cove_results_t* people = NULL;
    cove_token_t* token = NULL;
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &people));
    CHECK_OK(cove_results_observe(people, NULL, 0, count_thread_token_call, NULL, count_thread_token_free, &token));
    CHECK_OK(cove_deliver(realm));
    CHECK(thread_token_calls == 1);

    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, invalidate_on_thread, token) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(thread_token_frees == 1);

    commit_person(realm, "t", 1);
    CHECK_OK(cove_deliver(realm));
    CHECK(thread_token_calls == 1);
    cove_release(token);
    CHECK(thread_token_frees == 1);
    cove_release(people);
    cove_release(realm);
}

static void test_free_userdata_once(void) {
    cove_realm_t* realm = open_realm("free.cove");
    cove_results_t* people = NULL;
    cove_token_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;

    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &people));
    CHECK_OK(cove_results_observe(people, NULL, 0, ignore_changes, calloc(1, sizeof(int)), free_heap, &a));
    CHECK_OK(cove_results_observe(people, NULL, 0, ignore_changes, calloc(1, sizeof(int)), free_heap, &b));
    CHECK_OK(cove_results_observe(people, NULL, 0, ignore_changes, calloc(1, sizeof(int)), free_heap, &c));
    int calls = 0;
    CHECK_OK(cove_results_observe(people, NULL, 0, ignore_changes, &calls, NULL, &d));   /* no free_userdata */
    CHECK_OK(cove_deliver(realm));
    CHECK(calls == 1 && heap_frees == 0);

    /* Invalidate, invalidate again, release: once. */
    CHECK_OK(cove_token_invalidate(a));
    CHECK(heap_frees == 1);
    CHECK_OK(cove_token_invalidate(a));
    cove_release(a);
    CHECK(heap_frees == 1);
    /* Release alone: once. */
    cove_release(b);
    CHECK(heap_frees == 2);

    /* A failed registration keeps the user data the caller's. */
    int* mine = calloc(1, sizeof(int));
    cove_token_t* refused = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_results_observe(people, NULL, 0, ignore_changes, mine, free_heap, &refused), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_cancel_write(realm));
    CHECK(heap_frees == 2 && refused == NULL);
    free(mine);

    /* Closing the realm stops the calls; the user data goes with the token. */
    commit_person(realm, "a", 1);
    CHECK_OK(cove_close(realm));
    CHECK(heap_frees == 2);
    CHECK_FAILS(cove_deliver(realm), COVE_ERR_CLOSED, "closed");
    CHECK(calls == 1);
    cove_release(c);
    CHECK(heap_frees == 3);
    cove_release(d);
    CHECK(heap_frees == 3);
    cove_release(people);
    cove_release(realm);
}

/* ---- refusals ----------------------------------------------------------------------------- */

static void test_registration_errors(void) {
    cove_realm_t* realm = open_realm("errors.cove");
    cove_object_t *ann = NULL, *gone = NULL, *frozen_ann = NULL;
    cove_list_t *tags = NULL, *gone_tags = NULL, *frozen_tags = NULL;
    cove_set_t* nums = NULL;
    cove_map_t* scores = NULL;
    cove_results_t *people = NULL, *frozen_people = NULL;
    cove_realm_t* frozen = NULL;
    cove_token_t* token = NULL;
    collection_log log = {0};
    object_log olog = {0};
    map_log mlog = {0};
    int fd = -1;

    CHECK_OK(cove_begin_write(realm));
    ann = make_person(realm, "Ann", 1);
    gone = make_person(realm, "Gone", 2);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_get_list(ann, "tags", &tags));
    CHECK_OK(cove_object_get_set(ann, "nums", &nums));
    CHECK_OK(cove_object_get_map(ann, "scores", &scores));
    CHECK_OK(cove_object_get_list(gone, "tags", &gone_tags));
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &people));

    /* Inside a write. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_results_observe(people, NULL, 0, record_collection, &log, count_free, &token), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_list_observe(tags, NULL, 0, record_collection, &log, count_free, &token), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_set_observe(nums, NULL, 0, record_collection, &log, count_free, &token), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_map_observe(scores, NULL, 0, record_map, &mlog, NULL, &token), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_object_observe(ann, NULL, 0, record_object, &olog, NULL, &token), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_deliver(realm), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_wait_for_change(realm, 0, NULL), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_object_delete(gone));
    CHECK_OK(cove_commit(realm));
    CHECK(token == NULL);

    /* Frozen handles never change. */
    CHECK_OK(cove_results_freeze(people, &frozen_people));
    CHECK_FAILS(cove_results_observe(frozen_people, NULL, 0, record_collection, &log, count_free, &token), COVE_ERR_FROZEN, "frozen");
    CHECK_OK(cove_list_freeze(tags, &frozen_tags));
    CHECK_FAILS(cove_list_observe(frozen_tags, NULL, 0, record_collection, &log, count_free, &token), COVE_ERR_FROZEN, "frozen");
    CHECK_OK(cove_freeze(realm, &frozen));
    cove_value_t ann_link = link_to(ann);
    CHECK_OK(cove_object_from_link(frozen, &ann_link, &frozen_ann));
    CHECK_FAILS(cove_object_observe(frozen_ann, NULL, 0, record_object, &olog, NULL, &token), COVE_ERR_FROZEN, "frozen");
    CHECK_FAILS(cove_deliver(frozen), COVE_ERR_FROZEN, "frozen");
    CHECK_FAILS(cove_notification_fd(frozen, &fd), COVE_ERR_FROZEN, "frozen");
    CHECK_FAILS(cove_wait_for_change(frozen, 0, NULL), COVE_ERR_FROZEN, "frozen");

    /* Deleted objects, and collections of deleted owners. */
    CHECK_FAILS(cove_object_observe(gone, NULL, 0, record_object, &olog, NULL, &token), COVE_ERR_INVALIDATED, "deleted");
    CHECK_FAILS(cove_list_observe(gone_tags, NULL, 0, record_collection, &log, count_free, &token), COVE_ERR_INVALIDATED, "deleted");

    /* Bad arguments. */
    CHECK_FAILS(cove_results_observe(people, NULL, 0, NULL, &log, count_free, &token), COVE_ERR_INVALID_ARGUMENT, "callback is NULL");
    CHECK_FAILS(cove_results_observe(people, NULL, 0, record_collection, &log, count_free, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_results_observe((cove_results_t*)ann, NULL, 0, record_collection, &log, count_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "expected a cove_results_t");
    CHECK_FAILS(cove_object_observe(NULL, NULL, 0, record_object, &olog, NULL, &token), COVE_ERR_INVALID_ARGUMENT, "object is NULL");
    CHECK_FAILS(cove_token_invalidate((cove_token_t*)ann), COVE_ERR_INVALID_ARGUMENT, "expected a cove_token_t");
    CHECK_FAILS(cove_token_invalidate(NULL), COVE_ERR_INVALID_ARGUMENT, "token is NULL");
    CHECK_FAILS(cove_wait_for_change(realm, -2, NULL), COVE_ERR_INVALID_ARGUMENT, "below -1");
    CHECK_FAILS(cove_notification_fd(realm, NULL), COVE_ERR_INVALID_ARGUMENT, "out_fd is NULL");
    CHECK_FAILS(cove_deliver(NULL), COVE_ERR_INVALID_ARGUMENT, "realm is NULL");
    cove_results_t* tag_values = NULL;
    const char* name_path[] = {"name"};
    CHECK_OK(cove_list_as_results(tags, &tag_values));
    CHECK_FAILS(cove_results_observe(tag_values, name_path, 1, record_collection, &log, count_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "key paths name properties of objects");
    cove_release(tag_values);
    CHECK(token == NULL && log.freed == 0 && mlog.freed == 0 && olog.freed == 0);

    /* Accessors given NULL or another kind answer nothing. */
    const size_t* p = (const size_t*)&fd;
    const cove_string_t* keys = (const cove_string_t*)&fd;
    cove_value_t v;
    CHECK(!cove_changes_is_initial(NULL));
    CHECK(cove_changes_deletions(NULL, &p) == 0 && p == NULL);
    CHECK(cove_changes_moves(NULL, NULL, NULL) == 0);
    CHECK(cove_changes_error(NULL) == NULL);
    CHECK(cove_changes_insertions((const cove_collection_changes_t*)ann, NULL) == 0);
    CHECK(cove_map_changes_deletions(NULL, &keys) == 0 && keys == NULL);
    CHECK(!cove_map_changes_is_initial(NULL) && cove_map_changes_error(NULL) == NULL);
    CHECK(cove_object_changes_count(NULL) == 0 && cove_object_changes_property(NULL, 0) == NULL);
    CHECK(!cove_object_changes_is_deleted(NULL) && cove_object_changes_error(NULL) == NULL);
    CHECK_FAILS(cove_object_changes_new_value(NULL, 0, &v), COVE_ERR_INVALID_ARGUMENT, "changes is NULL");

    /* A closed realm. */
    CHECK_OK(cove_close(realm));
    CHECK_FAILS(cove_results_observe(people, NULL, 0, record_collection, &log, count_free, &token), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_object_observe(ann, NULL, 0, record_object, &olog, NULL, &token), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_notification_fd(realm, &fd), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_wait_for_change(realm, 0, NULL), COVE_ERR_CLOSED, "closed");

    cove_release(frozen);
    cove_release(frozen_ann);
    cove_release(frozen_tags);
    cove_release(frozen_people);
    cove_release(people);
    cove_release(gone_tags);
    cove_release(scores);
    cove_release(nums);
    cove_release(tags);
    cove_release(gone);
    cove_release(ann);
    cove_release(realm);
}

/* An observation that cannot compute its changes hears the error once, then nothing. */
static void test_error_stops_the_token(void) {
    cove_realm_t* realm = open_realm("error.cove");
    cove_object_t* ann = NULL;
    cove_list_t* tags = NULL;
    cove_results_t* tag_results = NULL;
    collection_log log = {0};
    cove_value_t v;

    CHECK_OK(cove_begin_write(realm));
    ann = make_person(realm, "Ann", 1);
    CHECK_OK(cove_object_get_list(ann, "tags", &tags));
    v = string_value("t");
    CHECK_OK(cove_list_insert(tags, 0, &v));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_list_as_results(tags, &tag_results));
    cove_token_t* token = observe_results(tag_results, NULL, 0, &log);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.initial == 1);

    /* The results read a list whose owner goes away. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(ann));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 2 && log.errors == 1);
    CHECK(strlen(log.error) > 0);
    commit_person(realm, "b", 2);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 2);
    CHECK(log.freed == 0);                                /* the token still holds the user data */
    cove_release(token);
    CHECK(log.freed == 1);

    cove_release(tag_results);
    cove_release(tags);
    cove_release(ann);
    cove_release(realm);
}

/* ---- waking up ---------------------------------------------------------------------------- */

static void test_notification_fd(void) {
    cove_realm_t* realm = open_realm("fd.cove");
    cove_realm_t* other = open_realm("fd.cove");
    int fd = -1, again = -1;
    bool advanced = false;

    CHECK_OK(cove_notification_fd(realm, &fd));
    CHECK(fd >= 0);
    CHECK_OK(cove_notification_fd(realm, &again));
    CHECK(again == fd);
    struct pollfd poller = {fd, POLLIN, 0};
    CHECK(poll(&poller, 1, 0) == 0);                      /* nothing yet */

    commit_other(other);
    CHECK(poll(&poller, 1, 5000) == 1 && (poller.revents & POLLIN));
    CHECK_OK(cove_refresh(realm, &advanced));
    CHECK(advanced);
    poller.revents = 0;
    CHECK(poll(&poller, 1, 100) == 0);                    /* drained by the refresh */

    /* A commit of the realm itself wakes it too (its observers have news). */
    commit_other(realm);
    CHECK(poll(&poller, 1, 5000) == 1);
    CHECK_OK(cove_deliver(realm));
    poller.revents = 0;
    CHECK(poll(&poller, 1, 100) == 0);

    cove_release(other);
    cove_release(realm);
}

/* A writer thread commits on request; the observing thread waits on the descriptor, which
 * becomes readable once the realm's notification thread has computed the change sets. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int requested, done;     /* rounds asked for and finished */
    bool stop;
} writer_state;

static void* write_on_request(void* arg) {
    writer_state* w = arg;
    cove_realm_t* writer = open_realm("ready.cove");
    for (int round = 0;; round++) {
        pthread_mutex_lock(&w->lock);
        while (w->requested == round && !w->stop) pthread_cond_wait(&w->cond, &w->lock);
        bool stop = w->stop;
        pthread_mutex_unlock(&w->lock);
        if (stop) break;
        /* One person of age 20 + round (inside `age > 20` from the second round on) and one of
         * age 5 (outside). */
        char name[32];
        snprintf(name, sizeof name, "p%d", round);
        CHECK_OK(cove_begin_write(writer));
        cove_release(make_person(writer, name, 20 + round));
        cove_release(make_person(writer, "young", 5));
        CHECK_OK(cove_commit(writer));
        pthread_mutex_lock(&w->lock);
        w->done = round + 1;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
    cove_release(writer);
    return NULL;
}

static void test_change_sets_ready_when_the_descriptor_wakes(void) {
    cove_realm_t* realm = open_realm("ready.cove");
    cove_results_t* adults = NULL;
    CHECK_OK(cove_query(realm, "Person", "age > 20 SORT(age DESC)", NULL, 0, &adults));
    collection_log log = {0};
    cove_token_t* token = NULL;
    CHECK_OK(cove_results_observe(adults, NULL, 0, record_collection, &log, count_free, &token));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.initial == 1);
    int fd = -1;
    CHECK_OK(cove_notification_fd(realm, &fd));

    writer_state w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, write_on_request, &w) == 0);
    for (int round = 0; round < 20; round++) {
        pthread_mutex_lock(&w.lock);
        w.requested = round + 1;
        pthread_cond_broadcast(&w.cond);
        while (w.done <= round) pthread_cond_wait(&w.cond, &w.lock);
        pthread_mutex_unlock(&w.lock);
        struct pollfd poller = {fd, POLLIN, 0};
        CHECK(poll(&poller, 1, 10000) == 1);
        int calls = log.calls;
        bool advanced = false;
        CHECK_OK(cove_refresh(realm, &advanced));
        CHECK(advanced);
        size_t count = 0;
        CHECK_OK(cove_results_count(adults, &count));
        CHECK(count == (size_t)round);                    /* p1 ... p<round> */
        if (round == 0) {
            CHECK(log.calls == calls);                    /* nothing observed changed */
        } else {
            /* The newest is the oldest in age order: it goes first. */
            CHECK(log.calls == calls + 1);
            CHECK(same(log.insertions, log.n_insertions, IDX(0)));
            CHECK(log.n_deletions == 0 && log.n_modifications == 0);
        }
    }
    pthread_mutex_lock(&w.lock);
    w.stop = true;
    pthread_cond_broadcast(&w.cond);
    pthread_mutex_unlock(&w.lock);
    pthread_join(thread, NULL);
    CHECK_OK(cove_token_invalidate(token));
    cove_release(token);
    cove_release(adults);
    cove_release(realm);
}

typedef struct {
    int delay_ms;
} committer_args;

static void* commit_later(void* arg) {
    committer_args* a = arg;
    struct timespec pause = {0, (long)a->delay_ms * 1000000L};
    nanosleep(&pause, NULL);
    cove_realm_t* writer = open_realm("wait.cove");
    commit_other(writer);
    cove_release(writer);
    return NULL;
}

static void test_wait_for_change(void) {
    cove_realm_t* realm = open_realm("wait.cove");
    cove_realm_t* other = open_realm("wait.cove");
    bool changed = true;

    /* Nothing new: the wait times out. */
    double start = now_ms();
    CHECK_OK(cove_wait_for_change(realm, 50, &changed));
    CHECK(!changed);
    CHECK(now_ms() - start >= 45);
    CHECK_OK(cove_wait_for_change(realm, 0, &changed));
    CHECK(!changed);

    /* Another handle committed: a newer version exists, until the realm refreshes. */
    commit_other(other);
    CHECK_OK(cove_wait_for_change(realm, 0, &changed));
    CHECK(changed);
    CHECK_OK(cove_wait_for_change(realm, 1000, NULL));
    CHECK_OK(cove_refresh(realm, NULL));
    CHECK_OK(cove_wait_for_change(realm, 0, &changed));
    CHECK(!changed);

    /* A commit on another thread ends a long wait early; so it does a wait too long for any
     * clock, which is as good as forever. */
    const int64_t timeouts[] = {10000, INT64_MAX};
    for (int i = 0; i < 2; i++) {
        pthread_t thread;
        committer_args args = {50};
        changed = false;
        CHECK(pthread_create(&thread, NULL, commit_later, &args) == 0);
        start = now_ms();
        CHECK_OK(cove_wait_for_change(realm, timeouts[i], &changed));
        CHECK(changed);
        CHECK(now_ms() - start < 5000);
        CHECK(pthread_join(thread, NULL) == 0);
        CHECK_OK(cove_refresh(realm, NULL));
    }

    cove_release(other);
    cove_release(realm);
}

/* A write begun before the first delivery leaves the initial call for the next delivery, which
 * then shows the state after the write (and no change follows for it). */
static void test_initial_call_after_a_write_begun_at_once(void) {
    cove_realm_t* realm = open_realm("initial.cove");
    cove_results_t* people = NULL;
    collection_log log = {0};
    size_t count = 0;
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &people));
    cove_token_t* token = observe_results(people, NULL, 0, &log);
    commit_person(realm, "early", 1);              /* begins a write before any delivery */
    CHECK(log.calls == 0);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 1 && log.initial == 1);
    CHECK_OK(cove_results_count(people, &count));
    CHECK(count == 1);                             /* the initial state includes the write */
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 1);                         /* and no change follows for it */
    cove_release(token);
    cove_release(people);
    cove_release(realm);
}

int main(void) {
    test_results_change_sets();
    test_key_path_filters();
    test_commits_of_another_handle_merge();
    test_list_moves_and_clear();
    test_set_and_map();
    test_object_changes();
    test_token_released_inside_callback();
    test_free_userdata_once();
    test_token_invalidated_on_another_thread();
    test_registration_errors();
    test_error_stops_the_token();
    test_notification_fd();
    test_change_sets_ready_when_the_descriptor_wakes();
    test_wait_for_change();
    test_initial_call_after_a_write_begun_at_once();
    return check_summary("test_notifications");
}
