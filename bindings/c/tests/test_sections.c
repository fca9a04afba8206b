/* Sectioned results and projections through the C API: sections by a key path and by a C key
 * callback (first letters), a failing callback, index-path change sets (a row moving between
 * sections, a section appearing and one disappearing), a section observed by its key, frozen
 * sectioned results, user data freed exactly once; projections read as values, as the values of
 * a path through a list and as live results of a list, observed under their names with old and
 * new values; and the refusals of bad input. */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Person\": {\"properties\": {\"firstName\": \"string\", \"lastName\": \"string\", \"age\": \"int\","
    "   \"friends\": \"Person[]\", \"tags\": \"string[]\", \"pal\": \"Person?\"}}}";

static cove_realm_t* open_realm(const char* path) {
    return open_schema(path, SCHEMA, 1);
}

/* ---- helpers ------------------------------------------------------------------------------ */

static void set_int(cove_object_t* object, const char* property, int64_t i) {
    cove_value_t v = int_value(i);
    CHECK_OK(cove_object_set(object, property, &v));
}

static void set_string(cove_object_t* object, const char* property, const char* s) {
    cove_value_t v = string_value(s);
    CHECK_OK(cove_object_set(object, property, &v));
}

static cove_object_t* make_person(cove_realm_t* realm, const char* first, const char* last, int64_t age) {
    cove_object_t* person = NULL;
    CHECK_OK(cove_object_create(realm, "Person", &person));
    set_string(person, "firstName", first);
    set_string(person, "lastName", last);
    set_int(person, "age", age);
    return person;
}

/* Whether the first name of `object` is `name`. */
static bool named(cove_object_t* object, const char* name) {
    cove_value_t v = null_value();
    return object != NULL && cove_object_get(object, "firstName", &v) == COVE_OK && is_string(&v, name);
}

/* Whether row `row` of `section` is the person `name`. */
static bool row_is(cove_section_t* section, size_t row, const char* name) {
    cove_object_t* object = NULL;
    if (cove_section_get_object(section, row, &object) != COVE_OK) return false;
    bool same = named(object, name);
    cove_release(object);
    return same;
}

static size_t section_count(cove_section_t* section) {
    size_t n = 999;
    CHECK_OK(cove_section_count(section, &n));
    return n;
}

static size_t sectioned_count(cove_sectioned_results_t* sectioned) {
    size_t n = 999;
    CHECK_OK(cove_sectioned_count(sectioned, &n));
    return n;
}

/* The section at `index` (NULL when there is none). */
static cove_section_t* section_at(cove_sectioned_results_t* sectioned, size_t index) {
    cove_section_t* section = NULL;
    CHECK_OK(cove_sectioned_get_section(sectioned, index, &section));
    return section;
}

static bool key_is_int(cove_section_t* section, int64_t i) {
    cove_value_t key = null_value();
    return cove_section_key(section, &key) == COVE_OK && key.type == COVE_TYPE_INT && key.u.integer == i;
}

static bool key_is_string(cove_section_t* section, const char* s) {
    cove_value_t key = null_value();
    return cove_section_key(section, &key) == COVE_OK && is_string(&key, s);
}

/* ---- what a sectioned callback received ---------------------------------------------------- */

#define MAX_PATHS 16

typedef struct {
    int calls, initial, errors, freed;
    char error[256];
    /* The last update. */
    cove_index_path_t insertions[MAX_PATHS], deletions[MAX_PATHS], modifications[MAX_PATHS];
    size_t n_insertions, n_deletions, n_modifications;
    size_t sections_to_insert[MAX_PATHS], sections_to_delete[MAX_PATHS];
    size_t n_sections_to_insert, n_sections_to_delete;
} sectioned_log;

static size_t copy_paths(size_t n, const cove_index_path_t* from, cove_index_path_t* to) {
    if (n > MAX_PATHS) n = MAX_PATHS;
    for (size_t i = 0; i < n; i++) to[i] = from[i];
    return n;
}

static size_t copy_sizes(size_t n, const size_t* from, size_t* to) {
    if (n > MAX_PATHS) n = MAX_PATHS;
    for (size_t i = 0; i < n; i++) to[i] = from[i];
    return n;
}

static void record_sectioned(void* userdata, const cove_sectioned_changes_t* changes) {
    sectioned_log* log = userdata;
    const cove_index_path_t* paths = NULL;
    const size_t* sizes = NULL;
    size_t n;
    log->calls++;
    if (cove_sectioned_changes_is_initial(changes)) {
        log->initial++;
        CHECK(cove_sectioned_changes_insertions(changes, &paths) == 0 && paths == NULL);
        CHECK(cove_sectioned_changes_sections_to_insert(changes, NULL) == 0);
        CHECK(cove_sectioned_changes_error(changes) == NULL);
        return;
    }
    if (cove_sectioned_changes_error(changes) != NULL) {
        log->errors++;
        snprintf(log->error, sizeof log->error, "%s", cove_sectioned_changes_error(changes));
        CHECK(cove_sectioned_changes_insertions(changes, NULL) == 0);
        return;
    }
    n = cove_sectioned_changes_insertions(changes, &paths);
    log->n_insertions = copy_paths(n, paths, log->insertions);
    n = cove_sectioned_changes_deletions(changes, &paths);
    log->n_deletions = copy_paths(n, paths, log->deletions);
    n = cove_sectioned_changes_modifications(changes, &paths);
    log->n_modifications = copy_paths(n, paths, log->modifications);
    n = cove_sectioned_changes_sections_to_insert(changes, &sizes);
    log->n_sections_to_insert = copy_sizes(n, sizes, log->sections_to_insert);
    n = cove_sectioned_changes_sections_to_delete(changes, &sizes);
    log->n_sections_to_delete = copy_sizes(n, sizes, log->sections_to_delete);
}

static void count_sectioned_free(void* userdata) {
    ((sectioned_log*)userdata)->freed++;
}

/* PATHS({0, 1}, {1, 0}) expands to an index-path array and its length, for same_paths(). */
#define PATHS(...) ((const cove_index_path_t[]){__VA_ARGS__}), (sizeof((const cove_index_path_t[]){__VA_ARGS__}) / sizeof(cove_index_path_t))

static bool same_paths(const cove_index_path_t* got, size_t n_got, const cove_index_path_t* want, size_t n_want) {
    if (n_got != n_want) return false;
    for (size_t i = 0; i < n_got; i++)
        if (got[i].section != want[i].section || got[i].row != want[i].row) return false;
    return true;
}

static bool just(const size_t* got, size_t n_got, size_t want) {
    return n_got == 1 && got[0] == want;
}

/* ---- the key callback: the first letter of the first name ---------------------------------- */

typedef struct {
    int calls, freed;
    pthread_t thread;         /* the thread it must run on */
    bool wrong_thread;
    const char* fail_on;      /* a first name whose key fails with COVE_ERR_NOT_FOUND */
    bool bad_tag;             /* give a key with a type tag that does not exist */
    cove_sectioned_results_t* reenter;   /* read inside the callback: must be refused */
    cove_status_t reentered;
} letter_key;

static cove_status_t first_letter(void* userdata, cove_object_t* object, cove_value_t* out_key) {
    letter_key* k = userdata;
    cove_value_t name = null_value();
    k->calls++;
    if (!pthread_equal(pthread_self(), k->thread)) k->wrong_thread = true;
    CHECK(out_key->type == COVE_TYPE_NULL);
    if (k->reenter != NULL) {
        size_t n = 0;
        k->reentered = cove_sectioned_count(k->reenter, &n);
    }
    cove_status_t status = cove_object_get(object, "firstName", &name);
    if (status != COVE_OK) return status;
    if (k->fail_on != NULL && is_string(&name, k->fail_on)) return COVE_ERR_NOT_FOUND;
    if (k->bad_tag) {
        out_key->type = 99;
        return COVE_OK;
    }
    /* The name's bytes live until the next write of the realm: long enough, as the key is copied
     * when the callback returns. */
    out_key->type = COVE_TYPE_STRING;
    out_key->u.string.data = name.u.string.data;
    out_key->u.string.size = name.u.string.size > 0 ? 1 : 0;
    return COVE_OK;
}

static void count_key_free(void* userdata) {
    ((letter_key*)userdata)->freed++;
}

/* Ann 30, Bob 20, Amy 20, Cid 30, Bea 40, made in that order. */
static void make_five(cove_realm_t* realm, cove_object_t* people[5]) {
    const char* names[] = {"Ann", "Bob", "Amy", "Cid", "Bea"};
    const char* last[] = {"Lee", "Ray", "Ng", "Cox", "Li"};
    const int64_t ages[] = {30, 20, 20, 30, 40};
    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < 5; i++) people[i] = make_person(realm, names[i], last[i], ages[i]);
    CHECK_OK(cove_commit(realm));
}

enum { ANN, BOB, AMY, CID, BEA };

/* ---- sections by a key path ---------------------------------------------------------------- */

static void test_sectioned_by_key_path(void) {
    cove_realm_t* realm = open_realm("keypath.cove");
    cove_object_t* people[5];
    cove_results_t* all = NULL;
    cove_sectioned_results_t *by_age = NULL, *descending = NULL, *frozen = NULL, *again = NULL;
    cove_section_t *s0 = NULL, *s1 = NULL, *s2 = NULL;
    cove_object_t* object = NULL;
    bool frozen_flag = true;

    make_five(realm, people);
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &all));
    CHECK_OK(cove_results_sectioned(all, "age", true, &by_age));
    CHECK(sectioned_count(by_age) == 3);
    s0 = section_at(by_age, 0);
    s1 = section_at(by_age, 1);
    s2 = section_at(by_age, 2);
    CHECK(key_is_int(s0, 20) && key_is_int(s1, 30) && key_is_int(s2, 40));
    /* Rows keep the results' order within their section. */
    CHECK(section_count(s0) == 2 && row_is(s0, 0, "Bob") && row_is(s0, 1, "Amy"));
    CHECK(section_count(s1) == 2 && row_is(s1, 0, "Ann") && row_is(s1, 1, "Cid"));
    CHECK(section_count(s2) == 1 && row_is(s2, 0, "Bea"));
    CHECK_FAILS(cove_section_get_object(s2, 1, &object), COVE_ERR_OUT_OF_RANGE, "index 1 is out of range");
    CHECK_FAILS(cove_section_get_object(s2, SIZE_MAX, &object), COVE_ERR_OUT_OF_RANGE, "out of range");
    CHECK(object == NULL);
    CHECK_FAILS(cove_sectioned_get_section(by_age, 3, &s0), COVE_ERR_OUT_OF_RANGE, "3 sections");
    CHECK_OK(cove_is_frozen(by_age, &frozen_flag));
    CHECK(!frozen_flag);

    CHECK_OK(cove_results_sectioned(all, "age", false, &descending));
    cove_section_t* first = section_at(descending, 0);
    CHECK(key_is_int(first, 40) && row_is(first, 0, "Bea"));
    cove_release(first);

    /* Frozen: the sections as they were, whatever live commits do; sections of frozen results
     * are frozen too. */
    CHECK_OK(cove_sectioned_freeze(by_age, &frozen));
    CHECK_OK(cove_is_frozen(frozen, &frozen_flag));
    CHECK(frozen_flag);
    CHECK_OK(cove_sectioned_freeze(frozen, &again));
    CHECK(again == frozen);
    cove_release(again);
    CHECK_OK(cove_begin_write(realm));
    set_int(people[BEA], "age", 20);
    CHECK_OK(cove_commit(realm));
    CHECK(sectioned_count(by_age) == 2);
    CHECK(section_count(s0) == 3 && row_is(s0, 2, "Bea"));
    CHECK(section_count(s2) == 0);                       /* no row has 40 any more */
    CHECK_FAILS(cove_section_get_object(s2, 0, &object), COVE_ERR_OUT_OF_RANGE, "has 0 objects");
    CHECK(sectioned_count(frozen) == 3);
    cove_section_t* frozen_forty = section_at(frozen, 2);
    CHECK_OK(cove_is_frozen(frozen_forty, &frozen_flag));
    CHECK(frozen_flag && key_is_int(frozen_forty, 40) && row_is(frozen_forty, 0, "Bea"));
    cove_release(frozen_forty);

    /* Inside a write the sections show the write's changes at once. */
    CHECK_OK(cove_begin_write(realm));
    set_int(people[BEA], "age", 41);
    CHECK(sectioned_count(by_age) == 3);
    CHECK_OK(cove_cancel_write(realm));
    CHECK(sectioned_count(by_age) == 2);

    /* Sections through a link, and of a list of objects. */
    cove_sectioned_results_t* by_pal = NULL;
    cove_list_t* friends = NULL;
    cove_results_t* friend_results = NULL;
    cove_sectioned_results_t* friends_by_age = NULL;
    CHECK_OK(cove_begin_write(realm));
    cove_value_t link = link_to(people[ANN]);
    CHECK_OK(cove_object_set(people[BOB], "pal", &link));
    CHECK_OK(cove_object_get_list(people[ANN], "friends", &friends));
    link = link_to(people[CID]);
    CHECK_OK(cove_list_insert(friends, 0, &link));
    link = link_to(people[BOB]);
    CHECK_OK(cove_list_insert(friends, 1, &link));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_results_sectioned(all, "pal.firstName", true, &by_pal));
    CHECK(sectioned_count(by_pal) == 2);                 /* null (no pal), then "Ann" */
    cove_section_t* nobody = section_at(by_pal, 0);
    cove_section_t* ann_pals = section_at(by_pal, 1);
    cove_value_t key = int_value(1);
    CHECK_OK(cove_section_key(nobody, &key));
    CHECK(key.type == COVE_TYPE_NULL && section_count(nobody) == 4);
    CHECK(key_is_string(ann_pals, "Ann") && section_count(ann_pals) == 1 && row_is(ann_pals, 0, "Bob"));
    CHECK_OK(cove_list_as_results(friends, &friend_results));
    CHECK_OK(cove_results_sectioned(friend_results, "age", true, &friends_by_age));
    CHECK(sectioned_count(friends_by_age) == 2);
    cove_section_t* young = section_at(friends_by_age, 0);
    CHECK(key_is_int(young, 20) && section_count(young) == 1 && row_is(young, 0, "Bob"));

    cove_release(young);
    cove_release(friends_by_age);
    cove_release(friend_results);
    cove_release(friends);
    cove_release(nobody);
    cove_release(ann_pals);
    cove_release(by_pal);
    /* Children keep their parents: the sections outlive the handles they came from. */
    cove_release(by_age);
    cove_release(all);
    CHECK(section_count(s1) == 2 && row_is(s1, 1, "Cid"));
    cove_release(s0);
    cove_release(s1);
    cove_release(s2);
    cove_release(frozen);
    cove_release(descending);
    for (int i = 0; i < 5; i++) cove_release(people[i]);
    cove_release(realm);
}

/* ---- sections by a key callback ------------------------------------------------------------ */

/* Reads frozen sectioned results on a thread of its own, where their key callback must run. */
typedef struct {
    cove_sectioned_results_t* sectioned;
    letter_key* key;
    size_t count;
    bool last_is_cid;
} frozen_reader;

static void* read_frozen(void* arg) {
    frozen_reader* r = arg;
    r->key->thread = pthread_self();
    CHECK_OK(cove_sectioned_count(r->sectioned, &r->count));
    cove_section_t* last = NULL;
    CHECK_OK(cove_sectioned_get_section(r->sectioned, 2, &last));
    r->last_is_cid = key_is_string(last, "C") && row_is(last, 0, "Cid");
    cove_release(last);
    return NULL;
}

static void test_sectioned_by_callback(void) {
    cove_realm_t* realm = open_realm("callback.cove");
    cove_object_t* people[5];
    cove_results_t* sorted = NULL;
    cove_sectioned_results_t* by_letter = NULL;
    letter_key k = {0};
    k.thread = pthread_self();

    make_five(realm, people);
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE SORT(firstName ASC)", NULL, 0, &sorted));
    CHECK_OK(cove_results_sectioned_by(sorted, first_letter, &k, count_key_free, &by_letter));
    CHECK(k.calls == 0);                                  /* not before the first read */
    CHECK(sectioned_count(by_letter) == 3);
    CHECK(k.calls == 5);
    cove_section_t* a = section_at(by_letter, 0);
    cove_section_t* b = section_at(by_letter, 1);
    cove_section_t* c = section_at(by_letter, 2);
    CHECK(key_is_string(a, "A") && key_is_string(b, "B") && key_is_string(c, "C"));
    CHECK(section_count(a) == 2 && row_is(a, 0, "Amy") && row_is(a, 1, "Ann"));
    CHECK(section_count(b) == 2 && row_is(b, 0, "Bea") && row_is(b, 1, "Bob"));
    CHECK(section_count(c) == 1 && row_is(c, 0, "Cid"));
    /* Reading row by row at one version keys the rows once (each new section handle keys them
     * once more). */
    int after_reads = k.calls;
    CHECK(row_is(a, 1, "Ann") && section_count(c) == 1 && sectioned_count(by_letter) == 3);
    CHECK(k.calls == after_reads);
    CHECK(!k.wrong_thread);

    /* A rename moves the row to another section at the next read. */
    CHECK_OK(cove_begin_write(realm));
    set_string(people[BEA], "firstName", "Ada");
    CHECK_OK(cove_commit(realm));
    CHECK(section_count(a) == 3 && row_is(a, 0, "Ada"));
    CHECK(section_count(b) == 1 && row_is(b, 0, "Bob"));

    /* Reading the sectioned results from inside their own key callback is refused. */
    k.reenter = by_letter;
    CHECK_OK(cove_begin_write(realm));
    set_string(people[BEA], "firstName", "Bea");
    CHECK_OK(cove_commit(realm));
    CHECK(sectioned_count(by_letter) == 3);
    CHECK(k.reentered == COVE_ERR_INVALID_ARGUMENT);
    k.reenter = NULL;

    /* A callback that fails fails the read with COVE_ERR_CALLBACK, naming it, the status and the
     * object; so does a key that is not a value. */
    cove_sectioned_results_t* failing = NULL;
    letter_key bad = {0};
    size_t n = 0;
    bad.thread = pthread_self();
    bad.fail_on = "Cid";
    CHECK_OK(cove_results_sectioned_by(sorted, first_letter, &bad, count_key_free, &failing));
    CHECK_FAILS(cove_sectioned_count(failing, &n), COVE_ERR_CALLBACK, "section key callback returned COVE_ERR_NOT_FOUND for the Person object");
    cove_section_t* none = NULL;
    CHECK_FAILS(cove_sectioned_get_section(failing, 0, &none), COVE_ERR_CALLBACK, "COVE_ERR_NOT_FOUND");
    CHECK(none == NULL);
    bad.fail_on = NULL;
    bad.bad_tag = true;
    CHECK_FAILS(cove_sectioned_count(failing, &n), COVE_ERR_CALLBACK, "type tag 99");
    bad.bad_tag = false;
    CHECK(sectioned_count(failing) == 3);                 /* the failures were not kept */
    CHECK(bad.freed == 0);
    cove_release(failing);
    CHECK(bad.freed == 1);

    /* Frozen sectioned results key their own rows through the same callback, on the thread that
     * reads them. */
    cove_sectioned_results_t* frozen = NULL;
    CHECK_OK(cove_sectioned_freeze(by_letter, &frozen));
    CHECK_OK(cove_begin_write(realm));
    set_string(people[CID], "firstName", "Dot");
    CHECK_OK(cove_commit(realm));
    CHECK(sectioned_count(by_letter) == 3);               /* A B D */
    frozen_reader reader = {frozen, &k, 0, false};
    pthread_t thread;
    int calls_before = k.calls;
    CHECK(pthread_create(&thread, NULL, read_frozen, &reader) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(reader.count == 3 && reader.last_is_cid);
    CHECK(k.calls > calls_before && !k.wrong_thread);
    k.thread = pthread_self();
    CHECK(sectioned_count(frozen) == 3);

    /* The user data goes with the last handle that uses the callback. */
    cove_release(frozen);
    cove_release(by_letter);
    CHECK(k.freed == 0);                                  /* the sections still use it */
    cove_release(a);
    cove_release(b);
    CHECK(k.freed == 0);
    cove_release(c);
    CHECK(k.freed == 1);

    /* Sectioning that fails keeps the user data the caller's. */
    cove_list_t* tags = NULL;
    cove_results_t* tag_results = NULL;
    cove_sectioned_results_t* refused = NULL;
    letter_key unused = {0};
    CHECK_OK(cove_object_get_list(people[ANN], "tags", &tags));
    CHECK_OK(cove_list_as_results(tags, &tag_results));
    CHECK_FAILS(cove_results_sectioned_by(tag_results, first_letter, &unused, count_key_free, &refused),
                COVE_ERR_WRONG_TYPE, "results of objects");
    CHECK(refused == NULL && unused.freed == 0);
    cove_release(tag_results);
    cove_release(tags);

    cove_release(sorted);
    for (int i = 0; i < 5; i++) cove_release(people[i]);
    cove_release(realm);
}

/* ---- observing ----------------------------------------------------------------------------- */

static void test_sectioned_observe(void) {
    cove_realm_t* realm = open_realm("observe.cove");
    cove_object_t* people[5];
    cove_object_t* dan = NULL;
    cove_results_t* all = NULL;
    cove_sectioned_results_t* by_age = NULL;
    sectioned_log log = {0}, thirty_log = {0};
    const char* first_name[] = {"firstName"};
    cove_token_t *token = NULL, *thirty_token = NULL;

    make_five(realm, people);
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &all));
    CHECK_OK(cove_results_sectioned(all, "age", true, &by_age));   /* 20: Bob Amy; 30: Ann Cid; 40: Bea */
    CHECK_OK(cove_sectioned_observe(by_age, first_name, 1, record_sectioned, &log, count_sectioned_free, &token));
    cove_section_t* thirty = section_at(by_age, 1);
    CHECK(key_is_int(thirty, 30));
    CHECK_OK(cove_section_observe(thirty, NULL, 0, record_sectioned, &thirty_log, count_sectioned_free, &thirty_token));
    CHECK(log.calls == 0);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 1 && log.initial == 1 && thirty_log.calls == 1 && thirty_log.initial == 1);

    /* Bob moves from 20 to 30 (a change of the section key always counts, whatever the key
     * paths); Bea's section goes; Dan's comes; Ann is modified in place. */
    CHECK_OK(cove_begin_write(realm));
    set_int(people[BOB], "age", 30);
    CHECK_OK(cove_object_delete(people[BEA]));
    dan = make_person(realm, "Dan", "Orr", 50);
    set_string(people[ANN], "firstName", "Ann");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 2 && log.errors == 0);             /* 20: Amy; 30: Ann Bob Cid; 50: Dan */
    CHECK(just(log.sections_to_delete, log.n_sections_to_delete, 2));
    CHECK(just(log.sections_to_insert, log.n_sections_to_insert, 2));
    CHECK(same_paths(log.deletions, log.n_deletions, PATHS({0, 0})));
    CHECK(same_paths(log.insertions, log.n_insertions, PATHS({1, 1})));
    CHECK(same_paths(log.modifications, log.n_modifications, PATHS({1, 0})));
    /* The section of 30 saw Bob come and Ann change. */
    CHECK(thirty_log.calls == 2);
    CHECK(same_paths(thirty_log.insertions, thirty_log.n_insertions, PATHS({0, 1})));
    CHECK(same_paths(thirty_log.modifications, thirty_log.n_modifications, PATHS({0, 0})));
    CHECK(thirty_log.n_deletions == 0 && thirty_log.n_sections_to_insert == 0 && thirty_log.n_sections_to_delete == 0);

    /* A property outside the key paths: nothing for the filtered callback. */
    CHECK_OK(cove_begin_write(realm));
    set_string(people[AMY], "lastName", "Xu");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 2);

    /* The section of 30 disappears (every row leaves it) and comes back; its handle follows the
     * key, not the position. */
    CHECK_OK(cove_begin_write(realm));
    set_int(people[ANN], "age", 31);
    set_int(people[BOB], "age", 31);
    set_int(people[CID], "age", 31);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    /* For its observer the section stays: its three rows are deleted. */
    CHECK(thirty_log.calls == 3 && thirty_log.n_sections_to_delete == 0 && thirty_log.n_sections_to_insert == 0);
    CHECK(same_paths(thirty_log.deletions, thirty_log.n_deletions, PATHS({0, 0}, {0, 1}, {0, 2})) && thirty_log.n_insertions == 0);
    CHECK(section_count(thirty) == 0);
    CHECK(log.calls == 3 && just(log.sections_to_delete, log.n_sections_to_delete, 1));
    CHECK(just(log.sections_to_insert, log.n_sections_to_insert, 1));   /* 31 */
    CHECK_OK(cove_begin_write(realm));
    set_int(people[CID], "age", 30);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(thirty_log.calls == 4 && thirty_log.n_sections_to_insert == 0);
    CHECK(same_paths(thirty_log.insertions, thirty_log.n_insertions, PATHS({0, 0})) && thirty_log.n_deletions == 0);
    CHECK(section_count(thirty) == 1 && row_is(thirty, 0, "Cid"));
    CHECK(log.calls == 4 && just(log.sections_to_insert, log.n_sections_to_insert, 1));   /* 20 30 31 50 */
    CHECK(same_paths(log.deletions, log.n_deletions, PATHS({1, 2})));

    /* Releasing the token stops the calls and frees the user data, once. */
    cove_release(token);
    CHECK(log.freed == 1);
    cove_release(thirty_token);
    CHECK(thirty_log.freed == 1);
    CHECK_OK(cove_begin_write(realm));
    set_int(people[CID], "age", 20);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 4 && thirty_log.calls == 4);
    CHECK(log.freed == 1 && thirty_log.freed == 1);

    cove_release(thirty);
    cove_release(by_age);
    cove_release(all);
    cove_release(dan);
    for (int i = 0; i < 5; i++) cove_release(people[i]);
    cove_release(realm);
}

static void test_sectioned_observe_by_callback(void) {
    cove_realm_t* realm = open_realm("observe-callback.cove");
    cove_object_t* people[5];
    cove_results_t* sorted = NULL;
    cove_sectioned_results_t* by_letter = NULL;
    sectioned_log log = {0};
    cove_token_t* token = NULL;
    letter_key k = {0};
    k.thread = pthread_self();

    make_five(realm, people);
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE SORT(firstName ASC)", NULL, 0, &sorted));
    CHECK_OK(cove_results_sectioned_by(sorted, first_letter, &k, count_key_free, &by_letter));
    CHECK_OK(cove_sectioned_observe(by_letter, NULL, 0, record_sectioned, &log, count_sectioned_free, &token));
    /* The token keeps the callback: the sectioned results can go. */
    cove_release(by_letter);
    CHECK(k.freed == 0);
    CHECK_OK(cove_deliver(realm));
    CHECK(log.initial == 1);

    /* Cid becomes Ava: C disappears; A gains a row (Ava Amy Ann). The callback ran here, on the
     * delivering thread. */
    int before = k.calls;
    CHECK_OK(cove_begin_write(realm));
    set_string(people[CID], "firstName", "Ava");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(k.calls > before && !k.wrong_thread);
    CHECK(log.calls == 2);
    CHECK(just(log.sections_to_delete, log.n_sections_to_delete, 2));
    CHECK(log.n_sections_to_insert == 0);
    CHECK(same_paths(log.insertions, log.n_insertions, PATHS({0, 2})));
    CHECK(log.n_deletions == 0);

    /* A failing key callback reaches the observer once as an error; nothing follows. */
    k.fail_on = "Bob";
    CHECK_OK(cove_begin_write(realm));
    set_int(people[BOB], "age", 21);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 3 && log.errors == 1);
    CHECK(strstr(log.error, "section key callback returned COVE_ERR_NOT_FOUND") != NULL);
    k.fail_on = NULL;
    CHECK_OK(cove_begin_write(realm));
    set_int(people[BOB], "age", 22);
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 3);

    /* The token held the last use of the key callback. */
    cove_release(token);
    CHECK(log.freed == 1 && k.freed == 1);

    cove_release(sorted);
    for (int i = 0; i < 5; i++) cove_release(people[i]);
    cove_release(realm);
}

/* ---- projections --------------------------------------------------------------------------- */

#define MAX_CHANGED 8

typedef struct {
    int calls, deleted, freed;
    size_t count;
    char names[MAX_CHANGED][32];
    cove_value_t old_values[MAX_CHANGED], new_values[MAX_CHANGED];   /* strings copied below */
    char old_text[MAX_CHANGED][32], new_text[MAX_CHANGED][32];
    cove_status_t old_status[MAX_CHANGED];
} projection_log;

static void copy_text(const cove_value_t* v, char* to) {
    to[0] = 0;
    if (v->type == COVE_TYPE_STRING && v->u.string.size < 32) {
        memcpy(to, v->u.string.data, v->u.string.size);
        to[v->u.string.size] = 0;
    }
}

static void record_projection(void* userdata, const cove_object_changes_t* changes) {
    projection_log* log = userdata;
    log->calls++;
    if (cove_object_changes_is_deleted(changes)) {
        log->deleted++;
        return;
    }
    log->count = cove_object_changes_count(changes);
    for (size_t i = 0; i < log->count && i < MAX_CHANGED; i++) {
        snprintf(log->names[i], sizeof log->names[i], "%s", cove_object_changes_property(changes, i));
        log->old_status[i] = cove_object_changes_old_value(changes, i, &log->old_values[i]);
        if (log->old_status[i] == COVE_OK) {
            CHECK_OK(cove_object_changes_new_value(changes, i, &log->new_values[i]));
            copy_text(&log->old_values[i], log->old_text[i]);
            copy_text(&log->new_values[i], log->new_text[i]);
        }
    }
}

static void count_projection_free(void* userdata) {
    ((projection_log*)userdata)->freed++;
}

static void test_projection(void) {
    cove_realm_t* realm = open_realm("projection.cove");
    cove_object_t *ann = NULL, *bob = NULL, *cy = NULL;
    cove_list_t* friends = NULL;
    cove_projection_t* view = NULL;
    cove_results_t* list = NULL;
    cove_value_t v, values[4];
    size_t n = 0;

    CHECK_OK(cove_begin_write(realm));
    ann = make_person(realm, "Ann", "Lee", 30);
    bob = make_person(realm, "Bob", "Ray", 20);
    cy = make_person(realm, "Cy", "Cox", 40);
    CHECK_OK(cove_object_get_list(ann, "friends", &friends));
    v = link_to(bob);
    CHECK_OK(cove_list_insert(friends, 0, &v));
    v = link_to(cy);
    CHECK_OK(cove_list_insert(friends, 1, &v));
    CHECK_OK(cove_commit(realm));

    const char* names[] = {"name", "friendNames", "last", "pals", "palName"};
    const char* paths[] = {"firstName", "friends.firstName", "lastName", "friends", "pal.firstName"};
    CHECK_OK(cove_projection_new(ann, names, paths, 5, &view));

    /* One value. */
    CHECK_OK(cove_projection_get(view, "name", &v));
    CHECK(is_string(&v, "Ann"));
    CHECK_OK(cove_projection_get(view, "palName", &v));
    CHECK(v.type == COVE_TYPE_NULL);                      /* through a null link */
    CHECK_FAILS(cove_projection_get(view, "friendNames", &v), COVE_ERR_WRONG_TYPE, "cove_projection_get_values()");
    CHECK_FAILS(cove_projection_get(view, "nope", &v), COVE_ERR_NOT_FOUND, "no name 'nope'");

    /* The values of a path through a list, in the list's order, into a buffer of any size. */
    CHECK_OK(cove_projection_get_values(view, "friendNames", values, 4, &n));
    CHECK(n == 2 && is_string(&values[0], "Bob") && is_string(&values[1], "Cy"));
    CHECK_OK(cove_projection_get_values(view, "friendNames", NULL, 0, &n));
    CHECK(n == 2);
    values[1] = int_value(7);
    CHECK_OK(cove_projection_get_values(view, "friendNames", values, 1, &n));
    CHECK(n == 2 && is_string(&values[0], "Bob") && values[1].type == COVE_TYPE_INT);
    CHECK_OK(cove_projection_get_values(view, "name", values, 4, &n));
    CHECK(n == 1 && is_string(&values[0], "Ann"));
    CHECK_OK(cove_projection_get_values(view, "palName", values, 4, &n));
    CHECK(n == 1 && values[0].type == COVE_TYPE_NULL);
    CHECK_FAILS(cove_projection_get_values(view, "friendNames", NULL, 2, &n), COVE_ERR_INVALID_ARGUMENT, "out_values is NULL");

    /* Live results for a list of the root; the values of a deeper path have none. */
    CHECK_OK(cove_projection_get_list(view, "pals", &list));
    CHECK_OK(cove_results_count(list, &n));
    CHECK(n == 2);
    CHECK_FAILS(cove_projection_get_list(view, "friendNames", &list), COVE_ERR_WRONG_TYPE, "cove_projection_get_values()");
    CHECK_FAILS(cove_projection_get_list(view, "name", &list), COVE_ERR_WRONG_TYPE, "cove_projection_get()");

    /* Observing every name. A change of a friend's first name is a change of friendNames (and
     * of pals, whose objects changed); a friend's last name is a change of neither. */
    projection_log log = {0}, name_log = {0};
    cove_token_t *token = NULL, *name_token = NULL;
    const char* just_name[] = {"name"};
    CHECK_OK(cove_projection_observe(view, NULL, 0, record_projection, &log, count_projection_free, &token));
    CHECK_OK(cove_projection_observe(view, just_name, 1, record_projection, &name_log, count_projection_free, &name_token));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 0);                                /* no initial call */

    CHECK_OK(cove_begin_write(realm));
    set_string(bob, "firstName", "Rob");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 1 && log.count >= 1);
    CHECK(strcmp(log.names[0], "friendNames") == 0);
    CHECK(log.old_status[0] == COVE_ERR_WRONG_TYPE);      /* a collection: no values */
    CHECK(name_log.calls == 0);

    CHECK_OK(cove_begin_write(realm));
    set_string(bob, "lastName", "Roy");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 1);

    /* A root property, with old and new values under the projected name. The token keeps the
     * projection: its handle can go. */
    cove_release(view);
    view = NULL;
    CHECK_OK(cove_begin_write(realm));
    set_string(ann, "lastName", "Kim");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.calls == 2 && log.count == 1 && strcmp(log.names[0], "last") == 0);
    CHECK(log.old_status[0] == COVE_OK && strcmp(log.old_text[0], "Lee") == 0 && strcmp(log.new_text[0], "Kim") == 0);
    CHECK(name_log.calls == 0);

    CHECK_OK(cove_begin_write(realm));
    set_string(ann, "firstName", "Anna");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(name_log.calls == 1 && name_log.count == 1 && strcmp(name_log.names[0], "name") == 0);
    CHECK(strcmp(name_log.old_text[0], "Ann") == 0 && strcmp(name_log.new_text[0], "Anna") == 0);
    CHECK(log.calls == 3 && strcmp(log.names[0], "name") == 0);

    /* The root's deletion, once. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(ann));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_deliver(realm));
    CHECK(log.deleted == 1 && name_log.deleted == 1);

    cove_release(token);
    cove_release(name_token);
    CHECK(log.freed == 1 && name_log.freed == 1);
    cove_release(list);
    cove_release(friends);
    cove_release(ann);
    cove_release(bob);
    cove_release(cy);
    cove_release(realm);
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void ignore_sectioned(void* userdata, const cove_sectioned_changes_t* changes) {
    (void)userdata;
    (void)changes;
}

static void ignore_object(void* userdata, const cove_object_changes_t* changes) {
    (void)userdata;
    (void)changes;
}

static void test_bad_input(void) {
    cove_realm_t* realm = open_realm("bad.cove");
    cove_object_t* people[5];
    cove_results_t* all = NULL;
    cove_sectioned_results_t *sectioned = NULL, *none = NULL, *frozen = NULL;
    cove_section_t *section = NULL, *no_section = NULL;
    cove_projection_t *view = NULL, *no_view = NULL;
    cove_token_t* token = NULL;
    cove_object_t* object = NULL;
    cove_value_t v;
    size_t n = 0;
    sectioned_log unused = {0};
    const cove_index_path_t* paths = NULL;
    const size_t* sizes = NULL;

    make_five(realm, people);
    CHECK_OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &all));
    CHECK_OK(cove_results_sectioned(all, "age", true, &sectioned));
    section = section_at(sectioned, 0);

    /* NULL handles and out pointers. */
    CHECK_FAILS(cove_results_sectioned(NULL, "age", true, &none), COVE_ERR_INVALID_ARGUMENT, "results is NULL");
    CHECK_FAILS(cove_results_sectioned(all, NULL, true, &none), COVE_ERR_INVALID_ARGUMENT, "key_path is NULL");
    CHECK_FAILS(cove_results_sectioned(all, "age", true, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_results_sectioned_by(all, NULL, NULL, NULL, &none), COVE_ERR_INVALID_ARGUMENT, "key_fn is NULL");
    CHECK_FAILS(cove_sectioned_count(NULL, &n), COVE_ERR_INVALID_ARGUMENT, "sectioned is NULL");
    CHECK_FAILS(cove_sectioned_count(sectioned, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_sectioned_get_section(NULL, 0, &no_section), COVE_ERR_INVALID_ARGUMENT, "sectioned is NULL");
    CHECK_FAILS(cove_section_key(NULL, &v), COVE_ERR_INVALID_ARGUMENT, "section is NULL");
    CHECK_FAILS(cove_section_count(NULL, &n), COVE_ERR_INVALID_ARGUMENT, "section is NULL");
    CHECK_FAILS(cove_section_get_object(NULL, 0, &object), COVE_ERR_INVALID_ARGUMENT, "section is NULL");
    CHECK_FAILS(cove_sectioned_freeze(NULL, &frozen), COVE_ERR_INVALID_ARGUMENT, "sectioned is NULL");
    CHECK_FAILS(cove_sectioned_observe(NULL, NULL, 0, ignore_sectioned, NULL, NULL, &token), COVE_ERR_INVALID_ARGUMENT, "sectioned is NULL");
    CHECK_FAILS(cove_sectioned_observe(sectioned, NULL, 0, NULL, NULL, NULL, &token), COVE_ERR_INVALID_ARGUMENT, "callback is NULL");
    CHECK_FAILS(cove_section_observe(NULL, NULL, 0, ignore_sectioned, NULL, NULL, &token), COVE_ERR_INVALID_ARGUMENT, "section is NULL");
    CHECK_FAILS(cove_projection_new(NULL, NULL, NULL, 0, &view), COVE_ERR_INVALID_ARGUMENT, "object is NULL");
    CHECK_FAILS(cove_projection_get(NULL, "x", &v), COVE_ERR_INVALID_ARGUMENT, "projection is NULL");
    CHECK_FAILS(cove_projection_get_list(NULL, "x", &all), COVE_ERR_INVALID_ARGUMENT, "projection is NULL");
    CHECK_FAILS(cove_projection_get_values(NULL, "x", NULL, 0, &n), COVE_ERR_INVALID_ARGUMENT, "projection is NULL");
    CHECK_FAILS(cove_projection_observe(NULL, NULL, 0, ignore_object, NULL, NULL, &token), COVE_ERR_INVALID_ARGUMENT, "projection is NULL");
    CHECK(token == NULL);

    /* Handles of the wrong kind. */
    CHECK_FAILS(cove_results_sectioned((cove_results_t*)sectioned, "age", true, &none), COVE_ERR_INVALID_ARGUMENT,
                "results is a cove_sectioned_results_t, expected a cove_results_t");
    CHECK_FAILS(cove_sectioned_count((cove_sectioned_results_t*)section, &n), COVE_ERR_INVALID_ARGUMENT,
                "sectioned is a cove_section_t, expected a cove_sectioned_results_t");
    CHECK_FAILS(cove_section_count((cove_section_t*)sectioned, &n), COVE_ERR_INVALID_ARGUMENT, "expected a cove_section_t");
    CHECK_FAILS(cove_projection_get((cove_projection_t*)people[0], "x", &v), COVE_ERR_INVALID_ARGUMENT,
                "projection is a cove_object_t, expected a cove_projection_t");
    CHECK_FAILS(cove_projection_new((cove_object_t*)all, NULL, NULL, 0, &view), COVE_ERR_INVALID_ARGUMENT, "expected a cove_object_t");
    /* Change accessors given NULL or another kind answer nothing. */
    CHECK(!cove_sectioned_changes_is_initial(NULL));
    CHECK(cove_sectioned_changes_insertions(NULL, &paths) == 0 && paths == NULL);
    CHECK(cove_sectioned_changes_deletions((const cove_sectioned_changes_t*)sectioned, &paths) == 0);
    CHECK(cove_sectioned_changes_modifications(NULL, NULL) == 0);
    CHECK(cove_sectioned_changes_sections_to_insert(NULL, &sizes) == 0 && sizes == NULL);
    CHECK(cove_sectioned_changes_sections_to_delete(NULL, NULL) == 0);
    CHECK(cove_sectioned_changes_error(NULL) == NULL);

    /* Key paths that name no property, or a collection; results of values. */
    CHECK_FAILS(cove_results_sectioned(all, "nope", true, &none), COVE_ERR_INVALID_ARGUMENT, "nope");
    CHECK_FAILS(cove_results_sectioned(all, "pal.nope", true, &none), COVE_ERR_INVALID_ARGUMENT, "nope");
    CHECK_FAILS(cove_results_sectioned(all, "friends", true, &none), COVE_ERR_INVALID_ARGUMENT, "collection");
    CHECK(none == NULL);
    cove_list_t* tags = NULL;
    cove_results_t* tag_results = NULL;
    CHECK_OK(cove_object_get_list(people[0], "tags", &tags));
    CHECK_OK(cove_list_as_results(tags, &tag_results));
    CHECK_FAILS(cove_results_sectioned(tag_results, "age", true, &none), COVE_ERR_WRONG_TYPE, "list 'tags' of class 'Person'");
    const char* bad_path[] = {"nope"};
    CHECK_FAILS(cove_sectioned_observe(sectioned, bad_path, 1, record_sectioned, &unused, count_sectioned_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "nope");
    CHECK_FAILS(cove_sectioned_observe(sectioned, NULL, 1, record_sectioned, &unused, count_sectioned_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "key_paths is NULL");
    CHECK(unused.freed == 0 && token == NULL);

    /* Positions out of range, also a size_t above the largest index. */
    CHECK_FAILS(cove_sectioned_get_section(sectioned, 3, &no_section), COVE_ERR_OUT_OF_RANGE, "index 3 is out of range");
    CHECK_FAILS(cove_sectioned_get_section(sectioned, SIZE_MAX, &no_section), COVE_ERR_OUT_OF_RANGE, "out of range");
    CHECK_FAILS(cove_section_get_object(section, 2, &object), COVE_ERR_OUT_OF_RANGE, "index 2 is out of range");
    CHECK(no_section == NULL && object == NULL);

    /* Observing where nothing can be delivered. */
    CHECK_OK(cove_sectioned_freeze(sectioned, &frozen));
    CHECK_FAILS(cove_sectioned_observe(frozen, NULL, 0, record_sectioned, &unused, count_sectioned_free, &token), COVE_ERR_FROZEN, "frozen");
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_sectioned_observe(sectioned, NULL, 0, record_sectioned, &unused, count_sectioned_free, &token), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_section_observe(section, NULL, 0, record_sectioned, &unused, count_sectioned_free, &token), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_FAILS(cove_sectioned_freeze(sectioned, &none), COVE_ERR_IN_WRITE, "write");
    CHECK_OK(cove_cancel_write(realm));
    CHECK(unused.freed == 0 && token == NULL);

    /* Projections: arrays, names and paths. */
    const char* names[] = {"a", "b"};
    const char* twice[] = {"a", "a"};
    const char* empty[] = {"a", ""};
    const char* with_null[] = {"a", NULL};
    const char* good_paths[] = {"firstName", "age"};
    const char* bad_paths[] = {"firstName", "nope"};
    CHECK_FAILS(cove_projection_new(people[0], NULL, good_paths, 2, &view), COVE_ERR_INVALID_ARGUMENT, "names is NULL with n 2");
    CHECK_FAILS(cove_projection_new(people[0], names, NULL, 2, &view), COVE_ERR_INVALID_ARGUMENT, "key_paths is NULL with n 2");
    CHECK_FAILS(cove_projection_new(people[0], with_null, good_paths, 2, &view), COVE_ERR_INVALID_ARGUMENT, "names[1] is NULL");
    CHECK_FAILS(cove_projection_new(people[0], empty, good_paths, 2, &view), COVE_ERR_INVALID_ARGUMENT, "names[1] is empty");
    CHECK_FAILS(cove_projection_new(people[0], twice, good_paths, 2, &view), COVE_ERR_INVALID_ARGUMENT, "projected twice");
    CHECK_FAILS(cove_projection_new(people[0], names, bad_paths, 2, &view), COVE_ERR_INVALID_ARGUMENT, "nope");
    CHECK_FAILS(cove_projection_new(people[0], names, good_paths, 2, NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK(view == NULL);
    CHECK_OK(cove_projection_new(people[0], names, good_paths, 2, &view));
    CHECK_FAILS(cove_projection_get(view, NULL, &v), COVE_ERR_INVALID_ARGUMENT, "name is NULL");
    CHECK_FAILS(cove_projection_get_values(view, "nope", NULL, 0, &n), COVE_ERR_NOT_FOUND, "no name 'nope'");
    CHECK_FAILS(cove_projection_get_values(view, "a", NULL, 0, NULL), COVE_ERR_INVALID_ARGUMENT, "out_n is NULL");
    CHECK_FAILS(cove_projection_get_list(view, "nope", &all), COVE_ERR_NOT_FOUND, "no name 'nope'");
    const char* unknown_name[] = {"a", "zz"};
    projection_log plog = {0};
    CHECK_FAILS(cove_projection_observe(view, unknown_name, 2, record_projection, &plog, count_projection_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "names[1] 'zz' is not a name of the projection");
    CHECK_FAILS(cove_projection_observe(view, NULL, 3, record_projection, &plog, count_projection_free, &token),
                COVE_ERR_INVALID_ARGUMENT, "names is NULL");
    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_projection_observe(view, NULL, 0, record_projection, &plog, count_projection_free, &token), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_object_delete(people[0]));
    CHECK_OK(cove_commit(realm));
    CHECK_FAILS(cove_projection_get(view, "a", &v), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_projection_observe(view, NULL, 0, record_projection, &plog, count_projection_free, &token), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_FAILS(cove_projection_new(people[0], names, good_paths, 2, &no_view), COVE_ERR_INVALIDATED, "was deleted");
    CHECK(plog.freed == 0 && token == NULL && no_view == NULL);

    /* A closed realm. */
    CHECK_OK(cove_close(realm));
    CHECK_FAILS(cove_sectioned_count(sectioned, &n), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_section_count(section, &n), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_results_sectioned(all, "age", true, &none), COVE_ERR_CLOSED, "closed");
    CHECK_FAILS(cove_projection_get(view, "b", &v), COVE_ERR_CLOSED, "closed");

    cove_release(view);
    cove_release(tag_results);
    cove_release(tags);
    cove_release(frozen);
    cove_release(section);
    cove_release(sectioned);
    cove_release(all);
    for (int i = 0; i < 5; i++) cove_release(people[i]);
    cove_release(realm);
}

int main(void) {
    test_sectioned_by_key_path();
    test_sectioned_by_callback();
    test_sectioned_observe();
    test_sectioned_observe_by_callback();
    test_projection();
    test_bad_input();
    return check_summary("test_sections");
}
