/* Cove Sync end to end with real clients: files opened through libcove's C API with a sync
 * configuration, talking to one cove-sync-server on loopback (benchmarks/sync/run-client.sh
 * starts it, with a PostgreSQL of its own, and runs this).
 *
 *   bootstrap  one file writes BENCH_OBJECTS small objects (default 100000; BenchItem {id int
 *              primary key, name string, n int}) in one write and waits for its upload; then a
 *              new, empty file opens and waits for its download: the time from its open to
 *              having every object, and the objects applied per second; then another new file
 *              subscribes to every BenchItem and waits for them (the subscription's bootstrap,
 *              whole object states from the server's tables).
 *   latency    BENCH_CLIENTS files (default 200, in BENCH_PROCESSES processes, default 4)
 *              connected and long-polling; another file
 *              commits one object every BENCH_INTERVAL_MS (default 50) for BENCH_ROUNDS rounds
 *              (default 40): the time from the writer's commit to each client holding the
 *              object (one thread looks at every client in turn, each millisecond), p50 and
 *              p99 over every client and round.
 *
 * The server's URL and a token come from SYNC_URL and SYNC_TOKEN; `client-bench latency` or
 * `client-bench bootstrap` runs one of the two (every file downloads everything the server
 * holds, so run.sh gives each a fresh server). */
#define _DEFAULT_SOURCE
#include <cove.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char* SCHEMA =
    "{\"BenchItem\": {\"primaryKey\": \"id\", \"properties\": {\"id\": \"int\", \"name\": \"string\", \"n\": \"int\"}}}";

static const char* url;
static const char* token;
static char dir[256];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char* what) {
    fprintf(stderr, "client-bench: %s: %s\n", what, cove_last_error_message());
    exit(1);
}
#define OK(call) do { if ((call) != COVE_OK) die(#call); } while (0)

static int env_int(const char* name, int fallback) {
    const char* v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static cove_realm_t* open_synced(const char* name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cove_config_t* config;
    cove_sync_config_t* sync;
    cove_realm_t* realm;
    OK(cove_config_new(path, &config));
    OK(cove_config_set_schema_json(config, SCHEMA, 1));
    OK(cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC));
    OK(cove_sync_config_new(url, token, &sync));
    OK(cove_sync_config_set_long_poll(sync, 25));
    OK(cove_config_set_sync(config, sync));
    OK(cove_open(config, &realm));
    cove_release(sync);
    cove_release(config);
    return realm;
}

static size_t count_items(cove_realm_t* realm) {
    cove_results_t* results;
    size_t n = 0;
    OK(cove_query(realm, "BenchItem", "TRUEPREDICATE", NULL, 0, &results));
    OK(cove_results_count(results, &n));
    cove_release(results);
    return n;
}

static void bootstrap(void) {
    int n = env_int("BENCH_OBJECTS", 100000);
    cove_realm_t* writer = open_synced("writer.cove");
    const char* names[] = {"id", "name", "n"};
    cove_value_t* values = calloc((size_t)n * 3, sizeof *values);
    char* text = malloc((size_t)n * 16);
    for (int i = 0; i < n; i++) {
        char* s = text + (size_t)i * 16;
        int len = snprintf(s, 16, "item %d", i);
        values[i * 3].type = COVE_TYPE_INT;
        values[i * 3].u.integer = i;
        values[i * 3 + 1].type = COVE_TYPE_STRING;
        values[i * 3 + 1].u.string.data = s;
        values[i * 3 + 1].u.string.size = (size_t)len;
        values[i * 3 + 2].type = COVE_TYPE_INT;
        values[i * 3 + 2].u.integer = i % 1000;
    }
    double t0 = now();
    size_t created = 0;
    OK(cove_begin_write(writer));
    OK(cove_object_create_many(writer, "BenchItem", names, 3, values, (size_t)n, false, &created));
    OK(cove_commit(writer));
    double t1 = now();
    OK(cove_sync_wait_for_upload(writer, 600));
    double t2 = now();
    cove_realm_t* reader = open_synced("reader.cove");
    OK(cove_sync_wait_for_download(reader, 600));
    OK(cove_refresh(reader, NULL));
    double t3 = now();
    size_t got = count_items(reader);
    if (got != (size_t)n) {
        fprintf(stderr, "client-bench: the new file holds %zu objects, not %d\n", got, n);
        exit(1);
    }
    cove_realm_t* subscriber = open_synced("subscriber.cove");
    cove_results_t* all;
    OK(cove_query(subscriber, "BenchItem", "TRUEPREDICATE", NULL, 0, &all));
    OK(cove_results_subscribe_blocking(all, "all", COVE_WAIT_FOR_SYNC_ALWAYS, 600));
    OK(cove_refresh(subscriber, NULL));
    double t4 = now();
    size_t subscribed = 0;
    OK(cove_results_count(all, &subscribed));
    if (subscribed != (size_t)n) {
        fprintf(stderr, "client-bench: the subscribed file holds %zu objects, not %d\n", subscribed, n);
        exit(1);
    }
    cove_release(all);
    printf("| %d objects written in one commit (changesets queued with it) | %.2f s |\n", n, t1 - t0);
    printf("| ... uploaded (wait for upload) | %.2f s (%.0f objects/s) |\n", t2 - t1, n / (t2 - t1));
    printf("| bootstrap of a new, empty file: open to every object | %.2f s (%.0f objects/s) |\n", t3 - t2, n / (t3 - t2));
    printf("| a new file subscribing to every object: open to every object | %.2f s (%.0f objects/s) |\n", t4 - t3, n / (t4 - t3));
    OK(cove_close(subscriber));
    cove_release(subscriber);
    OK(cove_close(reader));
    OK(cove_close(writer));
    cove_release(reader);
    cove_release(writer);
    free(values);
    free(text);
}

static int rounds, interval_ms;
/* The ids of this run's writes: apart from any earlier run's on the same server. */
static int64_t base_id;
/* Shared with the client processes (an anonymous shared mapping made before they fork). */
static double* written_at;
static double* seen;
static int* ready;

static void write_rounds(void) {
    cove_realm_t* writer = open_synced("latency-writer.cove");
    const char* names[] = {"id", "name", "n"};
    for (int r = 0; r < rounds; r++) {
        cove_value_t v[3];
        v[0].type = COVE_TYPE_INT;
        v[0].u.integer = base_id + r;
        v[1].type = COVE_TYPE_STRING;
        v[1].u.string.data = "latency";
        v[1].u.string.size = 7;
        v[2].type = COVE_TYPE_INT;
        v[2].u.integer = r;
        cove_object_t* o;
        OK(cove_begin_write(writer));
        OK(cove_object_create_with_values(writer, "BenchItem", names, 3, v, &o));
        cove_release(o);
        double at = now();
        __atomic_store(&written_at[r], &at, __ATOMIC_RELEASE);
        OK(cove_commit(writer));
        usleep((useconds_t)interval_ms * 1000);
    }
    OK(cove_sync_wait_for_upload(writer, 60));
    OK(cove_close(writer));
    cove_release(writer);
}

/* One process's clients, `first` to `first + count - 1`: opened, caught up, then watched until
 * each holds every round's object. */
static int watch_clients(int first, int count) {
    cove_realm_t** realms = calloc((size_t)count, sizeof *realms);
    int* next = calloc((size_t)count, sizeof *next);
    for (int i = 0; i < count; i++) {
        char name[64];
        snprintf(name, sizeof name, "client-%d.cove", first + i);
        realms[i] = open_synced(name);
    }
    for (int i = 0; i < count; i++) OK(cove_sync_wait_for_download(realms[i], 120));
    __atomic_add_fetch(ready, 1, __ATOMIC_ACQ_REL);
    int done = 0;
    double deadline = now() + 90 + rounds * interval_ms / 1000.0;
    while (done < count && now() < deadline) {
        usleep(1000);
        for (int i = 0; i < count; i++) {
            if (next[i] == rounds) continue;
            bool advanced = false;
            OK(cove_refresh(realms[i], &advanced));
            if (!advanced) continue;
            double t = now();
            while (next[i] < rounds) {
                cove_value_t pk;
                pk.type = COVE_TYPE_INT;
                pk.u.integer = base_id + next[i];
                cove_object_t* o = NULL;
                OK(cove_object_find(realms[i], "BenchItem", &pk, &o));
                if (!o) break;
                cove_release(o);
                double at;
                __atomic_load(&written_at[next[i]], &at, __ATOMIC_ACQUIRE);
                seen[(size_t)(first + i) * (size_t)rounds + (size_t)next[i]] = t - at;
                if (++next[i] == rounds) done++;
            }
        }
    }
    for (int i = 0; i < count; i++) {
        OK(cove_close(realms[i]));
        cove_release(realms[i]);
    }
    free(realms);
    free(next);
    return done == count ? 0 : 1;
}

static int compare(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static void latency(void) {
    int clients = env_int("BENCH_CLIENTS", 200);
    int processes = env_int("BENCH_PROCESSES", 4);
    rounds = env_int("BENCH_ROUNDS", 40);
    interval_ms = env_int("BENCH_INTERVAL_MS", 50);
    if (processes < 1 || processes > clients) processes = 1;
    base_id = 1000000000 + (int64_t)(getpid() % 100000) * 100000 + (int64_t)(now() * 1000) % 50000;
    size_t total = (size_t)clients * (size_t)rounds;
    size_t bytes = (size_t)rounds * sizeof(double) + total * sizeof(double) + sizeof(int);
    char* shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) { perror("mmap"); exit(1); }
    written_at = (double*)shared;
    seen = written_at + rounds;
    ready = (int*)(seen + total);
    /* The clients in several processes, as apps would be (and a process's threads are few). */
    pid_t* children = calloc((size_t)processes, sizeof *children);
    for (int p = 0; p < processes; p++) {
        int first = clients * p / processes, last = clients * (p + 1) / processes;
        children[p] = fork();
        if (children[p] == 0) _exit(watch_clients(first, last - first));
    }
    double wait_until = now() + 300;
    while (__atomic_load_n(ready, __ATOMIC_ACQUIRE) < processes && now() < wait_until) usleep(10000);
    write_rounds();
    int failed = 0;
    for (int p = 0; p < processes; p++) {
        int status = 0;
        waitpid(children[p], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
    }
    if (failed) {
        fprintf(stderr, "client-bench: in %d of %d client processes not every client saw every write\n", failed, processes);
        exit(1);
    }
    qsort(seen, total, sizeof *seen, compare);
    printf("| a write seen by %d connected clients in %d processes (%d writes, %d ms apart): p50 / p99 / max | %.1f / %.1f / %.1f ms |\n",
           clients, processes, rounds, interval_ms, seen[total / 2] * 1e3, seen[total * 99 / 100] * 1e3, seen[total - 1] * 1e3);
    munmap(shared, bytes);
    free(children);
}

int main(int argc, char** argv) {
    url = getenv("SYNC_URL");
    token = getenv("SYNC_TOKEN");
    if (!url || !token) {
        fprintf(stderr, "client-bench: SYNC_URL and SYNC_TOKEN name the server and a token\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "/tmp/cove-sync-client-bench-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const char* what = argc > 1 ? argv[1] : "all";
    if (env_int("BENCH_HEADER", 1)) printf("| Cove Sync, real clients | |\n|---|--:|\n");
    if (!strcmp(what, "all") || !strcmp(what, "latency")) latency();
    if (!strcmp(what, "all") || !strcmp(what, "bootstrap")) bootstrap();
    char command[300];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    return system(command) == 0 ? 0 : 1;
}
