/* What the C tests share: CHECK macros that count, print what failed with its line, and end the
 * program with "N passed, N failed" and a non-zero status when anything failed; value
 * constructors; a realm opened on a schema. */
#ifndef COVE_TEST_CHECK_H
#define COVE_TEST_CHECK_H
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int checks_passed = 0;
static int checks_failed = 0;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (cond) {                                                                     \
            checks_passed++;                                                            \
        } else {                                                                        \
            checks_failed++;                                                            \
            fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__,     \
                    __LINE__, #cond, cove_last_error_message());                        \
        }                                                                               \
    } while (0)

/* A call that must succeed. */
#define CHECK_OK(call) CHECK((call) == COVE_OK)

/* A call that must fail with `status` and leave a message containing `text`. */
#define CHECK_FAILS(call, status, text)                                                 \
    do {                                                                                \
        cove_status_t got_ = (call);                                                    \
        CHECK(got_ == (status));                                                        \
        if (got_ != (status))                                                           \
            fprintf(stderr, "  got %s, expected %s\n", cove_status_name(got_),          \
                    cove_status_name(status));                                          \
        CHECK(strstr(cove_last_error_message(), (text)) != NULL);                       \
    } while (0)

/* Values and a realm for the tests: constructors of cove_value_t, a string comparison, and a
 * realm opened on a schema without flushes. */
static inline cove_value_t int_value(int64_t i) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_INT;
    v.u.integer = i;
    return v;
}

static inline cove_value_t double_value(double d) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_DOUBLE;
    v.u.dnum = d;
    return v;
}

static inline cove_value_t null_value(void) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_NULL;
    return v;
}

static inline cove_value_t string_value(const char* s) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_STRING;
    v.u.string.data = s;
    v.u.string.size = strlen(s);
    return v;
}

static inline cove_value_t link_to(cove_object_t* object) {
    cove_value_t v = null_value();
    CHECK_OK(cove_object_to_link(object, &v));
    return v;
}

static inline int is_string(const cove_value_t* v, const char* s) {
    return v->type == COVE_TYPE_STRING && v->u.string.size == strlen(s) &&
           memcmp(v->u.string.data, s, v->u.string.size) == 0;
}

/* A realm on `path` (NULL: in memory) with `schema` at `version`, without flushes. */
static inline cove_realm_t* open_schema(const char* path, const char* schema, uint64_t version) {
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    CHECK_OK(cove_config_new(path, &config));
    CHECK_OK(cove_config_set_durability(config, COVE_DURABILITY_NO_SYNC));
    CHECK_OK(cove_config_set_schema_json(config, schema, version));
    CHECK_OK(cove_open(config, &realm));
    cove_release(config);
    return realm;
}

/* Deletes the object of `cls` whose int primary key is `key` (inside a write). */
static inline void delete_by_key(cove_realm_t* realm, const char* cls, int64_t key) {
    cove_value_t pk = {.type = COVE_TYPE_INT};
    pk.u.integer = key;
    cove_object_t* o = NULL;
    CHECK_OK(cove_object_find(realm, cls, &pk, &o));
    CHECK_OK(cove_object_delete(o));
    cove_release(o);
}

/* How many objects of `cls` the query `rql` with `n_args` arguments selects. */
static inline size_t query_count(cove_realm_t* realm, const char* cls, const char* rql, cove_value_t* args, size_t n_args) {
    cove_results_t* r = NULL;
    size_t n = 0;
    CHECK_OK(cove_query(realm, cls, rql, args, n_args, &r));
    CHECK_OK(cove_results_count(r, &n));
    cove_release(r);
    return n;
}

static int check_summary(const char* name) {
    printf("%s: %d passed, %d failed\n", name, checks_passed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}
#endif
