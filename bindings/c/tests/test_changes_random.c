/* A randomized differential test of change sets through the C API, over many seeds: sorted and
 * limited results of objects, a list of ints with duplicates, moves and clears, and a sorted
 * view of that list. Commits of another realm handle (merged into one delivery) and of the
 * observing realm alternate. After every delivery each change set, applied as a table view
 * applies it (deletions at old indices, then insertions at new ones, then the modified rows read
 * again), must give the new contents; moves must be deletions and insertions too; and the
 * modifications of the results must name exactly the rows that stayed and whose object was
 * written since the previous delivery. */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Item\": {\"properties\": {\"score\": \"int\"}},"
    " \"Owner\": {\"properties\": {\"nums\": \"int[]\"}}}";

#define MAX 256
#define MAX_KEY 4096

/* The tests' generator: SplitMix64, so that a failing seed replays. */
static uint64_t rng_state;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t below(size_t n) { return n == 0 ? 0 : (size_t)(rng_next() % n); }

/* What an observer last saw, and the change it was given since. */
typedef struct {
    const char* name;
    int64_t old[MAX];
    size_t n_old;
    int calls, errors;
    bool cleared;
    size_t del[MAX], n_del, ins[MAX], n_ins, mod[MAX], n_mod, mfrom[MAX], mto[MAX], n_moves;
} observed;

static size_t take(size_t n, const size_t* from, size_t* to) {
    if (n > MAX) n = MAX;
    for (size_t i = 0; i < n; i++) to[i] = from[i];
    return n;
}

static void record(void* userdata, const cove_collection_changes_t* changes) {
    observed* o = userdata;
    const size_t *p = NULL, *q = NULL;
    size_t n;
    if (cove_changes_is_initial(changes)) return;
    o->calls++;
    if (cove_changes_error(changes) != NULL) {
        o->errors++;
        return;
    }
    n = cove_changes_deletions(changes, &p);
    o->n_del = take(n, p, o->del);
    n = cove_changes_insertions(changes, &p);
    o->n_ins = take(n, p, o->ins);
    n = cove_changes_modifications(changes, &p);
    o->n_mod = take(n, p, o->mod);
    n = cove_changes_moves(changes, &p, &q);
    o->n_moves = take(n, p, o->mfrom);
    take(n, q, o->mto);
    o->cleared = cove_changes_cleared(changes);
}

static bool contains(const size_t* a, size_t n, size_t x) {
    for (size_t i = 0; i < n; i++)
        if (a[i] == x) return true;
    return false;
}

static bool ascending_once(const size_t* a, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (a[i] <= a[i - 1]) return false;
    return true;
}

/* Checks the change against the old and new contents; `written` (may be NULL) says which
 * values (object keys) were written since the previous delivery. */
static void check_change(observed* o, const int64_t* now, size_t n_now, const bool* written, const char* context) {
    int64_t rows[MAX];
    size_t n = 0;
    bool ok = o->calls <= 1 && o->errors == 0;
    if (o->calls == 0) o->n_del = o->n_ins = o->n_mod = o->n_moves = 0;
    ok = ok && ascending_once(o->del, o->n_del) && ascending_once(o->ins, o->n_ins) && ascending_once(o->mod, o->n_mod);
    for (size_t k = 0; k < o->n_moves; k++)
        ok = ok && contains(o->del, o->n_del, o->mfrom[k]) && contains(o->ins, o->n_ins, o->mto[k]);
    /* Deletions, then insertions, then modifications, as a table view does. */
    for (size_t i = 0; i < o->n_old; i++)
        if (!contains(o->del, o->n_del, i)) rows[n++] = o->old[i];
    for (size_t k = 0; k < o->n_ins && ok; k++) {
        size_t at = o->ins[k];
        if (at > n || at >= n_now) {
            ok = false;
            break;
        }
        memmove(rows + at + 1, rows + at, (n - at) * sizeof rows[0]);
        rows[at] = now[at];
        n++;
    }
    for (size_t k = 0; k < o->n_mod && ok; k++) {
        if (o->mod[k] >= n || o->mod[k] >= n_now) ok = false;
        else rows[o->mod[k]] = now[o->mod[k]];
    }
    ok = ok && n == n_now && memcmp(rows, now, n * sizeof rows[0]) == 0;
    /* The rows that stayed and were written are exactly the modifications. */
    if (ok && written != NULL) {
        size_t expected[MAX], n_expected = 0;
        for (size_t j = 0; j < n_now; j++)
            if (!contains(o->ins, o->n_ins, j) && now[j] >= 0 && now[j] < MAX_KEY && written[now[j]])
                expected[n_expected++] = j;
        ok = n_expected == o->n_mod && memcmp(expected, o->mod, n_expected * sizeof expected[0]) == 0;
    }
    for (size_t k = 0; k < o->n_mod && ok; k++) ok = !contains(o->ins, o->n_ins, o->mod[k]);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s: %s (%d calls)\n", context, o->name, o->calls);
    memcpy(o->old, now, n_now * sizeof now[0]);
    o->n_old = n_now;
    o->calls = 0;
    o->cleared = false;
}

static size_t read_keys(cove_results_t* results, int64_t* out) {
    size_t n = 0, got = 0;
    CHECK_OK(cove_results_count(results, &n));
    if (n > MAX) n = MAX;
    CHECK_OK(cove_results_get_keys(results, 0, n, out, &got));
    return got;
}

static size_t read_ints(cove_results_t* results, int64_t* out) {
    size_t n = 0;
    cove_value_t v;
    CHECK_OK(cove_results_count(results, &n));
    for (size_t i = 0; i < n && i < MAX; i++) {
        CHECK_OK(cove_results_get_value(results, i, &v));
        out[i] = v.u.integer;
    }
    return n;
}

static void run(uint64_t seed, int rounds) {
    char path[64], context[96];
    snprintf(path, sizeof path, "random-%llu.cove", (unsigned long long)seed);
    cove_realm_t* realm = open_schema(path, SCHEMA, 1);
    cove_realm_t* other = open_schema(path, SCHEMA, 1);
    cove_object_t *owner = NULL;
    cove_list_t* nums = NULL;
    cove_results_t *items = NULL, *sorted = NULL, *limited = NULL, *list_results = NULL, *sorted_list = NULL;
    cove_token_t* tokens[5] = {NULL};
    observed seen[5] = {{.name = "sorted"}, {.name = "limited"}, {.name = "list of ints"},
                        {.name = "sorted view of the list"}, {.name = "all items"}};
    static bool written[MAX_KEY];
    int64_t now[MAX];
    cove_value_t v, link;
    size_t list_size = 0;

    rng_state = seed;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Owner", &owner));
    CHECK_OK(cove_commit(realm));
    link = link_to(owner);
    CHECK_OK(cove_object_get_list(owner, "nums", &nums));
    CHECK_OK(cove_query(realm, "Item", "TRUEPREDICATE", NULL, 0, &items));
    CHECK_OK(cove_results_sort(items, "score", true, &sorted));
    CHECK_OK(cove_query(realm, "Item", "score < 4 SORT(score DESC) LIMIT(3)", NULL, 0, &limited));
    CHECK_OK(cove_list_as_results(nums, &list_results));
    CHECK_OK(cove_results_sort(list_results, "self", true, &sorted_list));
    CHECK_OK(cove_results_observe(sorted, NULL, 0, record, &seen[0], NULL, &tokens[0]));
    CHECK_OK(cove_results_observe(limited, NULL, 0, record, &seen[1], NULL, &tokens[1]));
    CHECK_OK(cove_list_observe(nums, NULL, 0, record, &seen[2], NULL, &tokens[2]));
    CHECK_OK(cove_results_observe(sorted_list, NULL, 0, record, &seen[3], NULL, &tokens[3]));
    CHECK_OK(cove_results_observe(items, NULL, 0, record, &seen[4], NULL, &tokens[4]));
    CHECK_OK(cove_deliver(realm));
    seen[0].n_old = read_keys(sorted, seen[0].old);
    seen[1].n_old = read_keys(limited, seen[1].old);
    seen[4].n_old = read_keys(items, seen[4].old);

    for (int round = 0; round < rounds; round++) {
        /* One commit of the observing realm, or one to three of the other handle. */
        bool by_other = below(3) != 0;
        size_t commits = by_other ? 1 + below(3) : 1;
        cove_realm_t* writer = by_other ? other : realm;
        memset(written, 0, sizeof written);
        for (size_t c = 0; c < commits; c++) {
            cove_object_t* w_owner = NULL;
            cove_list_t* w_nums = NULL;
            cove_results_t* all = NULL;
            size_t n_items = 0;
            CHECK_OK(cove_begin_write(writer));
            CHECK_OK(cove_object_from_link(writer, &link, &w_owner));
            CHECK_OK(cove_object_get_list(w_owner, "nums", &w_nums));
            CHECK_OK(cove_query(writer, "Item", "TRUEPREDICATE", NULL, 0, &all));
            CHECK_OK(cove_results_count(all, &n_items));
            for (size_t op = 1 + below(5); op > 0; op--) {
                cove_object_t* item = NULL;
                size_t a = 0, b = 0;
                int64_t key = 0;
                switch (below(9)) {
                case 0:
                    if (n_items >= 60) break;
                    CHECK_OK(cove_object_create(writer, "Item", &item));
                    v = int_value((int64_t)below(6));
                    CHECK_OK(cove_object_set(item, "score", &v));
                    n_items++;
                    break;
                case 1:
                    if (n_items == 0) break;
                    CHECK_OK(cove_results_get_object(all, below(n_items), &item));
                    CHECK_OK(cove_object_delete(item));
                    n_items--;
                    break;
                case 2: case 3:                             /* a score written, maybe equal */
                    if (n_items == 0) break;
                    CHECK_OK(cove_results_get_object(all, below(n_items), &item));
                    v = int_value((int64_t)below(6));
                    CHECK_OK(cove_object_set(item, "score", &v));
                    {
                        cove_value_t l = link_to(item);
                        key = l.u.link.object_key;
                    }
                    if (key >= 0 && key < MAX_KEY) written[key] = true;
                    break;
                case 4: case 5:
                    if (list_size >= 40) break;
                    v = int_value((int64_t)below(4));       /* duplicates */
                    CHECK_OK(cove_list_insert(w_nums, below(list_size + 1), &v));
                    list_size++;
                    break;
                case 6:
                    if (list_size == 0) break;
                    CHECK_OK(cove_list_erase(w_nums, below(list_size)));
                    list_size--;
                    break;
                case 7:
                    if (list_size < 2) break;
                    a = below(list_size);
                    b = below(list_size);
                    CHECK_OK(cove_list_move(w_nums, a, b));
                    break;
                default:
                    if (list_size == 0) break;
                    if (below(5) == 0) {
                        CHECK_OK(cove_list_clear(w_nums));
                        list_size = 0;
                    } else {
                        v = int_value((int64_t)below(4));
                        CHECK_OK(cove_list_set(w_nums, below(list_size), &v));
                    }
                    break;
                }
                if (item != NULL) cove_release(item);
            }
            CHECK_OK(cove_commit(writer));
            cove_release(all);
            cove_release(w_nums);
            cove_release(w_owner);
        }
        CHECK_OK(cove_deliver(realm));
        snprintf(context, sizeof context, "seed %llu round %d", (unsigned long long)seed, round);
        size_t n = read_keys(sorted, now);
        check_change(&seen[0], now, n, written, context);
        n = read_keys(limited, now);
        check_change(&seen[1], now, n, written, context);
        n = read_keys(items, now);
        check_change(&seen[4], now, n, written, context);
        n = read_ints(list_results, now);
        check_change(&seen[2], now, n, NULL, context);
        n = read_ints(sorted_list, now);
        check_change(&seen[3], now, n, NULL, context);
    }
    for (int i = 0; i < 5; i++) cove_release(tokens[i]);
    cove_release(sorted_list);
    cove_release(list_results);
    cove_release(limited);
    cove_release(sorted);
    cove_release(items);
    cove_release(nums);
    cove_release(owner);
    cove_release(other);
    cove_release(realm);
}

int main(void) {
    for (uint64_t seed = 1; seed <= 60; seed++) run(seed * 0x9E3779B9ull, 30);
    return check_summary("test_changes_random");
}
