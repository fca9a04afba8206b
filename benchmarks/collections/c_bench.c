/* Small lists, sets and maps through Cove's C API beside the same data in SQLite (a parent table
 * and a child table indexed on its owner, and on the position for lists), in one process.
 *
 * Rows (sizes in the names are the defaults):
 *   (a) file of 5,000 objects with a one-element list of int, set of string, map of int; SQLite
 *       parent(id, n) and child(owner, pos, value), child(owner, value) or child(owner, key,
 *       value). The Cove figure is the file's size after close, with the bytes in use (of pages
 *       holding live data, cove_file_space) in brackets.
 *   (b) file of 25,000 products (name, price, a description of about 60 characters, two short
 *       string tags: about 2.3 MB as JSON lines); Cove `Product {name, price, description,
 *       tags: string[]}`, SQLite product(id, name, price, description) and
 *       product_tag(product, pos, tag).
 *   (c) 20,000 objects {id int primary key, name string, nums int[]} created in one write with
 *       its durable commit, each by one cove_object_create_with_values (id, name and, with the
 *       list, nums as a COVE_TYPE_LIST value); without it, the same call with id and name; and,
 *       as a program filling the list element by element would, cove_object_create_with_values
 *       (id, name), cove_object_get_list and two cove_list_insert.
 *       SQLite: a prepared INSERT of the parent, and two of the child rows with the list.
 *   (d) reading each of those 20,000 two-element lists: from the object (found beforehand),
 *       cove_object_get_list, cove_list_size, two cove_list_get; SQLite a prepared
 *       SELECT value FROM thing_num WHERE owner = ? ORDER BY pos stepped through.
 *   (e) one list of 10,000 ints: appended one cove_list_insert at a time in one write with its
 *       commit, then read by index (cove_list_get, 10 rounds); SQLite 10,000 prepared INSERTs,
 *       then SELECT ... WHERE owner = ? ORDER BY pos stepped through (10 rounds).
 * Durability is full for both (SQLite WAL, synchronous=FULL). Timed rows run Cove, SQLite,
 * SQLite, Cove on fresh files and print the mean of each engine's two passes.
 *
 * benchmarks/collections/run.sh builds the library and this program and runs it. An argument
 * `cove` or `sqlite` runs one engine alone (for a profiler). */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char* SCHEMA =
    "{\"ListItem\": {\"properties\": {\"n\": \"int\", \"nums\": \"int[]\"}},"
    " \"SetItem\": {\"properties\": {\"n\": \"int\", \"tags\": \"string<>\"}},"
    " \"MapItem\": {\"properties\": {\"n\": \"int\", \"counts\": \"int{}\"}},"
    " \"Product\": {\"properties\": {\"name\": \"string\", \"price\": \"double\", \"description\": \"string\","
    "   \"tags\": \"string[]\"}},"
    " \"Thing\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\", \"nums\": \"int[]\"}},"
    " \"Big\": {\"properties\": {\"nums\": \"int[]\"}}}";

static int small_objects = 5000, products = 25000, things = 20000, big = 10000;
enum { BIG_ROUNDS = 10 };
static char dir[256];
static int run_cove = 1, run_sqlite = 1;
static double checksum;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void die(const char* what) {
    fprintf(stderr, "collections-bench: %s: %s\n", what, cove_last_error_message());
    exit(1);
}
#define OK(call) do { if ((call) != COVE_OK) die(#call); } while (0)
#define SQ(call) do { int rc_ = (call); if (rc_ != SQLITE_OK && rc_ != SQLITE_DONE && rc_ != SQLITE_ROW) { \
    fprintf(stderr, "collections-bench: %s: %s\n", #call, sqlite3_errstr(rc_)); exit(1); } } while (0)

static cove_value_t int_value(int64_t i) { cove_value_t v = {.type = COVE_TYPE_INT}; v.u.integer = i; return v; }
static cove_value_t double_value(double d) { cove_value_t v = {.type = COVE_TYPE_DOUBLE}; v.u.dnum = d; return v; }
static cove_value_t string_value(const char* s) {
    cove_value_t v = {.type = COVE_TYPE_STRING};
    v.u.string.data = s;
    v.u.string.size = strlen(s);
    return v;
}

static long long file_size(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* ---- Data ---------------------------------------------------------------------------------- */

static uint64_t rng_state;
static uint32_t next_random(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

static const char* WORDS[] = {"red", "blue", "green", "black", "white", "steel", "wood", "glass", "soft",
                              "large", "small", "light", "heavy", "round", "flat", "warm", "cool", "fast",
                              "quiet", "smart", "home", "garden", "kitchen", "office", "outdoor", "travel",
                              "sport", "kids", "pet", "tool", "audio", "video", "paper", "cotton", "wool",
                              "metal", "plastic", "eco", "retro", "classic"};
#define N_WORDS (sizeof WORDS / sizeof WORDS[0])

typedef struct { char name[24]; double price; char description[72]; const char* tags[2]; } product_t;
static product_t* catalog;

/* Deterministic products: a name, a price, a description of words up to about 60 characters and
 * two distinct tags; returns the size of the data as JSON lines. */
static long long make_products(void) {
    catalog = calloc((size_t)products, sizeof *catalog);
    rng_state = 2026;
    long long json = 0;
    for (int i = 0; i < products; i++) {
        product_t* p = &catalog[i];
        snprintf(p->name, sizeof p->name, "Product %05d", i);
        p->price = (double)(next_random() % 100000) / 100.0;
        size_t len = 0;
        while (len < 54) {
            const char* w = WORDS[next_random() % N_WORDS];
            len += (size_t)snprintf(p->description + len, sizeof p->description - len, len ? " %s" : "%s", w);
        }
        uint32_t a = next_random() % N_WORDS, b = (a + 1 + next_random() % (N_WORDS - 1)) % N_WORDS;
        p->tags[0] = WORDS[a];
        p->tags[1] = WORDS[b];
        char line[256];
        json += snprintf(line, sizeof line,
                         "{\"name\":\"%s\",\"price\":%.2f,\"description\":\"%s\",\"tags\":[\"%s\",\"%s\"]}\n",
                         p->name, p->price, p->description, p->tags[0], p->tags[1]);
    }
    return json;
}

/* ---- Cove ---------------------------------------------------------------------------------- */

static void cove_path(const char* name, char* out, size_t size) { snprintf(out, size, "%s/%s.cove", dir, name); }

static cove_realm_t* cove_fresh(const char* name) {
    char path[300];
    cove_path(name, path, sizeof path);
    unlink(path);
    cove_config_t* cfg = NULL;
    OK(cove_config_new(path, &cfg));
    OK(cove_config_set_schema_json(cfg, SCHEMA, 1));
    cove_realm_t* realm = NULL;
    OK(cove_open(cfg, &realm));
    cove_release(cfg);
    return realm;
}

static uint64_t cove_used(cove_realm_t* realm) {
    uint64_t used = 0;
    OK(cove_file_space(realm, NULL, NULL, &used));
    return used;
}

static void cove_done(cove_realm_t* realm) {
    OK(cove_close(realm));
    cove_release(realm);
}

/* Commits, notes the bytes in use in `used`, closes, and returns the size of file `name`. */
static long long cove_commit_close(cove_realm_t* realm, const char* name, uint64_t* used) {
    OK(cove_commit(realm));
    *used = cove_used(realm);
    cove_done(realm);
    char path[300];
    cove_path(name, path, sizeof path);
    return file_size(path);
}

/* kind 0: int list, 1: string set, 2: int map. Returns the file size; `used` the bytes in use. */
static long long cove_small(int kind, uint64_t* used) {
    static const char* classes[] = {"ListItem", "SetItem", "MapItem"};
    static const char* names[] = {"n"};
    cove_realm_t* realm = cove_fresh("small");
    OK(cove_begin_write(realm));
    for (int i = 0; i < small_objects; i++) {
        cove_value_t n = int_value(i);
        cove_object_t* o = NULL;
        OK(cove_object_create_with_values(realm, classes[kind], names, 1, &n, &o));
        if (kind == 0) {
            cove_list_t* l = NULL;
            OK(cove_object_get_list(o, "nums", &l));
            cove_value_t v = int_value(i * 7);
            OK(cove_list_insert(l, 0, &v));
            cove_release(l);
        } else if (kind == 1) {
            cove_set_t* s = NULL;
            char tag[16];
            snprintf(tag, sizeof tag, "tag%06d", i);
            cove_value_t v = string_value(tag);
            OK(cove_object_get_set(o, "tags", &s));
            OK(cove_set_insert(s, &v, NULL));
            cove_release(s);
        } else {
            cove_map_t* m = NULL;
            cove_value_t v = int_value(i);
            OK(cove_object_get_map(o, "counts", &m));
            OK(cove_map_set(m, "k", &v));
            cove_release(m);
        }
        cove_release(o);
    }
    return cove_commit_close(realm, "small", used);
}

static long long cove_products(uint64_t* used) {
    static const char* names[] = {"name", "price", "description"};
    cove_realm_t* realm = cove_fresh("products");
    OK(cove_begin_write(realm));
    for (int i = 0; i < products; i++) {
        product_t* p = &catalog[i];
        cove_value_t values[3] = {string_value(p->name), double_value(p->price), string_value(p->description)};
        cove_object_t* o = NULL;
        cove_list_t* tags = NULL;
        OK(cove_object_create_with_values(realm, "Product", names, 3, values, &o));
        OK(cove_object_get_list(o, "tags", &tags));
        for (size_t t = 0; t < 2; t++) {
            cove_value_t v = string_value(p->tags[t]);
            OK(cove_list_insert(tags, t, &v));
        }
        cove_release(tags);
        cove_release(o);
    }
    return cove_commit_close(realm, "products", used);
}

/* Row (c), and with the list row (d) on the same file: times per object in out[0] and out[1].
 * with_list: 0 none, 1 the list given to the create, 2 the list filled by inserts. */
static void cove_things(int with_list, double out[2]) {
    static const char* names[] = {"id", "name", "nums"};
    cove_realm_t* realm = cove_fresh(with_list == 1 ? "things" : with_list ? "inserted" : "plain");
    char name[24];
    double t = now();
    OK(cove_begin_write(realm));
    for (int i = 0; i < things; i++) {
        snprintf(name, sizeof name, "thing%d", i);
        cove_value_t nums[2] = {int_value(i), int_value(-i)};
        cove_value_t values[3] = {int_value(i), string_value(name), {.type = COVE_TYPE_LIST}};
        values[2].u.elements.items = nums;
        values[2].u.elements.count = 2;
        cove_object_t* o = NULL;
        OK(cove_object_create_with_values(realm, "Thing", names, with_list == 1 ? 3 : 2, values, &o));
        if (with_list == 2) {
            cove_list_t* l = NULL;
            OK(cove_object_get_list(o, "nums", &l));
            cove_value_t v = int_value(i);
            OK(cove_list_insert(l, 0, &v));
            v = int_value(-i);
            OK(cove_list_insert(l, 1, &v));
            cove_release(l);
        }
        cove_release(o);
    }
    OK(cove_commit(realm));
    out[0] = (now() - t) / things;
    out[1] = 0;
    if (with_list) {
        cove_object_t** objects = malloc(sizeof *objects * (size_t)things);
        for (int i = 0; i < things; i++) {
            cove_value_t pk = int_value(i);
            OK(cove_object_find(realm, "Thing", &pk, &objects[i]));
        }
        t = now();
        for (int i = 0; i < things; i++) {
            cove_list_t* l = NULL;
            size_t n = 0;
            OK(cove_object_get_list(objects[i], "nums", &l));
            OK(cove_list_size(l, &n));
            for (size_t j = 0; j < n; j++) {
                cove_value_t v;
                OK(cove_list_get(l, j, &v));
                checksum += (double)v.u.integer;
            }
            cove_release(l);
        }
        out[1] = (now() - t) / things;
        for (int i = 0; i < things; i++) cove_release(objects[i]);
        free(objects);
    }
    cove_done(realm);
}

/* Row (e): per element, out[0] the appends with the commit, out[1] the reads by index. */
static void cove_big(double out[2]) {
    cove_realm_t* realm = cove_fresh("big");
    cove_object_t* o = NULL;
    cove_list_t* l = NULL;
    double t = now();
    OK(cove_begin_write(realm));
    OK(cove_object_create(realm, "Big", &o));
    OK(cove_object_get_list(o, "nums", &l));
    for (int i = 0; i < big; i++) {
        cove_value_t v = int_value(i);
        OK(cove_list_insert(l, (size_t)i, &v));
    }
    OK(cove_commit(realm));
    out[0] = (now() - t) / big;
    t = now();
    for (int r = 0; r < BIG_ROUNDS; r++) {
        for (int i = 0; i < big; i++) {
            cove_value_t v;
            OK(cove_list_get(l, (size_t)i, &v));
            checksum += (double)v.u.integer;
        }
    }
    out[1] = (now() - t) / ((double)big * BIG_ROUNDS);
    cove_release(l);
    cove_release(o);
    cove_done(realm);
}

/* ---- SQLite -------------------------------------------------------------------------------- */

static void sqlite_path(const char* name, char* out, size_t size) { snprintf(out, size, "%s/%s.db", dir, name); }

static sqlite3* sqlite_fresh(const char* name, const char* ddl) {
    char path[300], wal[310];
    sqlite_path(name, path, sizeof path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(path);
    unlink(wal);
    sqlite3* db = NULL;
    SQ(sqlite3_open(path, &db));
    SQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-262144;", NULL, NULL,
                    NULL));
    SQ(sqlite3_exec(db, ddl, NULL, NULL, NULL));
    return db;
}

static sqlite3_stmt* prepare(sqlite3* db, const char* sql) {
    sqlite3_stmt* st = NULL;
    SQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL));
    return st;
}

static void step_reset(sqlite3_stmt* st) {
    SQ(sqlite3_step(st));
    sqlite3_reset(st);
}

/* The file after close (the WAL checkpointed into it and removed). */
static long long sqlite_close_size(sqlite3* db, const char* name) {
    sqlite3_close(db);
    char path[300];
    sqlite_path(name, path, sizeof path);
    return file_size(path);
}

static long long sqlite_small(int kind) {
    static const char* ddl[] = {
        "CREATE TABLE item(id INTEGER PRIMARY KEY, n INTEGER NOT NULL);"
        "CREATE TABLE item_num(owner INTEGER NOT NULL, pos INTEGER NOT NULL, value INTEGER NOT NULL);"
        "CREATE INDEX item_num_owner ON item_num(owner, pos)",
        "CREATE TABLE item(id INTEGER PRIMARY KEY, n INTEGER NOT NULL);"
        "CREATE TABLE item_tag(owner INTEGER NOT NULL, value TEXT NOT NULL);"
        "CREATE INDEX item_tag_owner ON item_tag(owner)",
        "CREATE TABLE item(id INTEGER PRIMARY KEY, n INTEGER NOT NULL);"
        "CREATE TABLE item_count(owner INTEGER NOT NULL, key TEXT NOT NULL, value INTEGER NOT NULL);"
        "CREATE INDEX item_count_owner ON item_count(owner)"};
    static const char* child[] = {"INSERT INTO item_num VALUES (?, 0, ?)", "INSERT INTO item_tag VALUES (?, ?)",
                                  "INSERT INTO item_count VALUES (?, 'k', ?)"};
    sqlite3* db = sqlite_fresh("small", ddl[kind]);
    SQ(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    sqlite3_stmt* parent = prepare(db, "INSERT INTO item(id, n) VALUES (?, ?)");
    sqlite3_stmt* st = prepare(db, child[kind]);
    for (int i = 0; i < small_objects; i++) {
        sqlite3_bind_int64(parent, 1, i + 1);
        sqlite3_bind_int64(parent, 2, i);
        step_reset(parent);
        sqlite3_bind_int64(st, 1, i + 1);
        char tag[16];
        if (kind == 1) {
            snprintf(tag, sizeof tag, "tag%06d", i);
            sqlite3_bind_text(st, 2, tag, -1, SQLITE_TRANSIENT);
        } else {
            sqlite3_bind_int64(st, 2, kind == 0 ? i * 7 : i);
        }
        step_reset(st);
    }
    sqlite3_finalize(parent);
    sqlite3_finalize(st);
    SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
    return sqlite_close_size(db, "small");
}

static long long sqlite_products(void) {
    sqlite3* db = sqlite_fresh("products",
                               "CREATE TABLE product(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL,"
                               " description TEXT NOT NULL);"
                               "CREATE TABLE product_tag(product INTEGER NOT NULL, pos INTEGER NOT NULL, tag TEXT NOT NULL);"
                               "CREATE INDEX product_tag_product ON product_tag(product, pos)");
    SQ(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    sqlite3_stmt* parent = prepare(db, "INSERT INTO product(id, name, price, description) VALUES (?, ?, ?, ?)");
    sqlite3_stmt* st = prepare(db, "INSERT INTO product_tag VALUES (?, ?, ?)");
    for (int i = 0; i < products; i++) {
        product_t* p = &catalog[i];
        sqlite3_bind_int64(parent, 1, i + 1);
        sqlite3_bind_text(parent, 2, p->name, -1, SQLITE_STATIC);
        sqlite3_bind_double(parent, 3, p->price);
        sqlite3_bind_text(parent, 4, p->description, -1, SQLITE_STATIC);
        step_reset(parent);
        for (int t = 0; t < 2; t++) {
            sqlite3_bind_int64(st, 1, i + 1);
            sqlite3_bind_int64(st, 2, t);
            sqlite3_bind_text(st, 3, p->tags[t], -1, SQLITE_STATIC);
            step_reset(st);
        }
    }
    sqlite3_finalize(parent);
    sqlite3_finalize(st);
    SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
    return sqlite_close_size(db, "products");
}

static const char* THING_DDL =
    "CREATE TABLE thing(id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
    "CREATE TABLE thing_num(owner INTEGER NOT NULL, pos INTEGER NOT NULL, value INTEGER NOT NULL);"
    "CREATE INDEX thing_num_owner ON thing_num(owner, pos)";

static void sqlite_things(int with_list, double out[2]) {
    sqlite3* db = sqlite_fresh(with_list ? "things" : "plain", THING_DDL);
    char name[24];
    double t = now();
    SQ(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    sqlite3_stmt* parent = prepare(db, "INSERT INTO thing(id, name) VALUES (?, ?)");
    sqlite3_stmt* st = prepare(db, "INSERT INTO thing_num VALUES (?, ?, ?)");
    for (int i = 0; i < things; i++) {
        snprintf(name, sizeof name, "thing%d", i);
        sqlite3_bind_int64(parent, 1, i);
        sqlite3_bind_text(parent, 2, name, -1, SQLITE_STATIC);
        step_reset(parent);
        if (with_list) {
            for (int j = 0; j < 2; j++) {
                sqlite3_bind_int64(st, 1, i);
                sqlite3_bind_int64(st, 2, j);
                sqlite3_bind_int64(st, 3, j ? -i : i);
                step_reset(st);
            }
        }
    }
    sqlite3_finalize(parent);
    sqlite3_finalize(st);
    SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
    out[0] = (now() - t) / things;
    out[1] = 0;
    if (with_list) {
        st = prepare(db, "SELECT value FROM thing_num WHERE owner = ? ORDER BY pos");
        SQ(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
        t = now();
        for (int i = 0; i < things; i++) {
            sqlite3_bind_int64(st, 1, i);
            while (sqlite3_step(st) == SQLITE_ROW) checksum += (double)sqlite3_column_int64(st, 0);
            sqlite3_reset(st);
        }
        out[1] = (now() - t) / things;
        SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

static void sqlite_big(double out[2]) {
    sqlite3* db = sqlite_fresh("big",
                               "CREATE TABLE big(id INTEGER PRIMARY KEY);"
                               "CREATE TABLE big_num(owner INTEGER NOT NULL, pos INTEGER NOT NULL, value INTEGER NOT NULL);"
                               "CREATE INDEX big_num_owner ON big_num(owner, pos)");
    double t = now();
    SQ(sqlite3_exec(db, "BEGIN; INSERT INTO big(id) VALUES (1)", NULL, NULL, NULL));
    sqlite3_stmt* st = prepare(db, "INSERT INTO big_num VALUES (1, ?, ?)");
    for (int i = 0; i < big; i++) {
        sqlite3_bind_int64(st, 1, i);
        sqlite3_bind_int64(st, 2, i);
        step_reset(st);
    }
    sqlite3_finalize(st);
    SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
    out[0] = (now() - t) / big;
    st = prepare(db, "SELECT value FROM big_num WHERE owner = 1 ORDER BY pos");
    SQ(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    t = now();
    for (int r = 0; r < BIG_ROUNDS; r++) {
        while (sqlite3_step(st) == SQLITE_ROW) checksum += (double)sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
    }
    out[1] = (now() - t) / ((double)big * BIG_ROUNDS);
    SQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* ---- The table ----------------------------------------------------------------------------- */

static void time_text(double ns, char* out, size_t size) {
    if (ns <= 0) snprintf(out, size, "-");
    else if (ns >= 1000) snprintf(out, size, "%.2f µs", ns / 1000);
    else snprintf(out, size, "%.0f ns", ns);
}

static void time_row(const char* label, double c, double q, const char* goal) {
    char a[32], b[32];
    time_text(c, a, sizeof a);
    time_text(q, b, sizeof b);
    if (c > 0 && q > 0) printf("| %s | %s | %s | %.2fx | %s |\n", label, a, b, c / q, goal);
    else printf("| %s | %s | %s | | %s |\n", label, a, b, goal);
    fflush(stdout);
}

/* Two passes of each engine, Cove, SQLite, SQLite, Cove; the means in c[] and q[]. */
static void passes(void (*cove)(double*), void (*sqlite)(double*), double c[2], double q[2]) {
    double r[2];
    c[0] = c[1] = q[0] = q[1] = 0;
    for (int pass = 0; pass < 4; pass++) {
        int is_cove = pass == 0 || pass == 3;
        if (is_cove ? !run_cove : !run_sqlite) continue;
        (is_cove ? cove : sqlite)(r);
        double* into = is_cove ? c : q;
        into[0] += r[0] / 2;
        into[1] += r[1] / 2;
    }
}

static void cove_with(double* r) { cove_things(1, r); }
static void cove_inserted(double* r) { cove_things(2, r); }
static void cove_without(double* r) { cove_things(0, r); }
static void sqlite_with(double* r) { sqlite_things(1, r); }
static void sqlite_without(double* r) { sqlite_things(0, r); }

int main(int argc, char** argv) {
    const char* e;
    if ((e = getenv("BENCH_SMALL_OBJECTS"))) small_objects = atoi(e);
    if ((e = getenv("BENCH_PRODUCTS"))) products = atoi(e);
    if ((e = getenv("BENCH_THINGS"))) things = atoi(e);
    if ((e = getenv("BENCH_BIG_LIST"))) big = atoi(e);
    if (argc > 1) {
        run_cove = strcmp(argv[1], "sqlite") != 0;
        run_sqlite = strcmp(argv[1], "cove") != 0;
    }
    const char* tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/cove-collections-bench-XXXXXX", tmp);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    long long json = make_products();

    uint32_t format = 0;
    {
        cove_realm_t* realm = cove_fresh("format");
        OK(cove_file_space(realm, &format, NULL, NULL));
        cove_done(realm);
    }
    printf("| Small collections (file format %u) | Cove | SQLite | Cove/SQLite | goal |\n|---|--:|--:|--:|---|\n",
           format);
    static const char* kinds[] = {"list of int", "set of string", "map of int"};
    for (int kind = 0; kind < 3; kind++) {
        uint64_t used = 0;
        long long c = run_cove ? cove_small(kind, &used) : 0, q = run_sqlite ? sqlite_small(kind) : 0;
        char label[128], goal[64];
        snprintf(label, sizeof label, "(a) file of %d objects with a one-element %s (KiB; in use)", small_objects,
                 kinds[kind]);
        snprintf(goal, sizeof goal, "<= 1 MB: %s", c <= 1000000 ? "met" : "missed");
        printf("| %s | %.0f (%.0f) | %.0f | %.2fx | %s |\n", label, c / 1024.0, used / 1024.0, q / 1024.0,
               q ? (double)c / (double)q : 0, goal);
        fflush(stdout);
    }
    {
        uint64_t used = 0;
        long long c = run_cove ? cove_products(&used) : 0, q = run_sqlite ? sqlite_products() : 0;
        char label[160], goal[64];
        snprintf(label, sizeof label,
                 "(b) file of %d products with two string tags, %.2f MB as JSON lines (KiB; in use)", products,
                 json / 1e6);
        snprintf(goal, sizeof goal, "<= 1.5x SQLite: %s", q && (double)c <= 1.5 * (double)q ? "met" : "missed");
        printf("| %s | %.0f (%.0f) | %.0f | %.2fx | %s |\n", label, c / 1024.0, used / 1024.0, q / 1024.0,
               q ? (double)c / (double)q : 0, goal);
        fflush(stdout);
    }
    double cw[2], qw[2], ci[2], qi[2], cn[2], qn[2], cb[2], qb[2];
    passes(cove_with, sqlite_with, cw, qw);
    passes(cove_inserted, sqlite_with, ci, qi);
    passes(cove_without, sqlite_without, cn, qn);
    char label[160], goal[96];
    snprintf(label, sizeof label, "(c) create %d objects with a two-element list, one write (per object)", things);
    time_row(label, cw[0], qw[0], "");
    snprintf(label, sizeof label, "(c) the same, the list filled by cove_list_insert (per object)");
    time_row(label, ci[0], qi[0], "");
    snprintf(label, sizeof label, "(c) create %d objects without the list, one write (per object)", things);
    time_row(label, cn[0], qn[0], "");
    if (run_cove) {
        snprintf(goal, sizeof goal, "<= 1.5x without: %s", cw[0] <= 1.5 * cn[0] ? "met" : "missed");
        printf("| (c) with the list / without | %.2fx | %.2fx | | %s |\n", cw[0] / cn[0],
               run_sqlite ? qw[0] / qn[0] : 0, goal);
    }
    snprintf(label, sizeof label, "(d) read a two-element list of %d (per list)", things);
    time_row(label, cw[1], qw[1], "");
    passes(cove_big, sqlite_big, cb, qb);
    snprintf(label, sizeof label, "(e) append %d ints to one list, one write (per element)", big);
    time_row(label, cb[0], qb[0], "as before");
    snprintf(label, sizeof label, "(e) read the %d by index (per element)", big);
    time_row(label, cb[1], qb[1], "as before");

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "collections-bench: could not remove %s\n", dir);
    fprintf(stderr, "(checksum %g)\n", checksum);
    return 0;
}
