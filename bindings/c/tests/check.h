/* A few macros for the C tests: each CHECK counts, prints what failed with its line, and the
 * program ends with "N passed, N failed" and a non-zero status when anything failed. */
#ifndef COVE_TEST_CHECK_H
#define COVE_TEST_CHECK_H
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

static int check_summary(const char* name) {
    printf("%s: %d passed, %d failed\n", name, checks_passed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}
#endif
