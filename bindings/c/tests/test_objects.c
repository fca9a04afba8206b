/* Objects through the C API: a schema given at open, create with and without primary keys, get
 * and set of every type, links and backlinks' effect on delete, and every error the header
 * lists for bad input, each with its message. */
#include <cove.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Person\": {\"primaryKey\": \"name\", \"properties\": {\"name\": \"string\", \"age\": \"int\","
    "   \"dog\": \"Dog?\"}},"
    " \"Dog\": {\"properties\": {\"name\": \"string\", \"weight\": \"double?\", \"good\": \"bool\","
    "   \"born\": \"date?\", \"tag\": \"objectId?\", \"id\": \"uuid?\", \"price\": \"decimal128?\","
    "   \"photo\": \"data?\", \"ratio\": \"float\", \"any\": \"mixed\"}}}";

static cove_realm_t* open_realm(const char* path) {
    return open_schema(path, SCHEMA, 1);
}

static void test_schema_errors(void) {
    cove_config_t* config = NULL;
    CHECK_OK(cove_config_new("bad-schema.cove", &config));
    CHECK_FAILS(cove_config_set_schema_json(config, "{\"A\": {\"properties\": {\"x\": \"integer\"}}}", 1),
                COVE_ERR_SCHEMA, "'x'");
    CHECK_FAILS(cove_config_set_schema_json(config, "{\"A\": {\"properties\": {\"b\": \"B\"}}}", 1),
                COVE_ERR_SCHEMA, "'B'");
    CHECK_FAILS(cove_config_set_schema_json(config, "{\"A\": ", 1), COVE_ERR_SCHEMA, "line 1");
    CHECK_FAILS(cove_config_set_schema_json(config, NULL, 1), COVE_ERR_INVALID_ARGUMENT, "json is NULL");
    cove_release(config);
}

static void test_values(void) {
    cove_realm_t* realm = open_realm("values.cove");
    cove_object_t* dog = NULL;
    cove_value_t v, out;

    CHECK_FAILS(cove_object_create(realm, "Dog", &dog), COVE_ERR_NOT_IN_WRITE, "outside a write");
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));

    v = string_value("Rex \xc3\xbc");
    CHECK_OK(cove_object_set(dog, "name", &v));
    CHECK_OK(cove_object_get(dog, "name", &out));
    CHECK(out.type == COVE_TYPE_STRING && out.u.string.size == 6 && memcmp(out.u.string.data, "Rex \xc3\xbc", 6) == 0);

    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_DOUBLE;
    v.u.dnum = 12.5;
    CHECK_OK(cove_object_set(dog, "weight", &v));
    CHECK_OK(cove_object_get(dog, "weight", &out));
    CHECK(out.type == COVE_TYPE_DOUBLE && out.u.dnum == 12.5);
    v.type = COVE_TYPE_NULL;
    CHECK_OK(cove_object_set(dog, "weight", &v));
    CHECK_OK(cove_object_get(dog, "weight", &out));
    CHECK(out.type == COVE_TYPE_NULL);

    v = int_value(2); /* an int into a float property */
    CHECK_OK(cove_object_set(dog, "ratio", &v));
    CHECK_OK(cove_object_get(dog, "ratio", &out));
    CHECK(out.type == COVE_TYPE_FLOAT && out.u.fnum == 2.0f);

    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_TIMESTAMP;
    v.u.timestamp.seconds = -5;
    v.u.timestamp.nanoseconds = -7;
    CHECK_OK(cove_object_set(dog, "born", &v));
    CHECK_OK(cove_object_get(dog, "born", &out));
    CHECK(out.type == COVE_TYPE_TIMESTAMP && out.u.timestamp.seconds == -5 && out.u.timestamp.nanoseconds == -7);
    v.u.timestamp.nanoseconds = 7; /* signs differ */
    CHECK_FAILS(cove_object_set(dog, "born", &v), COVE_ERR_INVALID_ARGUMENT, "nanoseconds");

    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_OBJECT_ID;
    for (int i = 0; i < 12; i++) v.u.object_id[i] = (uint8_t)(i * 17);
    CHECK_OK(cove_object_set(dog, "tag", &v));
    CHECK_OK(cove_object_get(dog, "tag", &out));
    CHECK(out.type == COVE_TYPE_OBJECT_ID && memcmp(out.u.object_id, v.u.object_id, 12) == 0);

    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_UUID;
    for (int i = 0; i < 16; i++) v.u.uuid[i] = (uint8_t)(255 - i);
    CHECK_OK(cove_object_set(dog, "id", &v));
    CHECK_OK(cove_object_get(dog, "id", &out));
    CHECK(out.type == COVE_TYPE_UUID && memcmp(out.u.uuid, v.u.uuid, 16) == 0);

    /* decimal128 1.5 = coefficient 15, exponent -1: high 0x303E000000000000, low 15 */
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_DECIMAL128;
    v.u.decimal128[0] = 15;
    v.u.decimal128[14] = 0x3E;
    v.u.decimal128[15] = 0x30;
    CHECK_OK(cove_object_set(dog, "price", &v));
    CHECK_OK(cove_object_get(dog, "price", &out));
    CHECK(out.type == COVE_TYPE_DECIMAL128 && memcmp(out.u.decimal128, v.u.decimal128, 16) == 0);

    static const uint8_t photo[] = {0, 1, 2, 0, 255};
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_BINARY;
    v.u.binary.data = photo;
    v.u.binary.size = sizeof photo;
    CHECK_OK(cove_object_set(dog, "photo", &v));
    CHECK_OK(cove_object_get(dog, "photo", &out));
    CHECK(out.type == COVE_TYPE_BINARY && out.u.binary.size == 5 && memcmp(out.u.binary.data, photo, 5) == 0);

    v = int_value(42);
    CHECK_OK(cove_object_set(dog, "any", &v));
    CHECK_OK(cove_object_get(dog, "any", &out));
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 42);

    /* bad input */
    v = string_value("x");
    CHECK_FAILS(cove_object_set(dog, "good", &v), COVE_ERR_WRONG_TYPE, "property 'good' of class 'Dog' is bool, got string");
    v.type = COVE_TYPE_NULL;
    CHECK_FAILS(cove_object_set(dog, "name", &v), COVE_ERR_WRONG_TYPE, "cannot be null");
    v = string_value("\xff\xfe");
    CHECK_FAILS(cove_object_set(dog, "name", &v), COVE_ERR_INVALID_ARGUMENT, "not valid UTF-8");
    v.type = 99;
    CHECK_FAILS(cove_object_set(dog, "name", &v), COVE_ERR_INVALID_ARGUMENT, "type tag 99");
    CHECK_FAILS(cove_object_get(dog, "color", &out), COVE_ERR_NOT_FOUND, "class 'Dog' has no property 'color'");
    CHECK_FAILS(cove_object_set(dog, "name", NULL), COVE_ERR_INVALID_ARGUMENT, "value is NULL");
    CHECK_FAILS(cove_object_get(dog, "name", NULL), COVE_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(cove_object_get((cove_object_t*)realm, "name", &out), COVE_ERR_INVALID_ARGUMENT, "expected a cove_object_t");
    CHECK_FAILS(cove_object_create(realm, "Cat", &dog), COVE_ERR_NOT_FOUND, "no class 'Cat'");

    /* by key */
    int64_t key = 0;
    CHECK_OK(cove_property_key(realm, "Dog", "name", &key));
    CHECK_OK(cove_object_get_by_key(dog, key, &out));
    CHECK(out.type == COVE_TYPE_STRING);
    CHECK_FAILS(cove_property_key(realm, "Dog", "nope", &key), COVE_ERR_NOT_FOUND, "no property 'nope'");
    CHECK_FAILS(cove_object_get_by_key(dog, 987654, &out), COVE_ERR_NOT_FOUND, "no property with key 987654");

    CHECK_OK(cove_commit(realm));
    cove_release(dog);

    char* json = NULL;
    CHECK_OK(cove_schema_json(realm, &json));
    CHECK(json != NULL && strstr(json, "\"Dog\"") != NULL && strstr(json, "decimal128?") != NULL);
    cove_free(json);
    char* report = NULL;
    CHECK_OK(cove_verify(realm, &report));
    cove_free(report);
    cove_release(realm);
}

static void test_primary_keys_links_delete(void) {
    cove_realm_t* realm = open_realm("people.cove");
    cove_object_t *ann = NULL, *again = NULL, *dog = NULL, *found = NULL, *linked = NULL;
    cove_value_t pk = string_value("Ann"), v, link, out;
    uint32_t class_key = 0;

    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_with_primary_key(realm, "Person", &pk, &ann));
    CHECK_FAILS(cove_object_create_with_primary_key(realm, "Person", &pk, &again), COVE_ERR_DUPLICATE_KEY, "primary key");
    CHECK_FAILS(cove_object_create(realm, "Person", &again), COVE_ERR_INVALID_ARGUMENT, "primary key 'name'");
    v = int_value(3);
    CHECK_FAILS(cove_object_create_with_primary_key(realm, "Person", &v, &again), COVE_ERR_WRONG_TYPE, "is string, got int");
    CHECK_OK(cove_object_create_or_update(realm, "Person", &pk, &again));
    v = int_value(31);
    CHECK_OK(cove_object_set(again, "age", &v));
    CHECK_OK(cove_object_get(ann, "age", &out));
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 31); /* the same object */
    cove_release(again);

    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    CHECK_OK(cove_object_to_link(dog, &link));
    CHECK_OK(cove_class_key(realm, "Dog", &class_key));
    CHECK(link.type == COVE_TYPE_LINK && link.u.link.class_key == class_key);
    CHECK_OK(cove_object_set(ann, "dog", &link));
    CHECK_OK(cove_object_get_object(ann, "dog", &linked));
    CHECK(linked != NULL);
    cove_release(linked);
    CHECK_FAILS(cove_object_get_object(ann, "age", &linked), COVE_ERR_WRONG_TYPE, "not a link");
    CHECK_OK(cove_object_to_link(ann, &v));
    CHECK_FAILS(cove_object_set(ann, "dog", &v), COVE_ERR_WRONG_TYPE, "links to Dog, got an object of Person");

    CHECK_OK(cove_object_delete(dog));
    bool valid = true;
    CHECK_OK(cove_object_is_valid(dog, &valid));
    CHECK(!valid);
    CHECK_FAILS(cove_object_get(dog, "name", &out), COVE_ERR_INVALIDATED, "was deleted");
    CHECK_OK(cove_object_get(ann, "dog", &out));
    CHECK(out.type == COVE_TYPE_NULL); /* the link was nullified */
    linked = NULL;
    CHECK_FAILS(cove_object_from_link(realm, &link, &linked), COVE_ERR_NOT_FOUND, "no object of class 'Dog'");
    CHECK(linked == NULL);
    CHECK_OK(cove_commit(realm));

    CHECK_OK(cove_object_find(realm, "Person", &pk, &found));
    CHECK(found != NULL);
    cove_release(found);
    pk = string_value("Bob");
    CHECK_OK(cove_object_find(realm, "Person", &pk, &found));
    CHECK(found == NULL);
    CHECK_FAILS(cove_object_find(realm, "Dog", &pk, &found), COVE_ERR_INVALID_ARGUMENT, "has no primary key");
    cove_release(dog);
    cove_release(ann);
    cove_release(realm);

    /* reopen: the data is there */
    realm = open_realm("people.cove");
    pk = string_value("Ann");
    CHECK_OK(cove_object_find(realm, "Person", &pk, &found));
    CHECK(found != NULL);
    CHECK_OK(cove_object_get(found, "age", &out));
    CHECK(out.type == COVE_TYPE_INT && out.u.integer == 31);
    int64_t object_key = 0;
    CHECK_OK(cove_object_to_link(found, &link));
    object_key = link.u.link.object_key;
    cove_object_t* by_key = NULL;
    CHECK_OK(cove_object_get_by_object_key(realm, "Person", object_key, &by_key));
    CHECK(by_key != NULL);
    cove_release(by_key);
    /* release the realm before its object: children keep it alive */
    cove_release(realm);
    CHECK_OK(cove_object_get(found, "age", &out));
    cove_release(found);
}

/* Freezing an object keeps its version; thawing finds it in a live realm, or NULL once deleted. */
static void test_freeze_and_thaw(void) {
    cove_realm_t* realm = open_realm("freeze.cove");
    cove_object_t* ann = NULL;
    cove_object_t* frozen = NULL;
    cove_object_t* again = NULL;
    cove_object_t* thawed = NULL;
    cove_value_t pk = string_value("Ann"), age = int_value(30), got = null_value();
    bool is_frozen = false;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create_with_primary_key(realm, "Person", &pk, &ann));
    CHECK_OK(cove_object_set(ann, "age", &age));
    CHECK_FAILS(cove_object_freeze(ann, &frozen), COVE_ERR_IN_WRITE, "inside a write");
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_freeze(ann, &frozen));
    CHECK_OK(cove_is_frozen(frozen, &is_frozen));
    CHECK(is_frozen);
    CHECK_OK(cove_object_freeze(frozen, &again));
    CHECK(again == frozen);
    cove_release(again);
    age = int_value(31);
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_set(ann, "age", &age));
    CHECK_OK(cove_commit(realm));
    CHECK_OK(cove_object_get(frozen, "age", &got));
    CHECK(got.type == COVE_TYPE_INT && got.u.integer == 30);
    CHECK_FAILS(cove_object_set(frozen, "age", &age), COVE_ERR_FROZEN, "frozen");
    CHECK_OK(cove_object_thaw(frozen, realm, &thawed));
    CHECK(thawed != NULL);
    CHECK_OK(cove_object_get(thawed, "age", &got));
    CHECK(got.type == COVE_TYPE_INT && got.u.integer == 31);
    cove_release(thawed);
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(ann));
    CHECK_OK(cove_commit(realm));
    thawed = ann;
    CHECK_OK(cove_object_thaw(frozen, realm, &thawed));
    CHECK(thawed == NULL);
    CHECK_FAILS(cove_object_freeze(ann, &again), COVE_ERR_INVALIDATED, "deleted");
    CHECK_FAILS(cove_object_thaw(frozen, NULL, &thawed), COVE_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(cove_object_thaw(NULL, realm, &thawed), COVE_ERR_INVALID_ARGUMENT, "NULL");
    cove_release(frozen);
    cove_release(ann);
    cove_release(realm);
}

int main(void) {
    test_schema_errors();
    test_values();
    test_primary_keys_links_delete();
    test_freeze_and_thaw();
    return check_summary("test_objects");
}
