/* Single calls of Cove's C API beside SQLite's C API, in one process, the engines in turns.
 *
 * Person {id int primary key, name string, age int, score double}, BENCH_C_OBJECTS objects
 * (default 200000):
 *   fill     each object created with its primary key (cove_object_create_with_primary_key) and
 *            its name, age and score set one by one (cove_object_set_by_key), one write with its
 *            commit; SQLite: a prepared INSERT of the whole row in one transaction.
 *   create   each object created with its four values (cove_object_create_with_values), one
 *            write; SQLite: the same INSERT.
 *   find     BENCH_C_LOOKUPS random ids (default 200000), each found by primary key
 *            (cove_object_find) and its four properties read (cove_object_get_by_key), then the
 *            object released; SQLite: a prepared SELECT by id, four sqlite3_column_* calls.
 *   iterate  every object of `TRUEPREDICATE` read through cove_results_get_object and one
 *            cove_object_get_by_key; SQLite: SELECT score FROM person, one column a row.
 * Each row runs Cove, SQLite, SQLite, Cove on fresh files and prints the mean of the two
 * passes of each engine, per object. Durability is full for both (SQLite WAL, synchronous=FULL).
 *
 * `c-bench commits` times durable single-object commits instead: BENCH_C_OBJECTS objects loaded
 * into each engine as by `create`, then BENCH_C_COMMITS commits (default 2000) of each kind and
 * engine, the engines taking turns one commit at a time (the one going first alternating):
 *   update   one object of a random id found by primary key and its score set (cove_begin_write,
 *            cove_object_find, cove_object_set_by_key, cove_commit; SQLite BEGIN, a prepared
 *            UPDATE person SET score = ? WHERE id = ?, COMMIT);
 *   append   one object with a new id created with its four values
 *            (cove_object_create_with_values; SQLite BEGIN, the prepared INSERT, COMMIT).
 * It prints, per kind, the median and mean wall time of a commit and the median CPU time of the
 * committing thread (the part that is not waiting for the disk).
 *
 * benchmarks/objects/run-c.sh builds the library and this program and runs it. */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char* SCHEMA =
    "{\"Person\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\","
    " \"age\": \"int\", \"score\": \"double\"}}}";

static int objects = 200000, lookups = 200000, commits = 2000;
static char dir[256];
static int64_t* shuffled;

static double clock_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double now(void) { return clock_ns(CLOCK_MONOTONIC); }

static void die(const char* what) {
    fprintf(stderr, "c-bench: %s: %s\n", what, cove_last_error_message());
    exit(1);
}
#define OK(call) do { if ((call) != COVE_OK) die(#call); } while (0)
#define SQ(call) do { int rc_ = (call); if (rc_ != SQLITE_OK && rc_ != SQLITE_DONE && rc_ != SQLITE_ROW) { \
    fprintf(stderr, "c-bench: %s: %s\n", #call, sqlite3_errstr(rc_)); exit(1); } } while (0)

static void name_of(int64_t id, char* out) { snprintf(out, 24, "person%lld", (long long)id); }

/* ---- Cove ---------------------------------------------------------------------------------- */

static cove_realm_t* cove_fresh(int n) {
    char path[300];
    snprintf(path, sizeof path, "%s/cove-%d.cove", dir, n);
    unlink(path);
    cove_config_t* cfg = NULL;
    OK(cove_config_new(path, &cfg));
    OK(cove_config_set_schema_json(cfg, SCHEMA, 1));
    cove_realm_t* realm = NULL;
    OK(cove_open(cfg, &realm));
    cove_release(cfg);
    return realm;
}

static int64_t key_of(cove_realm_t* realm, const char* property) {
    int64_t key = 0;
    OK(cove_property_key(realm, "Person", property, &key));
    return key;
}

static cove_value_t int_value(int64_t i) { cove_value_t v = {.type = COVE_TYPE_INT}; v.u.integer = i; return v; }
static cove_value_t double_value(double d) { cove_value_t v = {.type = COVE_TYPE_DOUBLE}; v.u.dnum = d; return v; }
static cove_value_t string_value(const char* s) {
    cove_value_t v = {.type = COVE_TYPE_STRING};
    v.u.string.data = s;
    v.u.string.size = strlen(s);
    return v;
}

static void cove_fill(cove_realm_t* realm) {
    int64_t kName = key_of(realm, "name"), kAge = key_of(realm, "age"), kScore = key_of(realm, "score");
    char name[24];
    OK(cove_begin_write(realm));
    for (int i = 0; i < objects; i++) {
        cove_value_t pk = int_value(i), v;
        cove_object_t* o = NULL;
        OK(cove_object_create_with_primary_key(realm, "Person", &pk, &o));
        name_of(i, name);
        v = string_value(name);
        OK(cove_object_set_by_key(o, kName, &v));
        v = int_value(i % 100);
        OK(cove_object_set_by_key(o, kAge, &v));
        v = double_value(i * 0.5);
        OK(cove_object_set_by_key(o, kScore, &v));
        cove_release(o);
    }
    OK(cove_commit(realm));
}

/* Creates the object of id `id` with its four values, in the open write. */
static void cove_create_one(cove_realm_t* realm, int64_t id) {
    static const char* names[] = {"id", "name", "age", "score"};
    char name[24];
    name_of(id, name);
    cove_value_t values[4] = {int_value(id), string_value(name), int_value(id % 100), double_value(id * 0.5)};
    cove_object_t* o = NULL;
    OK(cove_object_create_with_values(realm, "Person", names, 4, values, &o));
    cove_release(o);
}

static void cove_create(cove_realm_t* realm) {
    OK(cove_begin_write(realm));
    for (int i = 0; i < objects; i++) cove_create_one(realm, i);
    OK(cove_commit(realm));
}

static double checksum;

static void cove_find(cove_realm_t* realm) {
    int64_t keys[4] = {key_of(realm, "id"), key_of(realm, "name"), key_of(realm, "age"), key_of(realm, "score")};
    for (int i = 0; i < lookups; i++) {
        cove_value_t pk = int_value(shuffled[i % objects]), v;
        cove_object_t* o = NULL;
        OK(cove_object_find(realm, "Person", &pk, &o));
        if (!o) die("cove_object_find found nothing");
        OK(cove_object_get_by_key(o, keys[0], &v)); checksum += (double)v.u.integer;
        OK(cove_object_get_by_key(o, keys[1], &v)); checksum += (double)v.u.string.size;
        OK(cove_object_get_by_key(o, keys[2], &v)); checksum += (double)v.u.integer;
        OK(cove_object_get_by_key(o, keys[3], &v)); checksum += v.u.dnum;
        cove_release(o);
    }
}

static void cove_iterate(cove_realm_t* realm) {
    int64_t kScore = key_of(realm, "score");
    cove_results_t* r = NULL;
    size_t n = 0;
    OK(cove_query(realm, "Person", "TRUEPREDICATE", NULL, 0, &r));
    OK(cove_results_count(r, &n));
    for (size_t i = 0; i < n; i++) {
        cove_object_t* o = NULL;
        cove_value_t v;
        OK(cove_results_get_object(r, i, &o));
        OK(cove_object_get_by_key(o, kScore, &v));
        checksum += v.u.dnum;
        cove_release(o);
    }
    cove_release(r);
}

/* ---- SQLite -------------------------------------------------------------------------------- */

static sqlite3* sqlite_fresh(int n) {
    char path[300];
    snprintf(path, sizeof path, "%s/sqlite-%d.db", dir, n);
    unlink(path);
    char wal[310];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    sqlite3* db = NULL;
    SQ(sqlite3_open(path, &db));
    SQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-262144;"
                        "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL,"
                        " score REAL NOT NULL)", NULL, NULL, NULL));
    return db;
}

static sqlite3_stmt* sqlite_prepare_insert(sqlite3* db) {
    sqlite3_stmt* st = NULL;
    SQ(sqlite3_prepare_v2(db, "INSERT INTO person(id, name, age, score) VALUES (?, ?, ?, ?)", -1, &st, NULL));
    return st;
}

/* Inserts the row of id `id` through the prepared INSERT `st`. */
static void sqlite_insert_one(sqlite3_stmt* st, int64_t id) {
    char name[24];
    name_of(id, name);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, id % 100);
    sqlite3_bind_double(st, 4, id * 0.5);
    SQ(sqlite3_step(st));
    sqlite3_reset(st);
}

static void sqlite_insert(sqlite3* db) {
    sqlite3_stmt* st = sqlite_prepare_insert(db);
    SQ(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    for (int i = 0; i < objects; i++) sqlite_insert_one(st, i);
    sqlite3_finalize(st);
    SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
}

static void sqlite_find(sqlite3* db) {
    sqlite3_stmt* st = NULL;
    SQ(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    SQ(sqlite3_prepare_v2(db, "SELECT id, name, age, score FROM person WHERE id = ?", -1, &st, NULL));
    for (int i = 0; i < lookups; i++) {
        sqlite3_bind_int64(st, 1, shuffled[i % objects]);
        if (sqlite3_step(st) != SQLITE_ROW) { fprintf(stderr, "c-bench: SQLite found nothing\n"); exit(1); }
        checksum += (double)sqlite3_column_int64(st, 0);
        checksum += (double)sqlite3_column_bytes(st, 1);
        (void)sqlite3_column_text(st, 1);
        checksum += (double)sqlite3_column_int64(st, 2);
        checksum += sqlite3_column_double(st, 3);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
}

static void sqlite_iterate(sqlite3* db) {
    sqlite3_stmt* st = NULL;
    SQ(sqlite3_prepare_v2(db, "SELECT score FROM person", -1, &st, NULL));
    while (sqlite3_step(st) == SQLITE_ROW) checksum += sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
}

/* ---- The rows ------------------------------------------------------------------------------ */

enum { FILL, CREATE, FIND, ITERATE, ROWS };
static const char* row_names[ROWS] = {
    "create with primary key, then three sets (per object, one write)",
    "create with four values (per object, one write)",
    "find by primary key, read four properties (per lookup)",
    "iterate results, read one property (per object)",
};

/* One pass of a row on a fresh file of each engine; returns the time per operation. */
static double cove_pass(int row, int n) {
    cove_realm_t* realm = cove_fresh(n);
    double t = 0, ops = objects;
    if (row == FILL) { t = now(); cove_fill(realm); t = now() - t; }
    else if (row == CREATE) { t = now(); cove_create(realm); t = now() - t; }
    else {
        cove_create(realm);
        if (row == FIND) { ops = lookups; t = now(); cove_find(realm); t = now() - t; }
        else { t = now(); cove_iterate(realm); t = now() - t; }
    }
    OK(cove_close(realm));
    cove_release(realm);
    return t / ops;
}

static double sqlite_pass(int row, int n) {
    sqlite3* db = sqlite_fresh(n);
    double t = 0, ops = objects;
    if (row == FILL || row == CREATE) { t = now(); sqlite_insert(db); t = now() - t; }
    else {
        sqlite_insert(db);
        if (row == FIND) { ops = lookups; t = now(); sqlite_find(db); t = now() - t; }
        else { t = now(); sqlite_iterate(db); t = now() - t; }
    }
    sqlite3_close(db);
    return t / ops;
}

/* ---- Durable single-object commits (`c-bench commits`) --------------------------------------- */

static int by_value(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void commits_run(const char* engine) {
    int cove = strcmp(engine, "sqlite") != 0, sqlite = strcmp(engine, "cove") != 0;
    cove_realm_t* realm = NULL;
    int64_t kScore = 0;
    if (cove) {
        realm = cove_fresh(4);
        cove_create(realm);
        kScore = key_of(realm, "score");
    }
    sqlite3* db = NULL;
    sqlite3_stmt *update = NULL, *insert = NULL;
    if (sqlite) {
        db = sqlite_fresh(4);
        sqlite_insert(db);
        SQ(sqlite3_prepare_v2(db, "UPDATE person SET score = ? WHERE id = ?", -1, &update, NULL));
        insert = sqlite_prepare_insert(db);
    }
    double *wall[2], *cpu[2];
    for (int k = 0; k < 2; k++) {
        wall[k] = calloc((size_t)commits, sizeof(double));
        cpu[k] = calloc((size_t)commits, sizeof(double));
    }
    printf("| %d durable commits of each kind, %d objects | Cove | SQLite | Cove/SQLite |\n|---|--:|--:|--:|\n",
           commits, objects);
    for (int kind = 0; kind < 2; kind++) {
        double sum[2] = {0, 0};
        for (int i = 0; i < commits; i++) {
            int64_t id = kind == 0 ? shuffled[i % objects] : objects + i;
            double score = i + 0.25;
            for (int turn = 0; turn < 2; turn++) {
                int k = (i + turn) % 2;
                if ((k == 0 && !cove) || (k == 1 && !sqlite)) continue;
                double w = now(), c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
                if (k == 0) {
                    OK(cove_begin_write(realm));
                    if (kind == 0) {
                        cove_value_t pk = int_value(id), v = double_value(score);
                        cove_object_t* o = NULL;
                        OK(cove_object_find(realm, "Person", &pk, &o));
                        if (!o) die("cove_object_find found nothing");
                        OK(cove_object_set_by_key(o, kScore, &v));
                        cove_release(o);
                    } else {
                        cove_create_one(realm, id);
                    }
                    OK(cove_commit(realm));
                } else {
                    SQ(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
                    if (kind == 0) {
                        sqlite3_bind_double(update, 1, score);
                        sqlite3_bind_int64(update, 2, id);
                        SQ(sqlite3_step(update));
                        if (sqlite3_changes(db) != 1) { fprintf(stderr, "c-bench: SQLite updated no row\n"); exit(1); }
                        sqlite3_reset(update);
                    } else {
                        sqlite_insert_one(insert, id);
                    }
                    SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
                }
                cpu[k][i] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c;
                wall[k][i] = now() - w;
                sum[k] += wall[k][i];
            }
        }
        double mw[2], mc[2];
        for (int k = 0; k < 2; k++) { mw[k] = median(wall[k], commits); mc[k] = median(cpu[k], commits); }
        const char* label = kind == 0 ? "update one property of a random object" : "create one object";
        printf("| %s: median | %.1f µs | %.1f µs | %.2fx |\n", label, mw[0] / 1e3, mw[1] / 1e3, mw[0] / mw[1]);
        printf("| %s: mean | %.1f µs | %.1f µs | %.2fx |\n", label, sum[0] / commits / 1e3, sum[1] / commits / 1e3,
               sum[0] / sum[1]);
        printf("| %s: median CPU | %.1f µs | %.1f µs | %.2fx |\n", label, mc[0] / 1e3, mc[1] / 1e3, mc[0] / mc[1]);
        fflush(stdout);
    }
    for (int k = 0; k < 2; k++) { free(wall[k]); free(cpu[k]); }
    if (cove) { OK(cove_close(realm)); cove_release(realm); }
    if (sqlite) { sqlite3_finalize(update); sqlite3_finalize(insert); sqlite3_close(db); }
}

int main(int argc, char** argv) {
    const char* e;
    if ((e = getenv("BENCH_C_OBJECTS"))) objects = atoi(e);
    if ((e = getenv("BENCH_C_LOOKUPS"))) lookups = atoi(e);
    const char* tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/cove-c-bench-XXXXXX", tmp);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    shuffled = malloc(sizeof *shuffled * (size_t)objects);
    for (int i = 0; i < objects; i++) shuffled[i] = i;
    uint64_t s = 42;
    for (int i = objects - 1; i > 0; i--) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((s >> 33) % (uint64_t)(i + 1));
        int64_t t = shuffled[i]; shuffled[i] = shuffled[j]; shuffled[j] = t;
    }
    if ((e = getenv("BENCH_C_COMMITS"))) commits = atoi(e);
    /* One row alone, for a profiler: 0-3, or "commits"; then "cove" or "sqlite" for one
     * engine's passes. */
    int only = argc > 1 ? atoi(argv[1]) : -1;
    const char* engine = argc > 2 ? argv[2] : "";
    if (argc > 1 && strcmp(argv[1], "commits") == 0) commits_run(engine);
    else printf("| C API, %d objects | Cove | SQLite | Cove/SQLite |\n|---|--:|--:|--:|\n", objects);
    for (int row = 0; row < ROWS && strcmp(argc > 1 ? argv[1] : "", "commits") != 0; row++) {
        if (only >= 0 && row != only) continue;
        int cove = strcmp(engine, "sqlite") != 0, sqlite = strcmp(engine, "cove") != 0;
        double c = cove ? cove_pass(row, 0) : 0, q = sqlite ? sqlite_pass(row, 1) : 0;
        q += sqlite ? sqlite_pass(row, 2) : 0;
        c += cove ? cove_pass(row, 3) : 0;
        c /= 2; q /= 2;
        printf("| %s | %.0f ns | %.0f ns | %.2fx |\n", row_names[row], c, q, c / q);
        fflush(stdout);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "c-bench: could not remove %s\n", dir);
    fprintf(stderr, "(checksum %g)\n", checksum);
    return 0;
}
