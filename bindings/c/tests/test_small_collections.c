/* Small lists, sets and maps, kept inline in their class's collection area (format 6): the
 * file space of many objects with a one-element collection each, collections that grow past the
 * inline limit and shrink back with every value read back at each step, links held by small
 * collections whose target is deleted, and the errors of bad input on small collections. Space
 * is asserted through cove_file_space(), never time. */
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Item\": {\"properties\": {\"n\": \"int\", \"nums\": \"int[]\", \"words\": \"string[]\","
    "   \"tags\": \"string<>\", \"counts\": \"int{}\", \"friends\": \"Item[]\", \"pals\": \"Item<>\","
    "   \"named\": \"Item{}\", \"any\": \"mixed[]\", \"toys\": \"Toy[]\"}},"
    " \"Toy\": {\"embedded\": true, \"properties\": {\"brand\": \"string\"}}}";

/* For the space of one-element collections: a class for each kind, each filled in a file of its
 * own, so that the rows carry no other collection column (an empty one takes 24 bytes). */
static const char* SPACE_SCHEMA =
    "{\"Plain\": {\"properties\": {\"n\": \"int\"}},"
    " \"ListItem\": {\"properties\": {\"n\": \"int\", \"nums\": \"int[]\"}},"
    " \"SetItem\": {\"properties\": {\"n\": \"int\", \"tags\": \"string<>\"}},"
    " \"MapItem\": {\"properties\": {\"n\": \"int\", \"counts\": \"int{}\"}}}";

#define OBJECTS 5000
#define MB 1000000u

static cove_realm_t* open_file(const char* path) {
    remove(path);
    return open_schema(path, SCHEMA, 1);
}

static void close_realm(cove_realm_t* realm) {
    CHECK_OK(cove_close(realm));
    cove_release(realm);
}

/* The list `property` of the first Item of the file at `path`, opened again; the realm, the item
 * and the list are handed back to be released. */
static cove_list_t* reopen_list(const char* path, const char* property, cove_realm_t** realm, cove_object_t** item) {
    cove_results_t* all = NULL;
    cove_list_t* list = NULL;
    *realm = open_schema(path, SCHEMA, 1);
    CHECK_OK(cove_query(*realm, "Item", "TRUEPREDICATE", NULL, 0, &all));
    CHECK_OK(cove_results_get_object(all, 0, item));
    cove_release(all);
    CHECK_OK(cove_object_get_list(*item, property, &list));
    return list;
}

static uint64_t used_bytes(cove_realm_t* realm) {
    uint32_t format = 0;
    uint64_t total = 0, used = 0;
    CHECK_OK(cove_file_space(realm, &format, &total, &used));
    CHECK(format >= 6);
    CHECK(used <= total);
    return used;
}

/* The word at `i` of a grown list: ten bytes, distinct for each i below 10^6. */
static void word_of(size_t i, char out[16]) {
    snprintf(out, 16, "word%06zu", i);
}

/* Creates OBJECTS items, each with one element added by `add` (NULL: none), in one write, and
 * returns the used bytes after the commit. */
typedef void (*add_fn)(cove_object_t* item, int i);

static uint64_t fill(const char* path, const char* cls, add_fn add) {
    remove(path);
    cove_realm_t* realm = open_schema(path, SPACE_SCHEMA, 1);
    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < OBJECTS; i++) {
        cove_object_t* item = NULL;
        CHECK_OK(cove_object_create(realm, cls, &item));
        cove_value_t v = int_value(i);
        CHECK_OK(cove_object_set(item, "n", &v));
        if (add) add(item, i);
        cove_release(item);
    }
    CHECK_OK(cove_commit(realm));
    uint64_t used = used_bytes(realm);
    char* report = NULL;
    CHECK_OK(cove_verify(realm, &report));
    cove_free(report);
    close_realm(realm);
    return used;
}

static void add_int_list(cove_object_t* item, int i) {
    cove_list_t* list = NULL;
    CHECK_OK(cove_object_get_list(item, "nums", &list));
    cove_value_t v = int_value(i * 7);
    CHECK_OK(cove_list_insert(list, 0, &v));
    cove_release(list);
}

static void add_string_set(cove_object_t* item, int i) {
    cove_set_t* set = NULL;
    char word[16];
    CHECK_OK(cove_object_get_set(item, "tags", &set));
    word_of((size_t)i, word);
    cove_value_t v = string_value(word);
    bool inserted = false;
    CHECK_OK(cove_set_insert(set, &v, &inserted));
    CHECK(inserted);
    cove_release(set);
}

static void add_int_map(cove_object_t* item, int i) {
    cove_map_t* map = NULL;
    CHECK_OK(cove_object_get_map(item, "counts", &map));
    cove_value_t v = int_value(i);
    CHECK_OK(cove_map_set(map, "k", &v));
    cove_release(map);
}

/* 5,000 objects with a one-element list, set or map each take well under a megabyte: before the
 * collections lived inline each took a page of its own (20 MB for each kind). */
static void test_space_of_one_element_collections(void) {
    uint64_t plain = fill("plain.cove", "Plain", NULL);
    uint64_t lists = fill("lists.cove", "ListItem", add_int_list);
    uint64_t sets = fill("sets.cove", "SetItem", add_string_set);
    uint64_t maps = fill("maps.cove", "MapItem", add_int_map);
    printf("used bytes, %d objects: none %llu, int list %llu, string set %llu, int map %llu\n", OBJECTS,
           (unsigned long long)plain, (unsigned long long)lists, (unsigned long long)sets, (unsigned long long)maps);
    CHECK(lists <= MB);
    CHECK(sets <= MB);
    CHECK(maps <= MB);
    /* Far less than a page per collection. */
    CHECK(lists - plain < (uint64_t)OBJECTS * 4096 / 16);
    CHECK(sets - plain < (uint64_t)OBJECTS * 4096 / 16);
    CHECK(maps - plain < (uint64_t)OBJECTS * 4096 / 16);

    /* The values read back after a reopen. */
    cove_realm_t* realm = open_schema("sets.cove", SPACE_SCHEMA, 1);
    cove_results_t* all = NULL;
    size_t n = 0;
    CHECK_OK(cove_query(realm, "SetItem", "TRUEPREDICATE", NULL, 0, &all));
    CHECK_OK(cove_results_count(all, &n));
    CHECK(n == OBJECTS);
    int wrong = 0;
    for (size_t i = 0; i < n; i++) {
        cove_object_t* item = NULL;
        cove_set_t* set = NULL;
        cove_value_t v, number;
        size_t size = 0;
        char word[16];
        CHECK_OK(cove_results_get_object(all, i, &item));
        CHECK_OK(cove_object_get(item, "n", &number));
        CHECK_OK(cove_object_get_set(item, "tags", &set));
        CHECK_OK(cove_set_size(set, &size));
        word_of((size_t)number.u.integer, word);
        if (size != 1 || cove_set_get(set, 0, &v) != COVE_OK || !is_string(&v, word)) wrong++;
        cove_release(set);
        cove_release(item);
    }
    CHECK(wrong == 0);
    cove_release(all);
    close_realm(realm);
}

/* Whether `list` holds exactly the n words of `word_of` from `first` on. */
static bool words_are(cove_list_t* list, size_t first, size_t n) {
    size_t size = 0;
    if (cove_list_size(list, &size) != COVE_OK || size != n) return false;
    for (size_t i = 0; i < n; i++) {
        cove_value_t v;
        char word[16];
        word_of(first + i, word);
        if (cove_list_get(list, i, &v) != COVE_OK || !is_string(&v, word)) return false;
    }
    return true;
}

/* verify() succeeds and, when `expect` is not NULL, its report contains it. */
static void check_report(cove_realm_t* realm, const char* expect) {
    char* report = NULL;
    cove_status_t status = cove_verify(realm, &report);
    CHECK(status == COVE_OK);
    if (status != COVE_OK) fprintf(stderr, "  verify: %s\n", cove_last_error_message());
    if (expect && status == COVE_OK) {
        CHECK(strstr(report, expect) != NULL);
        if (!strstr(report, expect)) fprintf(stderr, "  report: %s\n  expected: %s\n", report, expect);
    }
    cove_free(report);
}

static void check_verify(cove_realm_t* realm) {
    check_report(realm, NULL);
}

/* A list grows one element at a time past the inline limit (500 words of 10 bytes, about 6 KB)
 * and shrinks back to 2, every value read back after each step, with a commit and a verify
 * every 25 steps and a reopen in between. */
static void test_list_grows_and_shrinks(void) {
    cove_realm_t* realm = open_file("grow.cove");
    cove_object_t* item = NULL;
    cove_list_t* words = NULL;
    int bad_steps = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Item", &item));
    CHECK_OK(cove_object_get_list(item, "words", &words));
    for (size_t i = 0; i < 500; i++) {
        char word[16];
        word_of(i, word);
        cove_value_t v = string_value(word);
        CHECK_OK(cove_list_insert(words, i, &v));
        if (!words_are(words, 0, i + 1)) bad_steps++;
        if (i % 25 == 24) {
            CHECK_OK(cove_commit(realm));
            if (!words_are(words, 0, i + 1)) bad_steps++;
            check_verify(realm);
            CHECK_OK(cove_begin_write(realm));
        }
    }
    CHECK_OK(cove_commit(realm));
    CHECK(bad_steps == 0);
    cove_release(words);
    cove_release(item);
    close_realm(realm);

    words = reopen_list("grow.cove", "words", &realm, &item);
    CHECK(words_are(words, 0, 500));

    /* Shrink from the front down to the last two words, one erase at a time. */
    CHECK_OK(cove_begin_write(realm));
    for (size_t removed = 1; removed <= 498; removed++) {
        CHECK_OK(cove_list_erase(words, 0));
        if (!words_are(words, removed, 500 - removed)) bad_steps++;
        if (removed % 25 == 0) {
            CHECK_OK(cove_commit(realm));
            check_verify(realm);
            CHECK_OK(cove_begin_write(realm));
        }
    }
    CHECK_OK(cove_commit(realm));
    CHECK(bad_steps == 0);
    CHECK(words_are(words, 498, 2));
    check_verify(realm);
    cove_release(words);
    cove_release(item);
    close_realm(realm);

    /* And after a reopen. */
    words = reopen_list("grow.cove", "words", &realm, &item);
    CHECK(words_are(words, 498, 2));
    check_verify(realm);
    cove_release(words);
    cove_release(item);
    close_realm(realm);
}

/* Many lists that grew past the limit and shrank back take the space of small lists again:
 * each went back inline, its tree's page freed. */
#define GROWN 300
static void test_grown_lists_move_back_inline(void) {
    cove_realm_t* realm = open_file("back.cove");
    cove_object_t* items[GROWN];
    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < GROWN; i++) {
        cove_list_t* words = NULL;
        CHECK_OK(cove_object_create(realm, "Item", &items[i]));
        CHECK_OK(cove_object_get_list(items[i], "words", &words));
        for (size_t j = 0; j < 120; j++) {
            char word[16];
            word_of(j, word);
            cove_value_t v = string_value(word);
            CHECK_OK(cove_list_insert(words, j, &v));
        }
        cove_release(words);
    }
    CHECK_OK(cove_commit(realm));
    uint64_t grown = used_bytes(realm);
    check_report(realm, "0 inline collections match");

    CHECK_OK(cove_begin_write(realm));
    for (int i = 0; i < GROWN; i++) {
        cove_list_t* words = NULL;
        CHECK_OK(cove_object_get_list(items[i], "words", &words));
        for (int j = 0; j < 118; j++) CHECK_OK(cove_list_erase(words, 0));
        cove_release(words);
    }
    CHECK_OK(cove_commit(realm));
    /* A second commit lets the pages the first one freed be counted as free. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_commit(realm));
    uint64_t shrunk = used_bytes(realm);
    check_report(realm, "300 inline collections match");

    int wrong = 0;
    for (int i = 0; i < GROWN; i++) {
        cove_list_t* words = NULL;
        CHECK_OK(cove_object_get_list(items[i], "words", &words));
        if (!words_are(words, 118, 2)) wrong++;
        cove_release(words);
        cove_release(items[i]);
    }
    CHECK(wrong == 0);
    printf("used bytes, %d lists: 120 words %llu, shrunk to 2 %llu\n", GROWN, (unsigned long long)grown,
           (unsigned long long)shrunk);
    CHECK(grown >= (uint64_t)GROWN * 4096);          /* each in a tree of its own */
    /* Back inline, many to a page (what is left is mostly the history record of the erases). */
    CHECK(shrunk < grown / 4);
    close_realm(realm);
}

/* A set of strings and a map of ints grow past the limit and shrink back, read back at each
 * step. */
static void test_set_and_map_grow_and_shrink(void) {
    cove_realm_t* realm = open_file("setmap.cove");
    cove_object_t* item = NULL;
    cove_set_t* tags = NULL;
    cove_map_t* counts = NULL;
    int bad_steps = 0;
    const size_t n = 200;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Item", &item));
    CHECK_OK(cove_object_get_set(item, "tags", &tags));
    CHECK_OK(cove_object_get_map(item, "counts", &counts));
    /* Inserted from the highest down, so that every insert goes first in key order. */
    for (size_t k = 0; k < 2 * n; k++) {
        size_t i = k < n ? n - 1 - k : k;   /* n-1 .. 0, then n .. 2n-1 */
        char word[16];
        word_of(i, word);
        cove_value_t v = string_value(word);
        bool inserted = false;
        CHECK_OK(cove_set_insert(tags, &v, &inserted));
        CHECK(inserted);
        v = int_value((int64_t)i * 3);
        CHECK_OK(cove_map_set(counts, word, &v));
        size_t size = 0, msize = 0;
        CHECK_OK(cove_set_size(tags, &size));
        CHECK_OK(cove_map_size(counts, &msize));
        if (size != k + 1 || msize != k + 1) bad_steps++;
        /* Every element in order. */
        size_t lowest = k < n ? n - 1 - k : 0;
        for (size_t j = 0; j < size; j++) {
            cove_value_t got, value;
            cove_string_t key;
            char want[16];
            word_of(lowest + j, want);
            if (cove_set_get(tags, j, &got) != COVE_OK || !is_string(&got, want)) bad_steps++;
            if (cove_map_get_at(counts, j, &key, &value) != COVE_OK || key.size != strlen(want) ||
                memcmp(key.data, want, key.size) != 0 || value.type != COVE_TYPE_INT ||
                value.u.integer != (int64_t)(lowest + j) * 3)
                bad_steps++;
        }
        if (k % 40 == 39) {
            CHECK_OK(cove_commit(realm));
            check_verify(realm);
            CHECK_OK(cove_begin_write(realm));
        }
    }
    CHECK_OK(cove_commit(realm));
    CHECK(bad_steps == 0);

    /* Remove all but words 7 and 8, checking membership of each word as it goes. */
    CHECK_OK(cove_begin_write(realm));
    size_t removed = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        if (i == 7 || i == 8) continue;
        char word[16];
        word_of(i, word);
        cove_value_t v = string_value(word);
        bool erased = false, found = true, contains = true;
        CHECK_OK(cove_set_erase(tags, &v, &erased));
        CHECK(erased);
        CHECK_OK(cove_map_erase(counts, word, &erased));
        CHECK(erased);
        removed++;
        CHECK_OK(cove_set_contains(tags, &v, &contains));
        cove_value_t got;
        CHECK_OK(cove_map_get(counts, word, &got, &found));
        if (contains || found) bad_steps++;
        size_t size = 0;
        CHECK_OK(cove_set_size(tags, &size));
        if (size != 2 * n - removed) bad_steps++;
        if (removed % 50 == 0) {
            CHECK_OK(cove_commit(realm));
            check_verify(realm);
            CHECK_OK(cove_begin_write(realm));
        }
    }
    CHECK_OK(cove_commit(realm));
    CHECK(bad_steps == 0);
    cove_value_t got;
    cove_string_t key;
    bool found = false;
    CHECK_OK(cove_set_get(tags, 0, &got));
    CHECK(is_string(&got, "word000007"));
    CHECK_OK(cove_set_get(tags, 1, &got));
    CHECK(is_string(&got, "word000008"));
    CHECK_OK(cove_map_get(counts, "word000008", &got, &found));
    CHECK(found && got.type == COVE_TYPE_INT && got.u.integer == 24);
    CHECK_OK(cove_map_get_at(counts, 0, &key, &got));
    CHECK(key.size == 10 && memcmp(key.data, "word000007", 10) == 0 && got.u.integer == 21);
    check_verify(realm);
    cove_release(tags);
    cove_release(counts);
    cove_release(item);
    close_realm(realm);
}

static bool is_link_to(const cove_value_t* v, const cove_value_t* link) {
    return v->type == COVE_TYPE_LINK && v->u.link.class_key == link->u.link.class_key &&
           v->u.link.object_key == link->u.link.object_key;
}

/* Links in small collections: deleting the target takes it out of lists and sets, sets map
 * values and mixed list elements to null, as Realm does; verify() checks the backlinks. */
static void test_links_in_small_collections(void) {
    cove_realm_t* realm = open_file("links.cove");
    cove_object_t *owner = NULL, *a = NULL, *b = NULL, *c = NULL;
    cove_list_t *friends = NULL, *any = NULL;
    cove_set_t* pals = NULL;
    cove_map_t* named = NULL;
    cove_value_t v;
    size_t size = 0;
    bool found = false;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Item", &owner));
    CHECK_OK(cove_object_create(realm, "Item", &a));
    CHECK_OK(cove_object_create(realm, "Item", &b));
    CHECK_OK(cove_object_create(realm, "Item", &c));
    cove_value_t la = link_to(a), lb = link_to(b), lc = link_to(c);
    CHECK_OK(cove_object_get_list(owner, "friends", &friends));
    CHECK_OK(cove_object_get_list(owner, "any", &any));
    CHECK_OK(cove_object_get_set(owner, "pals", &pals));
    CHECK_OK(cove_object_get_map(owner, "named", &named));
    /* friends: a b a c; any: b 5 b; pals: {a b c}; named: {a: a, b: b} */
    CHECK_OK(cove_list_insert(friends, 0, &la));
    CHECK_OK(cove_list_insert(friends, 1, &lb));
    CHECK_OK(cove_list_insert(friends, 2, &la));
    CHECK_OK(cove_list_insert(friends, 3, &lc));
    CHECK_OK(cove_list_insert(any, 0, &lb));
    v = int_value(5);
    CHECK_OK(cove_list_insert(any, 1, &v));
    CHECK_OK(cove_list_insert(any, 2, &lb));
    CHECK_OK(cove_set_insert(pals, &la, NULL));
    CHECK_OK(cove_set_insert(pals, &lb, NULL));
    CHECK_OK(cove_set_insert(pals, &lc, NULL));
    CHECK_OK(cove_map_set(named, "a", &la));
    CHECK_OK(cove_map_set(named, "b", &lb));
    CHECK_OK(cove_commit(realm));
    check_verify(realm);

    /* Backlinks of b: friends once, pals once, named once (mixed links are not backlinks of a
     * typed property). */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(b));
    CHECK_OK(cove_list_size(friends, &size));
    CHECK(size == 3);
    CHECK_OK(cove_list_get(friends, 0, &v));
    CHECK(is_link_to(&v, &la));
    CHECK_OK(cove_list_get(friends, 1, &v));
    CHECK(is_link_to(&v, &la));
    CHECK_OK(cove_list_get(friends, 2, &v));
    CHECK(is_link_to(&v, &lc));
    CHECK_OK(cove_list_size(any, &size));
    CHECK(size == 3);
    CHECK_OK(cove_list_get(any, 0, &v));
    CHECK(v.type == COVE_TYPE_NULL);
    CHECK_OK(cove_list_get(any, 1, &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 5);
    CHECK_OK(cove_list_get(any, 2, &v));
    CHECK(v.type == COVE_TYPE_NULL);
    CHECK_OK(cove_set_size(pals, &size));
    CHECK(size == 2);
    CHECK_OK(cove_set_contains(pals, &la, &found));
    CHECK(found);
    CHECK_OK(cove_set_contains(pals, &lc, &found));
    CHECK(found);
    CHECK_OK(cove_map_size(named, &size));
    CHECK(size == 2);
    CHECK_OK(cove_map_get(named, "b", &v, &found));
    CHECK(found && v.type == COVE_TYPE_NULL);
    CHECK_OK(cove_map_get(named, "a", &v, &found));
    CHECK(found && is_link_to(&v, &la));
    CHECK_OK(cove_commit(realm));
    check_verify(realm);

    /* a is held twice by the list: both go; the owner itself deleted last leaves no entry. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(a));
    CHECK_OK(cove_list_size(friends, &size));
    CHECK(size == 1);
    CHECK_OK(cove_list_get(friends, 0, &v));
    CHECK(is_link_to(&v, &lc));
    CHECK_OK(cove_set_size(pals, &size));
    CHECK(size == 1);
    CHECK_OK(cove_commit(realm));
    check_verify(realm);

    /* An owner's small list of embedded objects goes with it. */
    cove_list_t* toys = NULL;
    cove_object_t* toy = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_get_list(c, "toys", &toys));
    CHECK_OK(cove_list_insert_embedded(toys, 0, &toy));
    v = string_value("ball");
    CHECK_OK(cove_object_set(toy, "brand", &v));
    CHECK_OK(cove_commit(realm));
    check_verify(realm);
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(c));
    CHECK_OK(cove_list_size(friends, &size));
    CHECK(size == 0);
    CHECK_OK(cove_object_delete(owner));
    CHECK_OK(cove_commit(realm));
    bool valid = true;
    CHECK_OK(cove_object_is_valid(toy, &valid));
    CHECK(!valid);
    CHECK(query_count(realm, "Item", "TRUEPREDICATE", NULL, 0) == 0);
    check_verify(realm);

    cove_release(toy);
    cove_release(toys);
    cove_release(friends);
    cove_release(any);
    cove_release(pals);
    cove_release(named);
    cove_release(owner);
    cove_release(a);
    cove_release(b);
    cove_release(c);
    close_realm(realm);
}

/* Bad input on small collections gives the same statuses and messages as on trees. */
static void test_bad_input_on_small_collections(void) {
    cove_realm_t* realm = open_file("bad.cove");
    cove_object_t* item = NULL;
    cove_list_t* nums = NULL;
    cove_set_t* tags = NULL;
    cove_map_t* counts = NULL;
    cove_value_t v = int_value(1), out;
    cove_string_t key;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Item", &item));
    CHECK_OK(cove_object_get_list(item, "nums", &nums));
    CHECK_OK(cove_object_get_set(item, "tags", &tags));
    CHECK_OK(cove_object_get_map(item, "counts", &counts));
    CHECK_OK(cove_list_insert(nums, 0, &v));
    CHECK_OK(cove_list_insert(nums, 1, &v));
    CHECK_OK(cove_list_insert(nums, 2, &v));
    cove_value_t word = string_value("x");
    CHECK_OK(cove_set_insert(tags, &word, NULL));
    CHECK_OK(cove_map_set(counts, "k", &v));
    CHECK_OK(cove_commit(realm));

    CHECK_FAILS(cove_list_get(nums, 3, &out), COVE_ERR_OUT_OF_RANGE,
                "index 3 is out of range for list 'nums' of class 'Item' (valid: 0..<3)");
    CHECK_FAILS(cove_list_get(nums, (size_t)-1, &out), COVE_ERR_OUT_OF_RANGE, "list 'nums' of class 'Item'");
    CHECK_FAILS(cove_set_get(tags, 1, &out), COVE_ERR_OUT_OF_RANGE, "'tags' of class 'Item'");
    CHECK_FAILS(cove_map_get_at(counts, 1, &key, &out), COVE_ERR_OUT_OF_RANGE, "'counts' of class 'Item'");
    CHECK_FAILS(cove_list_insert(nums, 0, &v), COVE_ERR_NOT_IN_WRITE, "outside a write");

    CHECK_OK(cove_begin_write(realm));
    CHECK_FAILS(cove_list_insert(nums, 4, &v), COVE_ERR_OUT_OF_RANGE, "valid: 0...3");
    CHECK_FAILS(cove_list_set(nums, 3, &v), COVE_ERR_OUT_OF_RANGE, "list 'nums' of class 'Item'");
    CHECK_FAILS(cove_list_erase(nums, 3), COVE_ERR_OUT_OF_RANGE, "list 'nums' of class 'Item'");
    CHECK_FAILS(cove_list_move(nums, 0, 3), COVE_ERR_OUT_OF_RANGE, "index 3");
    CHECK_FAILS(cove_list_insert(nums, 0, &word), COVE_ERR_WRONG_TYPE,
                "property 'nums' of class 'Item' is int[], got string");
    CHECK_FAILS(cove_set_insert(tags, &v, NULL), COVE_ERR_WRONG_TYPE, "property 'tags' of class 'Item'");
    CHECK_FAILS(cove_map_set(counts, "k", &word), COVE_ERR_WRONG_TYPE, "property 'counts' of class 'Item'");
    CHECK_FAILS(cove_map_set(counts, "a.b", &v), COVE_ERR_INVALID_ARGUMENT, "a.b");
    /* A failed edit leaves the small collection as it was. */
    size_t size = 0;
    CHECK_OK(cove_list_size(nums, &size));
    CHECK(size == 3);
    CHECK_OK(cove_map_size(counts, &size));
    CHECK(size == 1);
    /* Emptied, then read past its end. */
    CHECK_OK(cove_list_clear(nums));
    CHECK_FAILS(cove_list_erase(nums, 0), COVE_ERR_OUT_OF_RANGE, "it is empty");
    CHECK_OK(cove_commit(realm));
    CHECK_FAILS(cove_list_get(nums, 0, &out), COVE_ERR_OUT_OF_RANGE, "list 'nums' of class 'Item'");
    check_verify(realm);

    /* Deleted owner. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(item));
    CHECK_FAILS(cove_list_insert(nums, 0, &v), COVE_ERR_INVALIDATED, "");
    CHECK_OK(cove_commit(realm));
    CHECK_FAILS(cove_set_size(tags, &size), COVE_ERR_INVALIDATED, "");
    CHECK_FAILS(cove_map_get_at(counts, 0, &key, &out), COVE_ERR_INVALIDATED, "");
    check_verify(realm);

    cove_release(nums);
    cove_release(tags);
    cove_release(counts);
    cove_release(item);
    close_realm(realm);
}

/* Lists, sets and maps given whole to cove_object_create_many() and
 * cove_object_create_with_values(): COVE_TYPE_LIST and COVE_TYPE_MAP values. */
static cove_value_t str(const char* s) {
    cove_value_t v = {.type = COVE_TYPE_STRING};
    v.u.string.data = s;
    v.u.string.size = strlen(s);
    return v;
}

static cove_value_t int_of(int64_t i) {
    cove_value_t v = {.type = COVE_TYPE_INT};
    v.u.integer = i;
    return v;
}

static cove_value_t elements(cove_value_type_e type, const cove_value_t* items, size_t count) {
    cove_value_t v = {.type = (int32_t)type};
    v.u.elements.items = items;
    v.u.elements.count = count;
    return v;
}

static void test_collections_given_to_creates(void) {
    cove_realm_t* realm = open_file("creates.cove");
    static const char* names[] = {"n", "nums", "tags", "counts"};
    cove_value_t nums[3] = {int_of(3), int_of(1), int_of(3)};
    cove_value_t tags[3] = {str("b"), str("a"), str("b")};
    cove_value_t counts[4] = {str("y"), int_of(2), str("x"), int_of(1)};
    cove_value_t rows[8] = {int_of(1), elements(COVE_TYPE_LIST, nums, 3), elements(COVE_TYPE_LIST, tags, 3),
                            elements(COVE_TYPE_MAP, counts, 2),
                            int_of(2), elements(COVE_TYPE_LIST, NULL, 0), elements(COVE_TYPE_LIST, tags, 1),
                            elements(COVE_TYPE_MAP, NULL, 0)};
    size_t created = 0;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_many(realm, "Item", names, 4, rows, 2, false, &created));
    CHECK(created == 2);
    cove_object_t* item = NULL;
    CHECK_OK(cove_object_create_with_values(realm, "Item", names, 4, rows, &item));
    CHECK_OK(cove_commit(realm));
    cove_list_t* list = NULL;
    cove_set_t* set = NULL;
    cove_map_t* map = NULL;
    CHECK_OK(cove_object_get_list(item, "nums", &list));
    CHECK_OK(cove_object_get_set(item, "tags", &set));
    CHECK_OK(cove_object_get_map(item, "counts", &map));
    size_t size = 0;
    cove_value_t out;
    CHECK_OK(cove_list_size(list, &size));
    CHECK(size == 3);
    CHECK_OK(cove_list_get(list, 2, &out));
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 3);
    CHECK_OK(cove_set_size(set, &size));
    CHECK(size == 2);                       /* "b" once */
    CHECK_OK(cove_set_get(set, 0, &out));
    CHECK(out.type == COVE_TYPE_STRING && out.u.string.size == 1 && out.u.string.data[0] == 'a');
    CHECK_OK(cove_map_size(map, &size));
    CHECK(size == 2);
    cove_string_t key;
    CHECK_OK(cove_map_get_at(map, 0, &key, &out));
    CHECK(key.size == 1 && key.data[0] == 'x' && out.u.integer == 1);
    CHECK(query_count(realm, "Item", "nums.@count == 3 AND tags.@count == 2 AND counts.@count == 2", NULL, 0) == 2);
    CHECK(query_count(realm, "Item", "n == 2 AND nums.@count == 0 AND tags.@count == 1", NULL, 0) == 1);
    check_verify(realm);

    /* Bad input: named and explained, nothing created. */
    CHECK_OK(cove_begin_write(realm));
    cove_value_t bad[4] = {int_of(9), int_of(5), elements(COVE_TYPE_LIST, tags, 1), elements(COVE_TYPE_MAP, NULL, 0)};
    CHECK_FAILS(cove_object_create_many(realm, "Item", names, 4, bad, 1, false, &created), COVE_ERR_WRONG_TYPE,
                "object 0: property 'nums' of class 'Item': a list or set takes its elements as a COVE_TYPE_LIST value");
    bad[1] = elements(COVE_TYPE_LIST, tags, 1);
    CHECK_FAILS(cove_object_create_many(realm, "Item", names, 4, bad, 1, false, &created), COVE_ERR_WRONG_TYPE, "'nums'");
    bad[1] = elements(COVE_TYPE_LIST, nums, 1);
    bad[0] = elements(COVE_TYPE_LIST, nums, 1);
    CHECK_FAILS(cove_object_create_many(realm, "Item", names, 4, bad, 1, false, &created), COVE_ERR_WRONG_TYPE,
                "property 'n' of class 'Item' is int, got list [3]");
    bad[0] = int_of(9);
    cove_value_t bad_keys[2] = {int_of(1), int_of(2)};
    bad[3] = elements(COVE_TYPE_MAP, bad_keys, 1);
    CHECK_FAILS(cove_object_create_many(realm, "Item", names, 4, bad, 1, false, &created), COVE_ERR_INVALID_ARGUMENT,
                "key 0 has type tag 1, not COVE_TYPE_STRING");
    static const char* toy_names[] = {"n", "toys"};
    cove_value_t toys[2] = {int_of(1), elements(COVE_TYPE_LIST, NULL, 0)};
    CHECK_FAILS(cove_object_create_with_values(realm, "Item", toy_names, 2, toys, &item), COVE_ERR_WRONG_TYPE,
                "holds embedded Toy objects");
    CHECK_OK(cove_commit(realm));
    CHECK(query_count(realm, "Item", "n == 9", NULL, 0) == 0);
    check_verify(realm);

    cove_release(list);
    cove_release(set);
    cove_release(map);
    cove_release(item);
    close_realm(realm);
}

int main(void) {
    test_space_of_one_element_collections();
    test_list_grows_and_shrinks();
    test_grown_lists_move_back_inline();
    test_set_and_map_grow_and_shrink();
    test_links_in_small_collections();
    test_bad_input_on_small_collections();
    test_collections_given_to_creates();
    return check_summary("test_small_collections");
}
