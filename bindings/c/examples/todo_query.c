/* Example: a schema with objects and a query. Opens a file with a small to-do schema, adds five
 * tasks in one write, then asks for the open tasks of priority 2 or more, most urgent first, and
 * checks what comes back. Exits 0 only when every step worked and the answer is the expected one.
 * Build: cc todo_query.c $(pkg-config --cflags --libs cove) */
#include <cove.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ends the program with the status name and the library's message when a call fails. */
#define TRY(call)                                                                       \
    do {                                                                                \
        cove_status_t status_ = (call);                                                 \
        if (status_ != COVE_OK) {                                                       \
            fprintf(stderr, "%s failed: %s: %s\n", #call, cove_status_name(status_),    \
                    cove_last_error_message());                                         \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* The schema notation (docs/schema.md): a class keyed by an int, an indexed bool, a set of tags. */
static const char* SCHEMA =
    "{\"Task\": {\"primaryKey\": \"id\","
    "            \"properties\": {\"id\": \"int\", \"title\": \"string\", \"done\": \"bool\","
    "                           \"priority\": \"int\", \"tags\": \"string<>\"},"
    "            \"indexed\": [\"done\"]}}";

static cove_value_t int_value(int64_t i) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_INT;
    v.u.integer = i;
    return v;
}

static cove_value_t bool_value(bool b) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_BOOL;
    v.u.boolean = b;
    return v;
}

static cove_value_t string_value(const char* s) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_STRING;
    v.u.string.data = s;
    v.u.string.size = strlen(s);
    return v;
}

int main(void) {
    const char* path = "todo-query.cove";
    remove(path);
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    TRY(cove_config_new(path, &config));
    TRY(cove_config_set_schema_json(config, SCHEMA, 1));
    TRY(cove_open(config, &realm));
    cove_release(config);

    /* Five tasks in one write transaction; the commit makes them durable. */
    static const struct { const char* title; bool done; int priority; const char* tag; } tasks[] = {
        {"buy milk", false, 1, "home"},
        {"file taxes", false, 3, "admin"},
        {"fix the bike", true, 2, "home"},
        {"call the bank", false, 2, "admin"},
        {"water plants", false, 2, "home"},
    };
    const char* names[] = {"id", "title", "done", "priority"};
    TRY(cove_begin_write(realm));
    for (int i = 0; i < 5; i++) {
        cove_value_t values[4] = {int_value(i + 1), string_value(tasks[i].title),
                                  bool_value(tasks[i].done), int_value(tasks[i].priority)};
        cove_object_t* task = NULL;
        TRY(cove_object_create_with_values(realm, "Task", names, 4, values, &task));
        cove_set_t* tags = NULL;
        TRY(cove_object_get_set(task, "tags", &tags));
        cove_value_t tag = string_value(tasks[i].tag);
        TRY(cove_set_insert(tags, &tag, NULL));
        cove_release(tags);
        cove_release(task);
    }
    TRY(cove_commit(realm));

    /* Open tasks of priority $0 or more, most urgent first, ties by title. */
    cove_value_t args[1] = {int_value(2)};
    cove_results_t* urgent = NULL;
    TRY(cove_query(realm, "Task", "done == false AND priority >= $0 SORT(priority DESC, title ASC)",
                   args, 1, &urgent));
    size_t count = 0;
    TRY(cove_results_count(urgent, &count));
    printf("%zu open tasks of priority 2 or more:\n", count);
    static const char* expected[] = {"file taxes", "call the bank", "water plants"};
    int ok = count == 3;
    for (size_t i = 0; i < count && i < 3; i++) {
        cove_object_t* task = NULL;
        cove_value_t title, priority;
        TRY(cove_results_get_object(urgent, i, &task));
        TRY(cove_object_get(task, "title", &title));
        TRY(cove_object_get(task, "priority", &priority));
        printf("  [%lld] %.*s\n", (long long)priority.u.integer, (int)title.u.string.size, title.u.string.data);
        ok = ok && title.u.string.size == strlen(expected[i])
             && memcmp(title.u.string.data, expected[i], title.u.string.size) == 0;
        cove_release(task);
    }

    /* A second query: a set membership test and an aggregate over its matches. */
    cove_results_t* home = NULL;
    cove_value_t sum;
    TRY(cove_query(realm, "Task", "'home' IN tags", NULL, 0, &home));
    TRY(cove_results_count(home, &count));
    TRY(cove_results_sum(home, "priority", &sum));
    printf("%zu tasks tagged home, priorities adding up to %lld\n", count, (long long)sum.u.integer);
    ok = ok && count == 3 && sum.type == COVE_TYPE_INT && sum.u.integer == 5;

    cove_release(home);
    cove_release(urgent);
    cove_release(realm);
    remove(path);
    remove("todo-query.cove.lock");
    if (!ok) {
        fprintf(stderr, "todo_query: the results are not the expected ones\n");
        return 1;
    }
    return 0;
}
