/* Example: live results and the notification descriptor. The program forks a child that will
 * commit to the same file; the parent observes a query, waits for its realm's notification
 * descriptor with poll(), and lets cove_deliver() call the callback with what the child's commit
 * changed. Exits 0 only when the callback saw the initial state and then exactly one insertion.
 * Build: cc live_results_poll.c $(pkg-config --cflags --libs cove) */
#define _POSIX_C_SOURCE 200809L
#include <cove.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRY(call)                                                                       \
    do {                                                                                \
        cove_status_t status_ = (call);                                                 \
        if (status_ != COVE_OK) {                                                       \
            fprintf(stderr, "[%d] %s failed: %s: %s\n", (int)getpid(), #call,           \
                    cove_status_name(status_), cove_last_error_message());              \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static const char* PATH = "live-results.cove";
static const char* SCHEMA =
    "{\"Task\": {\"properties\": {\"title\": \"string\", \"done\": \"bool\"}}}";

static cove_realm_t* open_realm(void) {
    cove_config_t* config = NULL;
    cove_realm_t* realm = NULL;
    TRY(cove_config_new(PATH, &config));
    TRY(cove_config_set_schema_json(config, SCHEMA, 1));
    TRY(cove_open(config, &realm));
    cove_release(config);
    return realm;
}

static void add_task(cove_realm_t* realm, const char* title) {
    cove_value_t v;
    memset(&v, 0, sizeof v);
    v.type = COVE_TYPE_STRING;
    v.u.string.data = title;
    v.u.string.size = strlen(title);
    const char* names[] = {"title"};
    cove_object_t* task = NULL;
    TRY(cove_begin_write(realm));
    TRY(cove_object_create_with_values(realm, "Task", names, 1, &v, &task));
    TRY(cove_commit(realm));
    cove_release(task);
}

/* What the callback saw, for the checks at the end. */
struct seen {
    int initial_calls;
    int update_calls;
    size_t insertions;
    size_t last_inserted_index;
};

static void on_change(void* userdata, const cove_collection_changes_t* changes) {
    struct seen* seen = userdata;
    if (cove_changes_is_initial(changes)) {
        seen->initial_calls++;
        printf("parent: initial state delivered\n");
        return;
    }
    const size_t* insertions = NULL;
    const size_t* deletions = NULL;
    size_t n_insertions = cove_changes_insertions(changes, &insertions);
    size_t n_deletions = cove_changes_deletions(changes, &deletions);
    seen->update_calls++;
    seen->insertions += n_insertions;
    if (n_insertions > 0) seen->last_inserted_index = insertions[n_insertions - 1];
    printf("parent: change delivered: %zu insertion(s), %zu deletion(s)\n", n_insertions, n_deletions);
}

/* The child: waits for the parent's go, opens the file itself and commits one open task. */
static int child(int go_fd) {
    char byte;
    if (read(go_fd, &byte, 1) != 1) return 1;
    cove_realm_t* realm = open_realm();
    add_task(realm, "written by the child");
    printf("child: committed a task\n");
    fflush(stdout); /* the child ends with _exit(), which flushes nothing */
    cove_release(realm);
    return 0;
}

int main(void) {
    remove(PATH);
    int go[2];
    if (pipe(go) != 0) { perror("pipe"); return 1; }
    /* Fork before any realm exists: a child opens its own realms (an inherited handle would
     * answer COVE_ERR_INVALIDATED). */
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) {
        close(go[1]);
        _exit(child(go[0]));
    }
    close(go[0]);

    cove_realm_t* realm = open_realm();
    add_task(realm, "written by the parent");

    cove_results_t* open_tasks = NULL;
    TRY(cove_query(realm, "Task", "done == false", NULL, 0, &open_tasks));
    struct seen seen = {0, 0, 0, 0};
    cove_token_t* token = NULL;
    TRY(cove_results_observe(open_tasks, NULL, 0, on_change, &seen, NULL, &token));
    int fd = -1;
    TRY(cove_notification_fd(realm, &fd));
    TRY(cove_deliver(realm)); /* the initial call */

    /* Let the child commit, then wait (at most 10 s) for the descriptor to become readable. */
    if (write(go[1], "g", 1) != 1) { perror("write"); return 1; }
    close(go[1]);
    struct pollfd pfd = {fd, POLLIN, 0};
    int ready = poll(&pfd, 1, 10000);
    if (ready != 1) {
        fprintf(stderr, "parent: the notification descriptor did not become readable\n");
        return 1;
    }
    TRY(cove_deliver(realm)); /* advances to the child's version and calls on_change */

    int child_status = 0;
    waitpid(pid, &child_status, 0);
    size_t count = 0;
    TRY(cove_results_count(open_tasks, &count));
    printf("parent: %zu open tasks now\n", count);

    cove_release(token);
    cove_release(open_tasks);
    cove_release(realm);
    remove(PATH);
    remove("live-results.cove.lock");
    int ok = WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0 && seen.initial_calls == 1
             && seen.update_calls == 1 && seen.insertions == 1 && seen.last_inserted_index == 1
             && count == 2;
    if (!ok) {
        fprintf(stderr, "live_results_poll: unexpected notifications (initial %d, updates %d, insertions %zu)\n",
                seen.initial_calls, seen.update_calls, seen.insertions);
        return 1;
    }
    return 0;
}
