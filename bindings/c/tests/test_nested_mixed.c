/* Mixed values holding lists and dictionaries: written and read as COVE_TYPE_LIST and
 * COVE_TYPE_MAP values (nested), kept across a reopen, reached by queries, links inside cleared
 * when their target is deleted, and the errors of bad input (a set of mixed, a typed property, a
 * key twice, nesting past the limit), each leaving the stored value as it was. */
#include <cove.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char* SCHEMA =
    "{\"Box\": {\"properties\": {\"label\": \"string\", \"extra\": \"mixed\", \"bag\": \"mixed<>\","
    "   \"many\": \"mixed[]\"}},"
    " \"Dog\": {\"properties\": {\"name\": \"string\"}}}";

static cove_value_t list_of(cove_value_t* items, size_t n) {
    cove_value_t v = null_value();
    v.type = COVE_TYPE_LIST;
    v.u.elements.items = items;
    v.u.elements.count = n;
    return v;
}

static cove_value_t map_of(cove_value_t* keys_and_values, size_t entries) {
    cove_value_t v = list_of(keys_and_values, entries);
    v.type = COVE_TYPE_MAP;
    return v;
}

/* Checks that `v` is {"pets": [<link or null>, "x"], "size": 3} with the link as given. */
static void check_sample(const cove_value_t* v, const cove_value_t* pet) {
    CHECK(v->type == COVE_TYPE_MAP);
    CHECK(v->u.elements.count == 2);
    if (v->type != COVE_TYPE_MAP || v->u.elements.count != 2) return;
    const cove_value_t* e = v->u.elements.items;
    CHECK(is_string(&e[0], "pets"));          /* keys in UTF-8 order */
    CHECK(e[1].type == COVE_TYPE_LIST && e[1].u.elements.count == 2);
    if (e[1].type == COVE_TYPE_LIST && e[1].u.elements.count == 2) {
        const cove_value_t* pets = e[1].u.elements.items;
        CHECK(pets[0].type == pet->type);
        if (pet->type == COVE_TYPE_LINK) CHECK(pets[0].u.link.object_key == pet->u.link.object_key);
        CHECK(is_string(&pets[1], "x"));
    }
    CHECK(is_string(&e[2], "size"));
    CHECK(e[3].type == COVE_TYPE_INT && e[3].u.integer == 3);
}

int main(void) {
    const char* path = "nested.cove";
    remove(path);
    cove_realm_t* realm = open_schema(path, SCHEMA, 1);
    cove_object_t* box = NULL;
    cove_object_t* dog = NULL;
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_create(realm, "Dog", &dog));
    cove_value_t name = string_value("Rex");
    CHECK_OK(cove_object_set(dog, "name", &name));
    cove_value_t rex = link_to(dog);
    CHECK_OK(cove_object_create(realm, "Box", &box));
    cove_value_t label = string_value("b");
    CHECK_OK(cove_object_set(box, "label", &label));

    /* {"size": 3, "pets": [Rex, "x"]}: given in any key order. */
    cove_value_t pets[2] = {rex, string_value("x")};
    cove_value_t entries[4] = {string_value("size"), int_value(3), string_value("pets"), list_of(pets, 2)};
    cove_value_t sample = map_of(entries, 2);
    CHECK_OK(cove_object_set(box, "extra", &sample));
    cove_value_t out = null_value();
    CHECK_OK(cove_object_get(box, "extra", &out));
    check_sample(&out, &rex);

    /* Refused, each leaving the value as it was. */
    cove_value_t twice[4] = {string_value("k"), int_value(1), string_value("k"), int_value(2)};
    cove_value_t repeated = map_of(twice, 2);
    CHECK_FAILS(cove_object_set(box, "extra", &repeated), COVE_ERR_INVALID_ARGUMENT, "twice");
    cove_value_t one[1] = {int_value(1)};
    cove_value_t small = list_of(one, 1);
    CHECK_FAILS(cove_object_set(box, "label", &small), COVE_ERR_WRONG_TYPE, "label");
    cove_set_t* bag = NULL;
    bool inserted = false;
    CHECK_OK(cove_object_get_set(box, "bag", &bag));
    CHECK_FAILS(cove_set_insert(bag, &small, &inserted), COVE_ERR_WRONG_TYPE, "set of mixed");
    cove_release(bag);
    /* chain[i] is i lists, one in another: 100 are stored, 101 are not. */
    cove_value_t chain[102];
    chain[0] = int_value(0);
    for (int i = 1; i < 102; i++) chain[i] = list_of(&chain[i - 1], 1);
    CHECK_FAILS(cove_object_set(box, "extra", &chain[101]), COVE_ERR_INVALID_ARGUMENT, "deeper than 100");
    CHECK_OK(cove_object_set(box, "extra", &chain[100]));
    CHECK_OK(cove_object_set(box, "extra", &sample));
    CHECK_OK(cove_object_get(box, "extra", &out));
    check_sample(&out, &rex);

    /* A list of mixed whose element is a list. */
    cove_list_t* many = NULL;
    CHECK_OK(cove_object_get_list(box, "many", &many));
    CHECK_OK(cove_list_insert(many, 0, &small));
    CHECK_OK(cove_list_get(many, 0, &out));
    CHECK(out.type == COVE_TYPE_LIST && out.u.elements.count == 1 && out.u.elements.items[0].u.integer == 1);
    cove_release(many);
    CHECK_OK(cove_commit(realm));

    /* Read by keys, without a handle: the same nested value. */
    cove_value_t link = link_to(box);
    int64_t extra_key = 0;
    CHECK_OK(cove_property_key(realm, "Box", "extra", &extra_key));
    CHECK_OK(cove_object_get_by_keys(realm, link.u.link.class_key, link.u.link.object_key, extra_key, &out));
    check_sample(&out, &rex);

    /* Queries reach inside. */
    CHECK(query_count(realm, "Box", "extra.size == 3", NULL, 0) == 1);
    CHECK(query_count(realm, "Box", "extra['pets'][1] == 'x'", NULL, 0) == 1);
    CHECK(query_count(realm, "Box", "extra.pets.@count == 2", NULL, 0) == 1);
    CHECK(query_count(realm, "Box", "extra.@type == 'dictionary'", NULL, 0) == 1);
    CHECK(query_count(realm, "Box", "many[0][0] == 1", NULL, 0) == 1);
    CHECK(query_count(realm, "Box", "extra == $0", &sample, 1) == 1);
    CHECK(query_count(realm, "Box", "extra.size == 4", NULL, 0) == 0);

    /* Deleting the dog clears the link inside. */
    CHECK_OK(cove_begin_write(realm));
    CHECK_OK(cove_object_delete(dog));
    CHECK_OK(cove_commit(realm));
    cove_value_t gone = null_value();
    CHECK_OK(cove_object_get(box, "extra", &out));
    check_sample(&out, &gone);
    char* report = NULL;
    CHECK_OK(cove_verify(realm, &report));
    cove_free(report);
    cove_release(dog);
    cove_release(box);
    CHECK_OK(cove_close(realm));
    cove_release(realm);

    /* Kept across a reopen. */
    realm = open_schema(path, SCHEMA, 1);
    cove_results_t* all = NULL;
    CHECK_OK(cove_query(realm, "Box", "TRUEPREDICATE", NULL, 0, &all));
    CHECK_OK(cove_results_get_object(all, 0, &box));
    CHECK_OK(cove_object_get(box, "extra", &out));
    check_sample(&out, &gone);
    cove_release(box);
    cove_release(all);
    CHECK_OK(cove_close(realm));
    cove_release(realm);
    remove(path);
    return check_summary("test_nested_mixed");
}
