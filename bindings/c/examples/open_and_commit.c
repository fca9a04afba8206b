/* Example: open (or create) a Cove file, commit a write transaction, and print the version.
 * Build: cc open_and_commit.c $(pkg-config --cflags --libs cove) */
#include <cove.h>
#include <stdio.h>

static int fail(const char* what, cove_status_t status) {
    fprintf(stderr, "%s failed: %s: %s\n", what, cove_status_name(status), cove_last_error_message());
    return 1;
}

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "example.cove";
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    cove_status_t status;

    if ((status = cove_config_new(path, &config)) != COVE_OK) return fail("cove_config_new", status);
    status = cove_open(config, &realm);
    cove_release(config);
    if (status != COVE_OK) return fail("cove_open", status);

    if ((status = cove_begin_write(realm)) != COVE_OK) return fail("cove_begin_write", status);
    if ((status = cove_commit(realm)) != COVE_OK) return fail("cove_commit", status);

    uint64_t version = 0;
    if ((status = cove_version(realm, &version)) != COVE_OK) return fail("cove_version", status);
    printf("Cove %s: %s is at version %llu\n", cove_version_string(), path, (unsigned long long)version);
    cove_release(realm);
    return 0;
}
