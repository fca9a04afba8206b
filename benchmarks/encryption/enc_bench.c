/* What encryption at rest costs: Cove plain, Cove encrypted, SQLite and SQLCipher in one process.
 *
 * Item {id int primary key, name string, value int}, BENCH_ROWS objects (default 100000); in
 * SQLite the table Item(id INTEGER PRIMARY KEY, name TEXT, value INTEGER). For each engine:
 *   load      every object created in one write transaction with its commit (per object). Cove:
 *             cove_object_create_with_primary_key, then cove_object_set_by_key for name and
 *             value; SQLite: a prepared INSERT between BEGIN and COMMIT.
 *   cold      the file opened afresh (the previous handle closed, so no page of it is left in
 *             the process; the kernel's page cache still holds the file for every engine) and
 *             `value` summed over all objects; the time includes the open (per object). Cove:
 *             cove_query TRUEPREDICATE, cove_results_get_keys by 1024, cove_object_get_by_keys;
 *             SQLite: SELECT value FROM Item stepped through.
 *   warm      the same scan again on the open handle (per object).
 *   lookup    BENCH_LOOKUPS random ids (default 200000), each found by primary key and its name
 *             read (per lookup). Cove: cove_object_find, cove_object_get_by_key, release;
 *             SQLite: a prepared SELECT name FROM Item WHERE id = ? inside one read transaction.
 *   commit    BENCH_COMMITS durable commits (default 2000), each one object of a random id found
 *             by primary key and its value set (Cove: cove_begin_write, cove_object_find,
 *             cove_object_set_by_key, cove_commit; SQLite: BEGIN, prepared UPDATE, COMMIT). The
 *             engines take turns one commit at a time, the first of a round rotating; median and
 *             mean wall time and the median CPU time of the committing thread.
 * load, cold, warm and lookup run BENCH_ROUNDS rounds (default 4), the engines in order in even
 * rounds and in reverse order in odd ones, each round on fresh files; the table shows the mean of
 * the rounds. The commits run on the files of the last round.
 *
 * Durability is full everywhere: Cove's default (one flush a commit); SQLite and SQLCipher in WAL
 * mode with synchronous=FULL, and a page cache of 256 MiB (the whole file stays in it). The key
 * is the same 64 bytes every run; Cove takes all 64, SQLCipher the first 32 as a raw key
 * (PRAGMA key = "x'<64 hex digits>'", so no passphrase derivation), with cipher_page_size 4096
 * (SQLCipher 3.x defaults to 1024; BENCH_CIPHER_PAGE_SIZE changes it, 0 keeps the default).
 *
 * libsqlite3 and libsqlcipher export the same symbols, so neither is linked: both are loaded
 * with dlopen(RTLD_LOCAL) and called through the same table of function pointers, each library
 * resolving its own internal calls to itself. Without libsqlcipher the SQLCipher column is empty.
 * After the load, every encrypted file is checked to hold no object name in clear (and SQLCipher's
 * not to begin with SQLite's header); the scans check the sum, the lookups the name they read.
 *
 * benchmarks/encryption/run.sh installs the packages, builds this program and runs it. */
#define _GNU_SOURCE
#include <cove.h>
#include <sqlite3.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char* SCHEMA =
    "{\"Item\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\", \"value\": \"int\"}}}";

enum { COVE, COVE_ENC, SQLITE, SQLCIPHER, ENGINES };
static const char* engine_names[ENGINES] = {"Cove", "Cove encrypted", "SQLite", "SQLCipher"};
static int rows = 100000, lookups = 200000, commits = 2000, rounds = 4, cipher_page_size = 4096;
static char dir[256];
static int64_t* shuffled;
static uint8_t key[64];
static int64_t expected_sum;

static double clock_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}
static double now(void) { return clock_ns(CLOCK_MONOTONIC); }

static void fail(const char* what, const char* detail) {
    fprintf(stderr, "enc-bench: %s: %s\n", what, detail);
    exit(1);
}
#define OK(call) do { if ((call) != COVE_OK) fail(#call, cove_last_error_message()); } while (0)

static void name_of(int64_t id, char* out) { snprintf(out, 24, "item%lld", (long long)id); }
static int64_t value_of(int64_t id) { return id * 7919 % 1000; }

static void path_of(int engine, char* out, size_t size) {
    snprintf(out, size, "%s/%s", dir, engine == COVE ? "plain.cove" : engine == COVE_ENC ? "encrypted.cove"
                                     : engine == SQLITE ? "plain.db" : "encrypted.db");
}

/* ---- SQLite and SQLCipher through dlopen ----------------------------------------------------- */

typedef struct {
    void* handle;
    int (*open_v2)(const char*, sqlite3**, int, const char*);
    int (*close)(sqlite3*);
    int (*exec)(sqlite3*, const char*, int (*)(void*, int, char**, char**), void*, char**);
    int (*prepare_v2)(sqlite3*, const char*, int, sqlite3_stmt**, const char**);
    int (*step)(sqlite3_stmt*);
    int (*reset)(sqlite3_stmt*);
    int (*finalize)(sqlite3_stmt*);
    int (*bind_int64)(sqlite3_stmt*, int, sqlite3_int64);
    int (*bind_text)(sqlite3_stmt*, int, const char*, int, void (*)(void*));
    sqlite3_int64 (*column_int64)(sqlite3_stmt*, int);
    const unsigned char* (*column_text)(sqlite3_stmt*, int);
    int (*column_bytes)(sqlite3_stmt*, int);
    int (*changes)(sqlite3*);
    const char* (*errmsg)(sqlite3*);
    const char* (*libversion)(void);
} sql_api;

static sql_api apis[2]; /* [0] libsqlite3, [1] libsqlcipher */
static int have[ENGINES];

static int load_api(sql_api* a, const char* library) {
    a->handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!a->handle) return 0;
#define SYM(field, name) do { *(void**)&a->field = dlsym(a->handle, name); if (!a->field) fail("dlsym", name); } while (0)
    SYM(open_v2, "sqlite3_open_v2"); SYM(close, "sqlite3_close"); SYM(exec, "sqlite3_exec");
    SYM(prepare_v2, "sqlite3_prepare_v2"); SYM(step, "sqlite3_step"); SYM(reset, "sqlite3_reset");
    SYM(finalize, "sqlite3_finalize"); SYM(bind_int64, "sqlite3_bind_int64"); SYM(bind_text, "sqlite3_bind_text");
    SYM(column_int64, "sqlite3_column_int64"); SYM(column_text, "sqlite3_column_text");
    SYM(column_bytes, "sqlite3_column_bytes"); SYM(changes, "sqlite3_changes"); SYM(errmsg, "sqlite3_errmsg");
    SYM(libversion, "sqlite3_libversion");
#undef SYM
    return 1;
}

typedef struct {
    const sql_api* a;
    sqlite3* db;
} sql_db;

static void sq_check(const sql_db* d, int rc, const char* what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) fail(what, d->a->errmsg(d->db));
}
#define SQ(d, call) sq_check(d, (call), #call)

static void sq_exec(const sql_db* d, const char* sql) { SQ(d, d->a->exec(d->db, sql, NULL, NULL, NULL)); }

static sqlite3_stmt* sq_prepare(const sql_db* d, const char* sql) {
    sqlite3_stmt* st = NULL;
    SQ(d, d->a->prepare_v2(d->db, sql, -1, &st, NULL));
    return st;
}

/* The first column of the first row of `sql`, or "" (kept in `out`). */
static void sq_text(const sql_db* d, const char* sql, char* out, size_t size) {
    sqlite3_stmt* st = sq_prepare(d, sql);
    out[0] = 0;
    if (d->a->step(st) == SQLITE_ROW && d->a->column_text(st, 0))
        snprintf(out, size, "%s", (const char*)d->a->column_text(st, 0));
    d->a->finalize(st);
}

static sql_db sql_open(int engine) {
    char path[300], sql[256], hex[65];
    path_of(engine, path, sizeof path);
    sql_db d = {&apis[engine == SQLCIPHER], NULL};
    SQ(&d, d.a->open_v2(path, &d.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL));
    if (engine == SQLCIPHER) {
        for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
        snprintf(sql, sizeof sql, "PRAGMA key = \"x'%s'\"", hex);
        sq_exec(&d, sql);
        if (cipher_page_size > 0) {
            snprintf(sql, sizeof sql, "PRAGMA cipher_page_size = %d", cipher_page_size);
            sq_exec(&d, sql);
        }
    }
    sq_exec(&d, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-262144");
    return d;
}

static void sql_close(sql_db* d) {
    SQ(d, d->a->close(d->db));
    d->db = NULL;
}

/* ---- Cove ------------------------------------------------------------------------------------ */

static cove_realm_t* cove_open_engine(int engine) {
    char path[300];
    path_of(engine, path, sizeof path);
    cove_config_t* cfg = NULL;
    OK(cove_config_new(path, &cfg));
    OK(cove_config_set_schema_json(cfg, SCHEMA, 1));
    if (engine == COVE_ENC) OK(cove_config_set_encryption_key(cfg, key, sizeof key));
    cove_realm_t* realm = NULL;
    OK(cove_open(cfg, &realm));
    cove_release(cfg);
    return realm;
}

static void cove_close_engine(cove_realm_t* realm) {
    OK(cove_close(realm));
    cove_release(realm);
}

static int64_t prop(cove_realm_t* realm, const char* name) {
    int64_t k = 0;
    OK(cove_property_key(realm, "Item", name, &k));
    return k;
}

static cove_value_t int_value(int64_t i) { cove_value_t v = {.type = COVE_TYPE_INT}; v.u.integer = i; return v; }

/* ---- The workloads, one engine at a time ------------------------------------------------------ */

typedef struct {
    cove_realm_t* realm;
    sql_db sql;
} handle;

static handle open_engine(int engine) {
    handle h = {NULL, {NULL, NULL}};
    if (engine <= COVE_ENC) h.realm = cove_open_engine(engine);
    else h.sql = sql_open(engine);
    return h;
}

static void close_engine(int engine, handle* h) {
    if (engine <= COVE_ENC) cove_close_engine(h->realm);
    else sql_close(&h->sql);
}

static void remove_files(int engine) {
    char path[300], other[320];
    path_of(engine, path, sizeof path);
    unlink(path);
    static const char* suffixes[] = {"-wal", "-shm", "-journal", ".lock", ".note", ".management"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        snprintf(other, sizeof other, "%s%s", path, suffixes[i]);
        unlink(other);
    }
}

static void load(int engine, handle* h) {
    char name[24];
    if (engine <= COVE_ENC) {
        cove_realm_t* realm = h->realm;
        int64_t kName = prop(realm, "name"), kValue = prop(realm, "value");
        OK(cove_begin_write(realm));
        for (int i = 0; i < rows; i++) {
            cove_value_t pk = int_value(i), v = {.type = COVE_TYPE_STRING};
            cove_object_t* o = NULL;
            OK(cove_object_create_with_primary_key(realm, "Item", &pk, &o));
            name_of(i, name);
            v.u.string.data = name;
            v.u.string.size = strlen(name);
            OK(cove_object_set_by_key(o, kName, &v));
            v = int_value(value_of(i));
            OK(cove_object_set_by_key(o, kValue, &v));
            cove_release(o);
        }
        OK(cove_commit(realm));
    } else {
        sql_db* d = &h->sql;
        const sql_api* a = d->a;
        sq_exec(d, "CREATE TABLE Item(id INTEGER PRIMARY KEY, name TEXT, value INTEGER)");
        sqlite3_stmt* st = sq_prepare(d, "INSERT INTO Item(id, name, value) VALUES (?, ?, ?)");
        sq_exec(d, "BEGIN");
        for (int i = 0; i < rows; i++) {
            name_of(i, name);
            a->bind_int64(st, 1, i);
            a->bind_text(st, 2, name, -1, SQLITE_STATIC);
            a->bind_int64(st, 3, value_of(i));
            SQ(d, a->step(st));
            a->reset(st);
        }
        a->finalize(st);
        sq_exec(d, "COMMIT");
    }
}

static void scan(int engine, handle* h) {
    int64_t sum = 0;
    size_t n = 0;
    if (engine <= COVE_ENC) {
        cove_realm_t* realm = h->realm;
        uint32_t cls = 0;
        OK(cove_class_key(realm, "Item", &cls));
        int64_t kValue = prop(realm, "value"), keys[1024];
        cove_results_t* r = NULL;
        OK(cove_query(realm, "Item", "TRUEPREDICATE", NULL, 0, &r));
        size_t count = 0, got = 0;
        OK(cove_results_count(r, &count));
        for (size_t start = 0; start < count; start += got) {
            OK(cove_results_get_keys(r, start, 1024, keys, &got));
            for (size_t i = 0; i < got; i++) {
                cove_value_t v;
                OK(cove_object_get_by_keys(realm, cls, keys[i], kValue, &v));
                sum += v.u.integer;
            }
            n += got;
        }
        cove_release(r);
    } else {
        sql_db* d = &h->sql;
        sqlite3_stmt* st = sq_prepare(d, "SELECT value FROM Item");
        int rc;
        while ((rc = d->a->step(st)) == SQLITE_ROW) { sum += d->a->column_int64(st, 0); n++; }
        SQ(d, rc);
        d->a->finalize(st);
    }
    if (sum != expected_sum || n != (size_t)rows) fail(engine_names[engine], "the scan read other values than were loaded");
}

static void lookup(int engine, handle* h) {
    char name[24];
    if (engine <= COVE_ENC) {
        cove_realm_t* realm = h->realm;
        int64_t kName = prop(realm, "name");
        for (int i = 0; i < lookups; i++) {
            int64_t id = shuffled[i % rows];
            cove_value_t pk = int_value(id), v;
            cove_object_t* o = NULL;
            OK(cove_object_find(realm, "Item", &pk, &o));
            if (!o) fail(engine_names[engine], "cove_object_find found nothing");
            OK(cove_object_get_by_key(o, kName, &v));
            name_of(id, name);
            if (v.u.string.size != strlen(name) || memcmp(v.u.string.data, name, v.u.string.size) != 0)
                fail(engine_names[engine], "a lookup read another name");
            cove_release(o);
        }
    } else {
        sql_db* d = &h->sql;
        const sql_api* a = d->a;
        sqlite3_stmt* st = sq_prepare(d, "SELECT name FROM Item WHERE id = ?");
        sq_exec(d, "BEGIN");
        for (int i = 0; i < lookups; i++) {
            int64_t id = shuffled[i % rows];
            a->bind_int64(st, 1, id);
            if (a->step(st) != SQLITE_ROW) fail(engine_names[engine], "SELECT found nothing");
            const unsigned char* text = a->column_text(st, 0);
            int size = a->column_bytes(st, 0);
            name_of(id, name);
            if (!text || size != (int)strlen(name) || memcmp(text, name, (size_t)size) != 0)
                fail(engine_names[engine], "a lookup read another name");
            a->reset(st);
        }
        a->finalize(st);
        sq_exec(d, "COMMIT");
    }
}

/* ---- Checks on the files ------------------------------------------------------------------------ */

static long long file_size(const char* path) {
    struct stat s;
    return stat(path, &s) == 0 ? (long long)s.st_size : 0;
}

/* The bytes of the engine's files after the load and close (the database and, if left, its WAL). */
static long long engine_bytes(int engine) {
    char path[300], wal[310];
    path_of(engine, path, sizeof path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    return file_size(path) + file_size(wal);
}

/* An encrypted file must not show a name in clear; a plain one should (so the check can see). */
static void check_clear_text(int engine) {
    char path[300];
    path_of(engine, path, sizeof path);
    FILE* f = fopen(path, "rb");
    if (!f) fail(path, "cannot open");
    long long size = file_size(path);
    char* bytes = malloc((size_t)size + 1);
    size_t n = fread(bytes, 1, (size_t)size, f);
    fclose(f);
    char name[24];
    name_of(rows / 2, name);
    int clear = memmem(bytes, n, name, strlen(name)) != NULL;
    int header = n >= 16 && memcmp(bytes, "SQLite format 3", 16) == 0;
    free(bytes);
    int encrypted = engine == COVE_ENC || engine == SQLCIPHER;
    if (encrypted && (clear || header)) fail(engine_names[engine], "the file holds its data in clear");
    if (!encrypted && !clear) fail(engine_names[engine], "the plain file does not show a name (check broken)");
}

/* ---- Durable commits, the engines in turns ------------------------------------------------------ */

static int by_value(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void commit_rounds(double wall_median[], double wall_mean[], double cpu_median[]) {
    handle h[ENGINES];
    sqlite3_stmt* update[ENGINES] = {0};
    int64_t kValue[ENGINES] = {0};
    double *wall[ENGINES], *cpu[ENGINES], sum[ENGINES] = {0};
    for (int e = 0; e < ENGINES; e++) {
        if (!have[e]) continue;
        h[e] = open_engine(e);
        if (e <= COVE_ENC) kValue[e] = prop(h[e].realm, "value");
        else update[e] = sq_prepare(&h[e].sql, "UPDATE Item SET value = ? WHERE id = ?");
        wall[e] = calloc((size_t)commits, sizeof(double));
        cpu[e] = calloc((size_t)commits, sizeof(double));
    }
    for (int i = 0; i < commits; i++) {
        int64_t id = shuffled[(i * 7 + 3) % rows], value = 1000 + i;
        for (int turn = 0; turn < ENGINES; turn++) {
            int e = (i + turn) % ENGINES;
            if (!have[e]) continue;
            double w = now(), c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
            if (e <= COVE_ENC) {
                cove_realm_t* realm = h[e].realm;
                cove_value_t pk = int_value(id), v = int_value(value);
                cove_object_t* o = NULL;
                OK(cove_begin_write(realm));
                OK(cove_object_find(realm, "Item", &pk, &o));
                if (!o) fail(engine_names[e], "cove_object_find found nothing");
                OK(cove_object_set_by_key(o, kValue[e], &v));
                cove_release(o);
                OK(cove_commit(realm));
            } else {
                sql_db* d = &h[e].sql;
                sq_exec(d, "BEGIN");
                d->a->bind_int64(update[e], 1, value);
                d->a->bind_int64(update[e], 2, id);
                SQ(d, d->a->step(update[e]));
                if (d->a->changes(d->db) != 1) fail(engine_names[e], "the UPDATE changed no row");
                d->a->reset(update[e]);
                sq_exec(d, "COMMIT");
            }
            cpu[e][i] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c;
            wall[e][i] = now() - w;
            sum[e] += wall[e][i];
        }
    }
    for (int e = 0; e < ENGINES; e++) {
        if (!have[e]) continue;
        wall_mean[e] = sum[e] / commits;
        wall_median[e] = median(wall[e], commits);
        cpu_median[e] = median(cpu[e], commits);
        free(wall[e]);
        free(cpu[e]);
        if (e >= SQLITE) h[e].sql.a->finalize(update[e]);
        close_engine(e, &h[e]);
    }
}

/* ---- The table ------------------------------------------------------------------------------------ */

static void cell(char* out, size_t size, int engine, double ns) {
    if (!have[engine]) snprintf(out, size, "-");
    else if (ns >= 1e5) snprintf(out, size, "%.0f µs", ns / 1e3);
    else if (ns >= 1e4) snprintf(out, size, "%.1f µs", ns / 1e3);
    else if (ns >= 1e3) snprintf(out, size, "%.2f µs", ns / 1e3);
    else snprintf(out, size, "%.0f ns", ns);
}

static void ratio(char* out, size_t size, int plain, int encrypted, const double* v) {
    if (have[plain] && have[encrypted] && v[plain] > 0) snprintf(out, size, "%.2fx", v[encrypted] / v[plain]);
    else snprintf(out, size, "-");
}

static void row(const char* label, const double* v) {
    char c[ENGINES][32], r[2][16];
    for (int e = 0; e < ENGINES; e++) cell(c[e], sizeof c[e], e, v[e]);
    ratio(r[0], sizeof r[0], COVE, COVE_ENC, v);
    ratio(r[1], sizeof r[1], SQLITE, SQLCIPHER, v);
    printf("| %s | %s | %s | %s | %s | %s | %s |\n", label, c[COVE], c[COVE_ENC], r[0], c[SQLITE], c[SQLCIPHER], r[1]);
    fflush(stdout);
}

int main(void) {
    const char* e;
    if ((e = getenv("BENCH_ROWS"))) rows = atoi(e);
    if ((e = getenv("BENCH_LOOKUPS"))) lookups = atoi(e);
    if ((e = getenv("BENCH_COMMITS"))) commits = atoi(e);
    if ((e = getenv("BENCH_ROUNDS"))) rounds = atoi(e);
    if ((e = getenv("BENCH_CIPHER_PAGE_SIZE"))) cipher_page_size = atoi(e);
    if (rows < 2 || lookups < 1 || commits < 1 || rounds < 1) fail("sizes", "BENCH_ROWS >= 2, the others >= 1");
    const char* tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/cove-enc-bench-XXXXXX", tmp);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }

    for (int i = 0; i < 64; i++) key[i] = (uint8_t)(i * 37 + 11);
    shuffled = malloc(sizeof *shuffled * (size_t)rows);
    for (int i = 0; i < rows; i++) { shuffled[i] = i; expected_sum += value_of(i); }
    uint64_t s = 42;
    for (int i = rows - 1; i > 0; i--) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((s >> 33) % (uint64_t)(i + 1));
        int64_t t = shuffled[i]; shuffled[i] = shuffled[j]; shuffled[j] = t;
    }

    have[COVE] = have[COVE_ENC] = 1;
    if (!load_api(&apis[0], "libsqlite3.so.0")) fail("dlopen libsqlite3.so.0", dlerror());
    have[SQLITE] = 1;
    have[SQLCIPHER] = load_api(&apis[1], "libsqlcipher.so.0");
    if (!have[SQLCIPHER]) fprintf(stderr, "enc-bench: no libsqlcipher.so.0 (%s): SQLCipher left out\n", dlerror());

    char sqlite_version[64] = "", cipher_version[64] = "";
    snprintf(sqlite_version, sizeof sqlite_version, "%s", apis[0].libversion());
    if (have[SQLCIPHER]) {
        sql_db probe = {&apis[1], NULL};
        char path[300];
        snprintf(path, sizeof path, "%s/probe.db", dir);
        SQ(&probe, probe.a->open_v2(path, &probe.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL));
        sq_text(&probe, "PRAGMA cipher_version", cipher_version, sizeof cipher_version);
        sql_close(&probe);
        unlink(path);
        if (!cipher_version[0]) fail("libsqlcipher.so.0", "PRAGMA cipher_version answers nothing: not SQLCipher");
    }
    fprintf(stderr, "enc-bench: %d objects, %d lookups, %d commits, %d rounds; SQLite %s, SQLCipher %s (SQLite %s)\n",
            rows, lookups, commits, rounds, sqlite_version, have[SQLCIPHER] ? cipher_version : "-",
            have[SQLCIPHER] ? apis[1].libversion() : "-");

    enum { LOAD, COLD, WARM, LOOKUP, TIMED };
    double t[TIMED][ENGINES] = {{0}}, bytes[ENGINES] = {0};
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < ENGINES; k++) {
            int engine = r % 2 ? ENGINES - 1 - k : k;
            if (!have[engine]) continue;
            remove_files(engine);
            handle h = open_engine(engine);
            double w = now();
            load(engine, &h);
            t[LOAD][engine] += (now() - w) / rows;
            close_engine(engine, &h);
            bytes[engine] = (double)engine_bytes(engine);
            check_clear_text(engine);

            w = now();
            h = open_engine(engine);
            scan(engine, &h);
            t[COLD][engine] += (now() - w) / rows;
            w = now();
            scan(engine, &h);
            t[WARM][engine] += (now() - w) / rows;
            w = now();
            lookup(engine, &h);
            t[LOOKUP][engine] += (now() - w) / lookups;
            close_engine(engine, &h);
            fprintf(stderr, "  round %d: %s done\n", r + 1, engine_names[engine]);
        }
    }
    for (int k = 0; k < TIMED; k++)
        for (int engine = 0; engine < ENGINES; engine++) t[k][engine] /= rounds;

    double cm[ENGINES] = {0}, ca[ENGINES] = {0}, cc[ENGINES] = {0};
    fprintf(stderr, "  %d durable commits of each engine in turns\n", commits);
    commit_rounds(cm, ca, cc);

    printf("| %d objects; %d rounds | Cove | Cove encrypted | encrypted / plain | SQLite | SQLCipher | encrypted / plain |\n",
           rows, rounds);
    printf("|---|--:|--:|--:|--:|--:|--:|\n");
    row("load in one transaction (per object)", t[LOAD]);
    row("cold scan: open, sum `value` (per object)", t[COLD]);
    row("warm scan: sum `value` again (per object)", t[WARM]);
    char label[96];
    snprintf(label, sizeof label, "lookup by primary key, read `name` (per lookup, %d)", lookups);
    row(label, t[LOOKUP]);
    snprintf(label, sizeof label, "durable update commit, median (%d in turns)", commits);
    row(label, cm);
    row("durable update commit, mean", ca);
    row("durable update commit, median CPU of the thread", cc);
    {
        char c[ENGINES][32], r[2][16];
        for (int k = 0; k < ENGINES; k++) {
            if (have[k]) snprintf(c[k], sizeof c[k], "%.0f KiB", bytes[k] / 1024);
            else snprintf(c[k], sizeof c[k], "-");
        }
        ratio(r[0], sizeof r[0], COVE, COVE_ENC, bytes);
        ratio(r[1], sizeof r[1], SQLITE, SQLCIPHER, bytes);
        printf("| file after the load and close | %s | %s | %s | %s | %s | %s |\n", c[COVE], c[COVE_ENC], r[0],
               c[SQLITE], c[SQLCIPHER], r[1]);
    }

    for (int k = 0; k < ENGINES; k++) remove_files(k);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "enc-bench: could not remove %s\n", dir);
    return 0;
}
