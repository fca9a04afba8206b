/* Threads and a live realm: a call from another thread while the realm's thread has it in a
 * write fails with COVE_ERR_WRONG_THREAD and changes nothing; an idle realm moves to the thread
 * that calls; frozen handles are read from any thread; another thread may close the realm. Runs
 * in an empty working directory. */
#include <cove.h>
#include <pthread.h>
#include <stdio.h>

#include "check.h"

static const char* SCHEMA = "{\"Dog\": {\"properties\": {\"name\": \"string\", \"age\": \"int\"}}}";

typedef struct {
    cove_realm_t* realm;
    cove_object_t* dog;
    cove_results_t* frozen;
    cove_status_t query, begin, set, get;
    size_t frozen_count;
    char message[256];
} job_t;

/* What another thread gets: the realm's query, a write, an object's set and get, and the
 * count of a frozen results. */
static void* other_thread(void* arg) {
    job_t* job = arg;
    cove_results_t* r = NULL;
    cove_value_t v = int_value(9);
    job->query = cove_query(job->realm, "Dog", "TRUEPREDICATE", NULL, 0, &r);
    snprintf(job->message, sizeof job->message, "%s", cove_last_error_message());
    if (r) cove_release(r);
    job->begin = cove_begin_write(job->realm);
    if (job->begin == COVE_OK) CHECK_OK(cove_cancel_write(job->realm));
    job->set = cove_object_set(job->dog, "age", &v);
    job->get = cove_object_get(job->dog, "age", &v);
    if (job->frozen) CHECK_OK(cove_results_count(job->frozen, &job->frozen_count));
    return NULL;
}

static void run(job_t* job) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, job) == 0);
    CHECK(pthread_join(t, NULL) == 0);
}

static void* close_realm(void* arg) {
    CHECK_OK(cove_close((cove_realm_t*)arg));
    return NULL;
}

int main(void) {
    cove_realm_t* realm = open_schema("threads.cove", SCHEMA, 1);
    cove_object_t* dog = NULL;
    cove_value_t v = string_value("Rex");
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_set(dog, "name", &v));
    CHECK_OK(cove_commit(realm));
    cove_results_t* all = NULL;
    cove_results_t* frozen = NULL;
    CHECK_OK(cove_query(realm, "Dog", "TRUEPREDICATE", NULL, 0, &all));
    CHECK_OK(cove_results_freeze(all, &frozen));

    /* While this thread writes, the other thread is refused, and nothing it tried happened. */
    CHECK_OK(cove_begin_write(realm));
    v = int_value(4);
    CHECK_OK(cove_object_set(dog, "age", &v));
    job_t job = {realm, dog, frozen, 0, 0, 0, 0, 0, ""};
    run(&job);
    CHECK(job.query == COVE_ERR_WRONG_THREAD && job.begin == COVE_ERR_WRONG_THREAD);
    CHECK(job.set == COVE_ERR_WRONG_THREAD && job.get == COVE_ERR_WRONG_THREAD);
    CHECK(strstr(job.message, "cove_query") && strstr(job.message, "write transaction on another thread"));
    CHECK(job.frozen_count == 1);
    CHECK_OK(cove_object_get(dog, "age", &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 4);
    CHECK_OK(cove_commit(realm));

    /* Idle: the realm moves to the other thread, which writes, then back here. */
    job_t idle = {realm, dog, NULL, 0, 0, 0, 0, 0, ""};
    run(&idle);
    CHECK(idle.query == COVE_OK && idle.begin == COVE_OK && idle.get == COVE_OK);
    CHECK(idle.set == COVE_ERR_NOT_IN_WRITE);
    CHECK_OK(cove_object_get(dog, "age", &v));
    CHECK(v.type == COVE_TYPE_INT && v.u.integer == 4);

    /* Another thread may close it. */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, close_realm, realm) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_FAILS(cove_object_get(dog, "age", &v), COVE_ERR_CLOSED, "closed");
    cove_release(frozen);
    cove_release(all);
    cove_release(dog);
    cove_release(realm);
    return check_summary("test_threads");
}
