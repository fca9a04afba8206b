/* cove_config_set_in_memory_identifier: realms of one identifier share their data, another
 * identifier is another database, and the data is gone once the last of them is released. */
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static const char* SCHEMA = "{\"Note\": {\"properties\": {\"text\": \"string\"}}}";

static cove_realm_t* open_shared(const char* identifier) {
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    CHECK_OK(cove_config_new(NULL, &config));
    CHECK_OK(cove_config_set_in_memory_identifier(config, identifier));
    CHECK_OK(cove_config_set_schema_json(config, SCHEMA, 1));
    CHECK_OK(cove_open(config, &realm));
    cove_release(config);
    return realm;
}

int main(void) {
    cove_realm_t* a = open_shared("notes");
    cove_realm_t* b = open_shared("notes");
    cove_realm_t* other = open_shared("other notes");
    CHECK_OK(cove_begin_write(a));
    cove_object_t* note = NULL;
    CHECK_OK(cove_object_create(a, "Note", &note));
    cove_release(note);
    CHECK_OK(cove_commit(a));
    CHECK_OK(cove_refresh(b, NULL));
    CHECK(query_count(b, "Note", "TRUEPREDICATE", NULL, 0) == 1);
    CHECK(query_count(other, "Note", "TRUEPREDICATE", NULL, 0) == 0);
    cove_release(a);
    CHECK(query_count(b, "Note", "TRUEPREDICATE", NULL, 0) == 1);
    cove_release(b);
    cove_release(other);
    cove_realm_t* again = open_shared("notes");
    CHECK(query_count(again, "Note", "TRUEPREDICATE", NULL, 0) == 0);
    cove_release(again);

    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new(NULL, &config));
    CHECK_FAILS(cove_config_set_in_memory_identifier(config, ""), COVE_ERR_INVALID_ARGUMENT, "identifier is empty");
    CHECK_OK(cove_config_set_in_memory_identifier(config, NULL));
    cove_release(config);
    CHECK_FAILS(cove_config_set_in_memory_identifier(NULL, "x"), COVE_ERR_INVALID_ARGUMENT, "config");
    return check_summary("test_in_memory");
}
