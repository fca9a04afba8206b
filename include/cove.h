/*
 * cove.h - the C interface of Cove, an embedded object database with live queries.
 *
 * This header is the manual of the C API. Read the conventions first; every function below
 * documents its parameters, what it returns, the statuses it can fail with, and its threading
 * and lifetime rules.
 *
 * @section conventions Conventions
 *
 * - Every fallible function returns a #cove_status_t: #COVE_OK (0) on success, one of the
 *   COVE_ERR_ codes otherwise. Results come back through trailing `out` parameters, which are
 *   left untouched on failure unless the function says otherwise.
 * - On failure, cove_last_error_message() returns a message that names the problem (the argument,
 *   the path, the page...). The message is per thread and stays valid until the next `cove_` call
 *   on that thread.
 * - Nothing crosses this boundary as a crash: NULL handles, NULL out pointers, handles of the
 *   wrong kind, bad enums and invalid UTF-8 all give a status and a message. A released or
 *   made-up pointer is undefined behaviour, as in every C library.
 * - Handles are opaque and reference counted. Every handle returned through an `out` parameter is
 *   owned by the caller (+1) and is given back with cove_release(). cove_retain() adds a
 *   reference. Both may be called from any thread at any time; cove_release(NULL) does nothing.
 *   Children keep their parents alive, so handles can be released in any order.
 * - No struct or union is passed or returned by value: values go in through `const` pointers and
 *   come out through pointers, so every foreign-function layer can call every function.
 * - Strings passed in are NUL-terminated UTF-8. The library copies what it keeps.
 * - Threads: a live realm, and the live handles made from it, are used by one thread at a time;
 *   they may move between threads while idle. A realm belongs to the thread that used it last:
 *   a call from another thread while that thread has the realm in a write transaction fails
 *   with #COVE_ERR_WRONG_THREAD and changes nothing (otherwise the realm moves to the calling
 *   thread). Two threads using one realm at the same moment outside a write is not allowed and
 *   not checked. Frozen handles may be used by any number of threads at once. cove_close(),
 *   cove_retain() and cove_release() may be called from any thread.
 * - A process that forks must open its realms again in the child.
 * - Closed realms: once cove_close() closed a realm, every function given that realm, or a handle
 *   made from it (object, list, set, map, results, sectioned results, section, projection),
 *   returns #COVE_ERR_CLOSED with a message naming the function, and hands nothing out; this is
 *   checked before anything is read, so no answer comes from before the close. The exceptions
 *   answer by design: cove_close() again (#COVE_OK), cove_object_is_valid() and
 *   cove_results_is_valid() (#COVE_OK, false), cove_token_invalidate() (#COVE_OK), cove_retain()
 *   and cove_release(). The change-set accessors that return a count, bool or string take no
 *   realm: a change object is lent to a callback, and one kept past it reads as empty.
 *
 * Compiles as C99 and as C++. Under `COVE_CDEF` the header skips its system includes, so that
 * `cc -E -P -DCOVE_CDEF cove.h` produces declarations a foreign-function layer can read.
 */
#ifndef COVE_H
#define COVE_H

#ifndef COVE_CDEF
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Versions                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** The version of this header. cove_version_number() tells the version of the library loaded. */
#define COVE_VERSION_MAJOR 0
#define COVE_VERSION_MINOR 1
#define COVE_VERSION_PATCH 0
#define COVE_VERSION_STRING "0.1.0"
/** major * 1000000 + minor * 1000 + patch */
#define COVE_VERSION_NUMBER 1000

/** The library's version as text, e.g. "0.1.0". Static storage; never fails. */
const char* cove_version_string(void);

/** The library's version as major * 1000000 + minor * 1000 + patch. Never fails. */
int32_t cove_version_number(void);

/* ------------------------------------------------------------------------------------------ */
/* Status codes and errors                                                                     */
/* ------------------------------------------------------------------------------------------ */

/** The result of every fallible function. Numbers are never reused. */
typedef int32_t cove_status_t;

enum {
    COVE_OK = 0,
    /** A NULL or wrong-kind handle, a NULL out pointer, a bad enum, invalid UTF-8, an unknown name. */
    COVE_ERR_INVALID_ARGUMENT = 1,
    /** A value of the wrong type for the property or operation. */
    COVE_ERR_WRONG_TYPE = 2,
    /** A named class, property or object does not exist. */
    COVE_ERR_NOT_FOUND = 3,
    /** An index or size outside its bounds. */
    COVE_ERR_OUT_OF_RANGE = 4,
    /** A write was attempted outside a write transaction. */
    COVE_ERR_NOT_IN_WRITE = 5,
    /** cove_begin_write() on a realm that is already in a write transaction. */
    COVE_ERR_ALREADY_IN_WRITE = 6,
    /** The operation is refused inside a write transaction. */
    COVE_ERR_IN_WRITE = 7,
    /** The object or collection was deleted, or the realm was invalidated. */
    COVE_ERR_INVALIDATED = 8,
    /** The handle is frozen: it cannot write, advance or be observed. */
    COVE_ERR_FROZEN = 9,
    /** The realm was opened read-only. */
    COVE_ERR_READ_ONLY = 10,
    /** The realm was closed, or poisoned by an I/O failure (reopen it). */
    COVE_ERR_CLOSED = 11,
    /** The schema is invalid or does not match the file. */
    COVE_ERR_SCHEMA = 12,
    /** The file's schema differs and no migration was given. */
    COVE_ERR_MIGRATION_REQUIRED = 13,
    /** A primary key that already exists. */
    COVE_ERR_DUPLICATE_KEY = 14,
    /** Query text that does not parse; the message gives the position and what was expected. */
    COVE_ERR_QUERY_SYNTAX = 15,
    /** A read, write, flush, extend, open or lock of a file failed. */
    COVE_ERR_IO = 16,
    /** The device is full. */
    COVE_ERR_NO_SPACE = 17,
    /** The file is not a Cove file, or is damaged. */
    COVE_ERR_CORRUPT = 18,
    /** The write lock could not be taken within the configured time. */
    COVE_ERR_LOCKED = 19,
    /** More versions are pinned than max_active_versions allows. */
    COVE_ERR_TOO_MANY_VERSIONS = 20,
    /** A user callback failed. */
    COVE_ERR_CALLBACK = 21,
    /** The file was written by a newer version of Cove. */
    COVE_ERR_FORMAT = 22,
    /** A broken internal invariant; please report it. */
    COVE_ERR_INTERNAL = 23,
    /** A live realm (or a handle made from it) used by a thread while another thread has it in a
     *  write transaction (see "Threads" at the top of this header). */
    COVE_ERR_WRONG_THREAD = 24,
    /** An encrypted file opened without its key or with another one, or a plain file opened
     *  with a key (cove_config_set_encryption_key()). */
    COVE_ERR_DECRYPTION = 25,
    /** Sync: the server refused the session (a token it does not accept, a file bound to
     *  another user), a synced file's wait timed out, or the realm is not synced. */
    COVE_ERR_SYNC = 26
};

/**
 * The message of the most recent failure on this thread, or "" if none.
 * Valid until the next `cove_` call on this thread. Never NULL.
 */
const char* cove_last_error_message(void);

/** The name of a status, e.g. "COVE_ERR_CORRUPT"; "COVE_ERR_UNKNOWN" for other numbers. Static. */
const char* cove_status_name(cove_status_t status);

/* ------------------------------------------------------------------------------------------ */
/* Values                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/** A UTF-8 string that is not necessarily NUL-terminated. */
typedef struct cove_string { const char* data; size_t size; } cove_string_t;
/** A run of bytes. */
typedef struct cove_binary { const uint8_t* data; size_t size; } cove_binary_t;
/** A point in time: seconds and nanoseconds since 1970-01-01 UTC (same sign). */
typedef struct cove_timestamp { int64_t seconds; int32_t nanoseconds; } cove_timestamp_t;
/** A row in sectioned results. */
typedef struct cove_index_path { size_t section; size_t row; } cove_index_path_t;

/** The type tag of a #cove_value_t, passed as int32_t. */
typedef enum {
    COVE_TYPE_NULL = 0,
    COVE_TYPE_INT = 1,
    COVE_TYPE_BOOL = 2,
    COVE_TYPE_FLOAT = 3,
    COVE_TYPE_DOUBLE = 4,
    COVE_TYPE_STRING = 5,
    COVE_TYPE_BINARY = 6,
    COVE_TYPE_TIMESTAMP = 7,
    COVE_TYPE_DECIMAL128 = 8,
    COVE_TYPE_OBJECT_ID = 9,
    COVE_TYPE_UUID = 10,
    COVE_TYPE_LINK = 11,
    /** A list of `u.elements.count` values at `u.elements.items`: the elements of a list or
     *  set property given to cove_object_create_many() and cove_object_create_with_values(),
     *  or a list held by a mixed value (read and written as any value; its elements may be
     *  lists and maps in turn, 100 levels deep at most; a set of mixed values refuses one with
     *  #COVE_ERR_WRONG_TYPE). Elements read out live as strings do (see #cove_value_t). */
    COVE_TYPE_LIST = 12,
    /** As #COVE_TYPE_LIST for the entries of a map property, or a dictionary held by a mixed
     *  value: `u.elements.count` entries as 2 * count values at `u.elements.items`, each key (a
     *  #COVE_TYPE_STRING, no key twice) then its value. Read out, the keys come in ascending
     *  order of their UTF-8 bytes. */
    COVE_TYPE_MAP = 13
} cove_value_type_e;

/**
 * A tagged value. decimal128 is IEEE 754-2008 BID, little-endian (as BSON); object_id is 12 bytes
 * as BSON orders them; uuid is 16 bytes in RFC 4122 order. Strings and binaries handed out stay
 * valid until the next call on that realm that writes, refreshes, delivers or closes.
 */
typedef struct cove_value {
    int32_t type;
    union {
        int64_t integer;
        bool boolean;
        float fnum;
        double dnum;
        cove_string_t string;
        cove_binary_t binary;
        cove_timestamp_t timestamp;
        uint8_t decimal128[16];
        uint8_t object_id[12];
        uint8_t uuid[16];
        struct { uint32_t class_key; int64_t object_key; } link;
        struct { const struct cove_value* items; size_t count; } elements;
    } u;
} cove_value_t;

/* ------------------------------------------------------------------------------------------ */
/* Handles                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct cove_config cove_config_t;
typedef struct cove_realm cove_realm_t;
typedef struct cove_object cove_object_t;
typedef struct cove_list cove_list_t;
typedef struct cove_set cove_set_t;
typedef struct cove_map cove_map_t;
typedef struct cove_results cove_results_t;
typedef struct cove_token cove_token_t;
typedef struct cove_migration cove_migration_t;
typedef struct cove_collection_changes cove_collection_changes_t;
typedef struct cove_map_changes cove_map_changes_t;
typedef struct cove_object_changes cove_object_changes_t;
typedef struct cove_sectioned_results cove_sectioned_results_t;
typedef struct cove_section cove_section_t;
typedef struct cove_sectioned_changes cove_sectioned_changes_t;
typedef struct cove_projection cove_projection_t;
typedef struct cove_sync_config cove_sync_config_t;

/** Releases user data given with a callback; runs exactly once, on any thread. */
typedef void (*cove_free_fn)(void* userdata);

/**
 * Adds a reference to any handle and returns it. NULL gives NULL.
 * Thread-safe.
 */
void* cove_retain(void* handle);

/**
 * Gives back a reference to any handle; the handle is destroyed when the last one goes.
 * Releasing a realm handle closes the realm if it is still open. NULL does nothing.
 * Thread-safe.
 */
void cove_release(void* handle);

/** Frees a buffer the library allocated and handed out (JSON text...). NULL does nothing. */
void cove_free(void* buffer);

/**
 * Whether a handle is frozen (an immutable snapshot usable from any thread).
 * @param handle a realm, or an object, list, set, map or results (frozen when its realm is).
 * @param out receives the answer.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT for NULL or a handle of a kind that cannot freeze;
 *   #COVE_ERR_CLOSED once the handle's realm is closed.
 */
cove_status_t cove_is_frozen(const void* handle, bool* out);

/* ------------------------------------------------------------------------------------------ */
/* Configuration and opening                                                                   */
/* ------------------------------------------------------------------------------------------ */

/** How hard a commit works to survive a crash. Passed as int32_t. */
enum {
    /** A commit is durable when cove_commit() returns: it survives power loss (one flush). */
    COVE_DURABILITY_FULL = 0,
    /** No flush: a commit survives the process crashing, not the machine. */
    COVE_DURABILITY_NO_SYNC = 1,
    /** The data lives in an unlinked temporary file and disappears on close. */
    COVE_DURABILITY_MEM_ONLY = 2
};

/**
 * Makes a configuration for cove_open().
 * @param path the database file (created if missing), or NULL for an in-memory realm that
 *             disappears when closed. The lock file is `<path>.lock`.
 * @param out receives the configuration; release it with cove_release().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT for a NULL out, an empty path or invalid UTF-8.
 */
cove_status_t cove_config_new(const char* path, cove_config_t** out);

/**
 * Opens the file read-only: writes fail with #COVE_ERR_READ_ONLY, and the file must exist.
 * @return #COVE_OK or #COVE_ERR_INVALID_ARGUMENT.
 */
cove_status_t cove_config_set_read_only(cove_config_t* config, bool read_only);

/**
 * Keeps the realm in memory, shared by every realm of this process opened with the same
 * identifier (with notifications between them), as Realm's `inMemoryIdentifier`: the data lives
 * while one of them is open and is gone when the last closes. The identifier replaces the path
 * given to cove_config_new(). The data is kept in a file in /dev/shm (memory), or in the temporary
 * folder where there is none, removed with the last realm.
 * @param identifier NUL-terminated UTF-8, not empty; NULL goes back to the configuration's path.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration, an empty
 *   identifier, invalid UTF-8).
 */
cove_status_t cove_config_set_in_memory_identifier(cove_config_t* config, const char* identifier);

/**
 * Encrypts the file with a 64-byte key, as Realm's `encryptionKey`: every page, the meta slots
 * included, is sealed with AES-256-GCM (OpenSSL's libcrypto) with its page number and version
 * bound in, so a changed or moved page is reported (#COVE_ERR_CORRUPT), never read as other
 * data. A new file is created encrypted; an existing one must have been made with this key.
 * The lock file holds nothing of the data. Keep the key elsewhere than the file: without it the
 * data cannot be read.
 * @param key the 64 bytes (copied), or NULL with `size` 0 for a plain file (the default).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration, a size other
 *   than 64). cove_open() then fails with #COVE_ERR_DECRYPTION for an encrypted file opened
 *   without its key or with another, or a plain file opened with a key.
 */
cove_status_t cove_config_set_encryption_key(cove_config_t* config, const uint8_t* key, size_t size);

/**
 * Caps the number of versions pinned at once (by this and other processes' open realms, frozen
 * handles and the latest version). Beginning or committing a write that would exceed it fails
 * with #COVE_ERR_TOO_MANY_VERSIONS. 0 means unlimited (the default).
 * @return #COVE_OK or #COVE_ERR_INVALID_ARGUMENT.
 */
cove_status_t cove_config_set_max_active_versions(cove_config_t* config, uint64_t max_versions);

/**
 * Sets the durability: #COVE_DURABILITY_FULL (default), #COVE_DURABILITY_NO_SYNC or
 * #COVE_DURABILITY_MEM_ONLY.
 * @return #COVE_OK, or #COVE_ERR_INVALID_ARGUMENT for another number.
 */
cove_status_t cove_config_set_durability(cove_config_t* config, int32_t durability);

/**
 * How long cove_begin_write() waits for the write lock held by another thread or process before
 * failing with #COVE_ERR_LOCKED. -1 waits forever (the default); 0 does not wait.
 * @return #COVE_OK, or #COVE_ERR_INVALID_ARGUMENT for a value below -1.
 */
cove_status_t cove_config_set_write_timeout_ms(cove_config_t* config, int64_t timeout_ms);

/**
 * Opens (creating if needed) the realm a configuration describes. The configuration may be
 * released or reused afterwards.
 * @param out receives the realm; release it with cove_release() (which closes it).
 * @return #COVE_OK;
 *   #COVE_ERR_INVALID_ARGUMENT for NULL arguments;
 *   #COVE_ERR_IO when the file cannot be opened or created (a missing directory, no permission);
 *   #COVE_ERR_CORRUPT when the file is not a Cove file or is damaged;
 *   #COVE_ERR_FORMAT when a newer Cove wrote it;
 *   #COVE_ERR_DECRYPTION when the file is encrypted and the configuration has no key or another
 *   one, or the file is plain and the configuration has a key (cove_config_set_encryption_key());
 *   #COVE_ERR_NO_SPACE when the device is full;
 *   #COVE_ERR_SCHEMA when the file's schema differs from the configured one and the schema
 *   version is not higher than the file's (or is lower);
 *   #COVE_ERR_MIGRATION_REQUIRED when the schema changed in ways other than additions and no
 *   migration callback is set (cove_config_set_migration());
 *   #COVE_ERR_READ_ONLY when a read-only realm's file needs its schema written;
 *   #COVE_ERR_LOCKED when the schema must be written and the write lock is not free in time;
 *   #COVE_ERR_CALLBACK when the migration callback returned false ("the migration callback
 *   returned false");
 *   #COVE_ERR_DUPLICATE_KEY when a migration leaves two objects with one primary key.
 *   A failed migration leaves the file exactly as it was.
 * Threads: the realm belongs to the calling thread until it is handed to another while idle. A
 * migration callback runs inside this call, on this thread.
 */
cove_status_t cove_open(const cove_config_t* config, cove_realm_t** out);

/**
 * The schema version of the file at `path`, read without a schema and without changing the
 * file (as Realm's `schemaVersion(at:)`): a program can decide which schema to open it with.
 * @param path NUL-terminated UTF-8 path of an existing Cove file.
 * @param out_version receives the version; 0 for a file that holds no schema yet.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or invalid UTF-8); #COVE_ERR_NOT_FOUND (no
 *   file at `path`); #COVE_ERR_CORRUPT (not a Cove file); #COVE_ERR_FORMAT (from a newer Cove);
 *   #COVE_ERR_IO.
 * Threads: any thread; it opens and closes the file for the call.
 */
cove_status_t cove_schema_version_at(const char* path, uint64_t* out_version);

/**
 * Closes a realm: cancels a write in progress, unpins its version and closes the file. Later
 * calls on it (and on handles made from it) give #COVE_ERR_CLOSED. Closing twice is fine.
 * The handle itself stays valid until cove_release().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE for a migration's old or new
 *   realm while the migration callback runs (cove_open() closes and commits them).
 */
cove_status_t cove_close(cove_realm_t* realm);

/* ------------------------------------------------------------------------------------------ */
/* Transactions and versions                                                                   */
/* ------------------------------------------------------------------------------------------ */

/**
 * Begins a write transaction: takes the write lock (waiting as configured) and advances the realm
 * to the newest version first.
 * @return #COVE_OK; #COVE_ERR_ALREADY_IN_WRITE; #COVE_ERR_FROZEN; #COVE_ERR_READ_ONLY;
 *   #COVE_ERR_LOCKED after the write timeout; #COVE_ERR_TOO_MANY_VERSIONS; #COVE_ERR_CLOSED.
 */
cove_status_t cove_begin_write(cove_realm_t* realm);

/**
 * Commits the write transaction. At #COVE_DURABILITY_FULL the new version is on stable storage
 * when this returns.
 * @return #COVE_OK; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_IO or #COVE_ERR_NO_SPACE when writing or
 *   flushing failed (the last committed version stays intact, and the realm is closed: reopen it);
 *   #COVE_ERR_TOO_MANY_VERSIONS (the transaction is cancelled); #COVE_ERR_IN_WRITE for a
 *   migration's realm while the migration callback runs (cove_open() commits the migration's
 *   write when the callback returns); #COVE_ERR_CLOSED.
 */
cove_status_t cove_commit(cove_realm_t* realm);

/**
 * Cancels the write transaction, discarding its changes, and releases the write lock.
 * @return #COVE_OK; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_IN_WRITE for a migration's realm while the
 *   migration callback runs (return false from the callback to fail the migration);
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_cancel_write(cove_realm_t* realm);

/** Whether the realm is inside a write transaction. @return #COVE_OK or #COVE_ERR_INVALID_ARGUMENT. */
cove_status_t cove_is_in_write(cove_realm_t* realm, bool* out);

/**
 * Advances the realm to the newest committed version (by any thread or process), then delivers
 * notifications and the callbacks of cove_results_subscribe() whose wait ended, as
 * cove_deliver() does.
 * @param out_did_advance receives whether the version changed; may be NULL.
 * @return #COVE_OK; #COVE_ERR_IN_WRITE inside a write; #COVE_ERR_FROZEN; #COVE_ERR_CLOSED.
 */
cove_status_t cove_refresh(cove_realm_t* realm, bool* out_did_advance);

/**
 * Releases the version the realm pins, so the space only it kept alive can be reused. The next
 * read pins the newest version again.
 * @return #COVE_OK; #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN; #COVE_ERR_CLOSED.
 */
cove_status_t cove_invalidate(cove_realm_t* realm);

/**
 * Makes a frozen realm: an immutable snapshot of the realm's current version that any thread may
 * read; it pins that version until released. Freezing a frozen realm returns it again (with one
 * more reference).
 * @param out_frozen receives the frozen realm; release it with cove_release().
 * @return #COVE_OK; #COVE_ERR_IN_WRITE inside a write; #COVE_ERR_TOO_MANY_VERSIONS; #COVE_ERR_CLOSED.
 */
cove_status_t cove_freeze(cove_realm_t* realm, cove_realm_t** out_frozen);

/**
 * The version the realm sees: the commit version of its snapshot (grows by one per commit).
 * Inside a write, the version the write started from.
 * @return #COVE_OK; #COVE_ERR_CLOSED.
 */
cove_status_t cove_version(cove_realm_t* realm, uint64_t* out_version);

/**
 * The number of versions pinned now in the file, by every process: open realms' snapshots,
 * frozen handles, and the newest version.
 * @return #COVE_OK; #COVE_ERR_CLOSED.
 */
cove_status_t cove_active_versions(cove_realm_t* realm, uint64_t* out_count);

/**
 * What opening the file left out. When this process opened the file first and the newest commit
 * on disk did not check out (a page it wrote does not hold what it wrote, or the file is shorter
 * than it says), the open took the version before it: after a crash in the middle of a commit,
 * the commit that never finished; after a commit that had finished, damage to the file, whose
 * changes are lost. `cove check` reports it too.
 * @param out_discarded receives whether a commit was discarded (false for a file another realm
 *   or process had open already).
 * @param out_discarded_version, out_opened_version receive the versions (0 when none was
 *   discarded); each may be NULL.
 * @param out_reason receives why, naming the meta slot and the page that failed (free it with
 *   cove_free()), or NULL when none was discarded; may be NULL.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm or out_discarded); #COVE_ERR_CLOSED.
 */
cove_status_t cove_recovery(cove_realm_t* realm, bool* out_discarded, uint64_t* out_discarded_version,
                            uint64_t* out_opened_version, char** out_reason);

/**
 * How the file's space is used at the version the realm reads: its format version, the bytes of
 * its pages, and of those holding data of a version in use (the others are free, and later
 * commits reuse them). Each out may be NULL.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm); #COVE_ERR_CLOSED.
 */
cove_status_t cove_file_space(cove_realm_t* realm, uint32_t* out_format_version, uint64_t* out_total_bytes,
                              uint64_t* out_used_bytes);

/* ------------------------------------------------------------------------------------------ */
/* Schema                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/**
 * Sets the schema the realm must have, in the JSON notation (an object keyed by class name; see
 * docs/schema.md), and its version. On open: a new file takes this
 * schema; a file with the same schema opens as it is; a file whose schema differs only by added
 * classes, properties or indexes is brought up to it when `schema_version` is higher than the
 * file's; any other difference needs a migration callback (cove_config_set_migration()) and
 * fails with #COVE_ERR_MIGRATION_REQUIRED without one. The file's classes that the schema leaves
 * out are not removed: they stay in the file as they are, out of this realm's sight (queries and
 * creates of them fail with #COVE_ERR_NOT_FOUND), as Realm's object types do; deleting an object
 * still clears the links to it from them. A migration takes one out with
 * cove_migration_delete_data(). Backlinks are computed: declaring them or not needs no new version.
 * Without a schema the realm opens with the file's own.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, invalid UTF-8);
 *   #COVE_ERR_SCHEMA naming the class and property at fault (unknown type, link to a missing
 *   class, bad primary key type, duplicate names, malformed JSON with its line and column).
 */
cove_status_t cove_config_set_schema_json(cove_config_t* config, const char* json, uint64_t schema_version);

/**
 * The realm's schema in the JSON notation.
 * @param out_json receives a NUL-terminated string; free it with cove_free().
 * @return #COVE_OK; #COVE_ERR_CLOSED.
 */
cove_status_t cove_schema_json(cove_realm_t* realm, char** out_json);

/**
 * The stable key of a class, used inside #COVE_TYPE_LINK values.
 * @return #COVE_OK; #COVE_ERR_NOT_FOUND for an unknown class.
 */
cove_status_t cove_class_key(cove_realm_t* realm, const char* class_name, uint32_t* out_class_key);

/**
 * The stable key of a property, for cove_object_get_by_key() and cove_object_set_by_key(),
 * which skip the lookup by name.
 * @return #COVE_OK; #COVE_ERR_NOT_FOUND for an unknown class or property.
 */
cove_status_t cove_property_key(cove_realm_t* realm, const char* class_name, const char* property,
                                int64_t* out_key);

/* ------------------------------------------------------------------------------------------ */
/* Migrations                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * A migration brings a file from its schema to the configured one (cove_config_set_schema_json())
 * when the configured schema version is higher than the file's. cove_open() then calls the
 * configuration's migration callback, on its own thread, inside the one write transaction that
 * also writes the new schema, with a #cove_migration_t that gives:
 *
 * - the old realm (cove_migration_old_realm()): the file as it was, frozen, with the old schema;
 * - the new realm (cove_migration_new_realm()): the realm being opened, in its write, with the
 *   new schema. Every object and collection function works on it (cove_object_create(),
 *   cove_object_set(), cove_object_create_embedded(), cove_object_create_many()...). Objects
 *   keep their object keys from old to new. A property whose type changed reads its default on
 *   the new objects until it is set; a property or class the new schema lacks reads through the
 *   old realm only.
 *
 * When the callback returns true, properties and classes the new schema dropped are freed,
 * changed indexes and primary keys are rebuilt and the write is committed. When it returns false,
 * or anything after it fails (a primary key that is no longer unique), cove_open() fails and the
 * file is left exactly as it was.
 *
 * Rules shared by this section:
 * - A #cove_migration_t is lent to the callback and valid only while it runs. A caller may
 *   cove_retain() it, but every call on it after the callback returned gives
 *   #COVE_ERR_INVALIDATED (never a crash); the retained handle is freed by cove_release().
 * - A status other than #COVE_OK from a call made inside the callback is the caller's to handle:
 *   it does not fail the migration by itself. Return false to fail it.
 * - While the callback runs, cove_commit(), cove_cancel_write() and cove_close() on the old or new
 *   realm give #COVE_ERR_IN_WRITE: cove_open() owns that write and those realms.
 * - After cove_open() returned, the new realm handle is the realm cove_open() handed out (the same
 *   handle, with one more reference for each cove_migration_new_realm() not yet released); the old
 *   realm is closed, and its handles and objects give #COVE_ERR_CLOSED.
 * - Threads: everything runs on the thread that called cove_open(); no handle of a migration may
 *   be used by another thread while it runs.
 */

/**
 * The migration callback: called once by cove_open() when an existing file's schema version is
 * lower than the configured one, whatever changed (also nothing, or only additions); never for a
 * new file.
 * @param userdata the pointer given to cove_config_set_migration().
 * @param migration the migration, valid during this call only (see above).
 * @return true to commit the migration; false to fail cove_open() with #COVE_ERR_CALLBACK
 *   ("the migration callback returned false") and leave the file as it was.
 */
typedef bool (*cove_migration_fn)(void* userdata, cove_migration_t* migration);

/**
 * Decides a compaction (cove_compact_file(), cove_config_set_should_compact_on_launch()).
 * @param userdata the pointer given with the callback.
 * @param total_bytes the bytes of the file's pages.
 * @param used_bytes the bytes of the pages that hold data (the rest are free).
 * @return true to compact the file.
 */
typedef bool (*cove_should_compact_fn)(void* userdata, uint64_t total_bytes, uint64_t used_bytes);

/**
 * Sets the migration callback cove_open() runs when the file needs one (see above); without one,
 * only additive schema changes are accepted (#COVE_ERR_MIGRATION_REQUIRED otherwise).
 * @param config the configuration.
 * @param migration the callback, or NULL to remove the one set before.
 * @param userdata passed to every call of the callback; may be NULL.
 * @param free_userdata called with `userdata` exactly once: when the configuration is released,
 *   or when another cove_config_set_migration() replaces this callback (so pass a new userdata,
 *   or no free_userdata, when replacing a callback by itself); at once when `migration` is NULL.
 *   If an open with this configuration is in progress then, it runs when that open returns. May
 *   be NULL. It may run on any thread. When this function fails it is not called: `userdata`
 *   stays the caller's.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration).
 * Threads: the callback runs inside cove_open(), on the thread that calls it; several threads
 * opening with one configuration at once may run it at once, each with its own migration.
 */
cove_status_t cove_config_set_migration(cove_config_t* config, cove_migration_fn migration, void* userdata,
                                        cove_free_fn free_userdata);

/**
 * Sets the callback cove_open() asks, before opening an existing file that no other handle has
 * open, whether to compact it first (cove_compact_file()), as Realm's `shouldCompactOnLaunch`.
 * Not asked for in-memory or read-only opens, or when the file does not exist yet.
 * @param config the configuration.
 * @param should_compact the callback, or NULL to remove the one set before.
 * @param userdata passed to every call; may be NULL.
 * @param free_userdata called with `userdata` exactly once, as cove_config_set_migration() does.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration).
 * Threads: the callback runs inside cove_open(), on the thread that calls it.
 */
cove_status_t cove_config_set_should_compact_on_launch(cove_config_t* config, cove_should_compact_fn should_compact,
                                                       void* userdata, cove_free_fn free_userdata);

/**
 * The file's schema version before the migration.
 * @param out receives it.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind handle, NULL out);
 *   #COVE_ERR_INVALIDATED after the callback returned.
 */
cove_status_t cove_migration_old_version(cove_migration_t* migration, uint64_t* out);

/**
 * The file as it was before the migration: a frozen realm with the old schema, read with the
 * object and collection functions (it cannot be written). It is closed when the migration ends
 * (then every call on it gives #COVE_ERR_CLOSED).
 * @param out receives the realm (+1); release it with cove_release() (any time; releasing it
 *   does not close it during the migration).
 * @return as cove_migration_old_version().
 */
cove_status_t cove_migration_old_realm(cove_migration_t* migration, cove_realm_t** out);

/**
 * The realm being opened, in the migration's write transaction, with the new schema: create,
 * set and delete on it as in any write (cove_begin_write() is not needed, and commit,
 * cancel and close are refused, see above). It is the handle cove_open() then returns.
 * @param out receives the realm (+1); release it with cove_release() (releasing it during the
 *   migration does not close it).
 * @return as cove_migration_old_version().
 */
cove_status_t cove_migration_new_realm(cove_migration_t* migration, cove_realm_t** out);

/**
 * Keeps the values of a property under its new name: `old_name` of the old schema's class becomes
 * `new_name` of the new schema's class (the new schema must not have `old_name` any more, and the
 * two must have the same type, optionality and collection kind). Links keep their backlinks.
 * Without it, a renamed property is a dropped one plus a new one at its defaults. O(n) in the
 * class's objects.
 * @param class_name, old_name, new_name NUL-terminated UTF-8.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind, invalid UTF-8);
 *   #COVE_ERR_NOT_FOUND (the class is not in both schemas, or either property is missing);
 *   #COVE_ERR_SCHEMA (the types differ, or the new schema still has `old_name`);
 *   #COVE_ERR_INVALIDATED after the callback returned.
 */
cove_status_t cove_migration_rename_property(cove_migration_t* migration, const char* class_name,
                                             const char* old_name, const char* new_name);

/**
 * Deletes the data of a class. A class of the new schema loses every object (links to them
 * become null, as at any delete). A class of the file that the new schema leaves out, which
 * would otherwise stay in the file as it is (see cove_config_set_schema_json()), goes from the
 * file when the migration ends: its objects, indexes and schema entry.
 * @param class_name NUL-terminated UTF-8.
 * @param out_deleted receives whether there was anything to delete (may be NULL).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind, invalid UTF-8);
 *   #COVE_ERR_NOT_FOUND (the file has no such class); #COVE_ERR_INVALIDATED after the callback
 *   returned. cove_open() fails with #COVE_ERR_SCHEMA when another class left out of the new
 *   schema links to a class whose data went.
 */
cove_status_t cove_migration_delete_data(cove_migration_t* migration, const char* class_name, bool* out_deleted);

/**
 * Called by cove_migration_enumerate() for each object.
 * @param userdata the pointer given to cove_migration_enumerate().
 * @param old_object the object as it was, in the old realm (read-only). Borrowed: valid during
 *   this call only, unless the callback cove_retain()s it (it then answers #COVE_ERR_CLOSED once
 *   the migration ended).
 * @param new_object the same object in the new realm, writable; NULL when the new schema has no
 *   such class or the object was deleted during the migration. Borrowed as `old_object`; once
 *   retained it stays a valid object of the opened realm.
 * @return true to go on; false to stop the enumeration (cove_migration_enumerate() then gives
 *   #COVE_ERR_CALLBACK).
 */
typedef bool (*cove_migration_object_fn)(void* userdata, cove_object_t* old_object, cove_object_t* new_object);

/**
 * Calls `callback` with each object the old file has of `class_name`, in object-key (creation)
 * order, as it was and as it is in the new realm: the place to convert a changed type or move
 * values into new classes. Objects created during the migration are not visited. Strings and
 * binaries read from the objects follow the rule of #cove_value_t for their realm.
 * @param class_name NUL-terminated UTF-8: a class of the old or the new schema (a class only the
 *   new schema has visits nothing).
 * @param callback called once per object (see #cove_migration_object_fn).
 * @param userdata passed to the callback; may be NULL.
 * @return #COVE_OK when every object was visited;
 *   #COVE_ERR_CALLBACK when the callback returned false, the message naming the object's position
 *   and class (the objects before it stay as the callback left them);
 *   #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind, invalid UTF-8, NULL callback);
 *   #COVE_ERR_NOT_FOUND (neither schema has the class);
 *   #COVE_ERR_INVALIDATED after the migration callback returned.
 * Threads: the callback runs on the calling thread, before this function returns.
 */
cove_status_t cove_migration_enumerate(cove_migration_t* migration, const char* class_name,
                                       cove_migration_object_fn callback, void* userdata);

/* ------------------------------------------------------------------------------------------ */
/* Objects                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/**
 * Creates an object of a class without a primary key, every property at its default (null when
 * optional; 0, false, "" and so on otherwise). Inside a write only.
 * @param out receives the object (+1).
 * @return #COVE_OK; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_NOT_FOUND (unknown class);
 *   #COVE_ERR_INVALID_ARGUMENT when the class has a primary key (use
 *   cove_object_create_with_primary_key()) or is embedded (use cove_object_create_embedded());
 *   #COVE_ERR_FROZEN; #COVE_ERR_READ_ONLY; #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_create(cove_realm_t* realm, const char* class_name, cove_object_t** out);

/**
 * Creates an object with the given primary key.
 * @return as cove_object_create(), and #COVE_ERR_DUPLICATE_KEY when an object has that key;
 *   #COVE_ERR_WRONG_TYPE when the key's type is not the primary key property's.
 */
cove_status_t cove_object_create_with_primary_key(cove_realm_t* realm, const char* class_name,
                                                  const cove_value_t* pk, cove_object_t** out);

/**
 * Finds the object of a class by primary key, or the one to update: creates it when absent.
 * @return as cove_object_create_with_primary_key(), without #COVE_ERR_DUPLICATE_KEY.
 */
cove_status_t cove_object_create_or_update(cove_realm_t* realm, const char* class_name,
                                           const cove_value_t* pk, cove_object_t** out);

/**
 * Creates many objects of one class in one call, inside a write: the batch form of
 * cove_object_create() (or cove_object_create_with_primary_key()) followed by cove_object_set()
 * for each property, with the names looked up once for the whole batch.
 * @param realm a live realm in a write transaction.
 * @param class_name NUL-terminated UTF-8; a class that is not embedded.
 * @param property_names `n_properties` distinct NUL-terminated UTF-8 names of properties (not
 *   backlinks). When the class has a primary key it must be among them. May be NULL when
 *   `n_properties` is 0.
 * @param n_properties the number of names (0 creates objects with every property at its default).
 * @param values `n_objects * n_properties` values, row-major: `values[i * n_properties + j]` is
 *   property j of object i. Checked as cove_object_set() checks them (an int is accepted for a
 *   float or double property; a #COVE_TYPE_LINK value names an existing object of the target
 *   class). A list or set property takes a #COVE_TYPE_LIST value, a map a #COVE_TYPE_MAP value
 *   (its elements checked as cove_list_insert(), cove_set_insert() and cove_map_set() check
 *   them; a set keeps a duplicate once, a map a key given twice with its last value); each
 *   collection is written in one edit (an updated object's replaced), and not one of embedded
 *   objects (create those in place). May be NULL when there are no values.
 * @param n_objects the number of objects.
 * @param update false: every object is new (#COVE_ERR_DUPLICATE_KEY for a primary key that
 *   exists, also one given earlier in the same batch). true: create-or-update by primary key as
 *   cove_object_create_or_update() does, then set the other values (the class must have a
 *   primary key).
 * @param out_created receives how many objects were created or updated: `n_objects` on success,
 *   the index of the failing object otherwise (0 when the arguments were refused before any
 *   object); set on failure too. May be NULL.
 * @return #COVE_OK;
 *   #COVE_ERR_INVALID_ARGUMENT for NULL or wrong-kind realm, NULL class_name, NULL
 *   property_names with n_properties > 0, NULL values with values expected, a NULL or invalid
 *   UTF-8 name, a name given twice, a backlinks property, a class with a primary key missing
 *   from property_names, update with a class without primary key, an embedded class, counts
 *   whose product overflows, and for a bad value (type tag, UTF-8, timestamp, a link to a missing
 *   object);
 *   #COVE_ERR_NOT_FOUND (unknown class or property); #COVE_ERR_WRONG_TYPE (a value of the wrong
 *   type: a single value for a collection or elements for a single value among them, a
 *   collection of embedded objects); #COVE_ERR_DUPLICATE_KEY (update false); #COVE_ERR_NOT_IN_WRITE;
 *   #COVE_ERR_FROZEN; #COVE_ERR_CLOSED.
 *   The names and counts are checked before any object is made. A bad value stops the batch at
 *   its object, with a message naming the object's index, the property and the problem, e.g.
 *   "cove_object_create_many: object 3: property 'age' of class 'Person' is int, got string "x"".
 *   The objects before it stay created (or updated), and the failing object is not created; an
 *   existing object the failing row was updating keeps the values set before the bad one. The
 *   caller's write decides: cove_cancel_write() undoes the whole batch.
 * Complexity: O(n_objects * n_properties) property writes, each O(log n).
 * Threads: as the realm.
 */
cove_status_t cove_object_create_many(cove_realm_t* realm, const char* class_name,
                                      const char* const* property_names, size_t n_properties,
                                      const cove_value_t* values, size_t n_objects, bool update,
                                      size_t* out_created);

/**
 * Creates one object with values for some of its properties, in one call: the one-object form
 * of cove_object_create_many(), which also gives the object. Properties not named keep their
 * defaults. Faster than cove_object_create_with_primary_key() followed by cove_object_set() for
 * each property (and a collection's inserts), and the object never exists without its values.
 * @param realm a live realm in a write transaction.
 * @param class_name NUL-terminated UTF-8; a class that is not embedded.
 * @param property_names `n_properties` distinct NUL-terminated UTF-8 names of properties (not
 *   backlinks); the primary key among them when the class has one. May be NULL when
 *   `n_properties` is 0.
 * @param values `n_properties` values, `values[j]` for `property_names[j]`, checked as
 *   cove_object_set() checks them; lists, sets and maps take #COVE_TYPE_LIST and
 *   #COVE_TYPE_MAP values as in cove_object_create_many(). May be NULL when `n_properties` is 0.
 * @param out receives the object (+1).
 * @return #COVE_OK; as cove_object_create_many() otherwise (the message names the property and
 *   the problem, e.g. "cove_object_create_with_values: property 'age' of class 'Person' is int,
 *   got string "x""), and #COVE_ERR_INVALID_ARGUMENT for a NULL `out`. Nothing is created then.
 * Complexity: O(n_properties) property writes, each O(log n).
 * Threads: as the realm.
 */
cove_status_t cove_object_create_with_values(cove_realm_t* realm, const char* class_name,
                                             const char* const* property_names, size_t n_properties,
                                             const cove_value_t* values, cove_object_t** out);

/**
 * Finds an object by primary key at the realm's current version.
 * @param out receives the object (+1), or NULL when there is none (still #COVE_OK).
 * @return #COVE_OK; #COVE_ERR_NOT_FOUND (unknown class); #COVE_ERR_INVALID_ARGUMENT (the class
 *   has no primary key); #COVE_ERR_WRONG_TYPE; #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_find(cove_realm_t* realm, const char* class_name, const cove_value_t* pk,
                               cove_object_t** out);

/**
 * Reads a property. Strings and binaries point into the realm's storage: they stay valid until
 * the next call on that realm that writes, refreshes, delivers or closes (copy them to keep
 * them). A link reads as #COVE_TYPE_LINK (class key and object key), or #COVE_TYPE_NULL. A
 * mixed value holding a list or dictionary reads as #COVE_TYPE_LIST or #COVE_TYPE_MAP, its
 * elements (at every depth) valid as long as strings are.
 * @return #COVE_OK; #COVE_ERR_NOT_FOUND (no such property, the message names class and
 *   property); #COVE_ERR_INVALIDATED (the object was deleted); #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_get(cove_object_t* object, const char* property, cove_value_t* out);

/**
 * Writes a property, inside a write. Writing a value equal to the old one still counts as a
 * change. An int is accepted for a float or double property; a double for a float property. A
 * mixed property takes a #COVE_TYPE_LIST or #COVE_TYPE_MAP value as a nested list or dictionary
 * (written whole; links inside are checked as any link of a mixed value is, and become null
 * when their target is deleted); any other property refuses one with #COVE_ERR_WRONG_TYPE.
 * @return #COVE_OK; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_NOT_FOUND; #COVE_ERR_WRONG_TYPE (the
 *   message names class, property, expected and given type), also for NULL into a required
 *   property; #COVE_ERR_INVALID_ARGUMENT for invalid UTF-8 or a link to a missing object or of
 *   the wrong class (a mixed property takes a link to any class's object, but not to an embedded
 *   one; deleting the target sets it to null); #COVE_ERR_DUPLICATE_KEY when changing a primary
 *   key to a taken one;
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_set(cove_object_t* object, const char* property, const cove_value_t* value);

/** cove_object_get() by a property key from cove_property_key(). */
cove_status_t cove_object_get_by_key(cove_object_t* object, int64_t property_key, cove_value_t* out);

/** cove_object_set() by a property key from cove_property_key(). */
cove_status_t cove_object_set_by_key(cove_object_t* object, int64_t property_key, const cove_value_t* value);

/**
 * The object a link property points at.
 * @param out receives the object (+1), or NULL when the link is null.
 * @return as cove_object_get(), and #COVE_ERR_WRONG_TYPE when the property is not a link.
 */
cove_status_t cove_object_get_object(cove_object_t* object, const char* property, cove_object_t** out);

/**
 * Deletes an object, inside a write. Links to it become null. Later calls on any handle to it
 * give #COVE_ERR_INVALIDATED.
 * @return #COVE_OK; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_delete(cove_object_t* object);

/**
 * Whether the object still exists: false once deleted or its realm closed (this call answers
 * for a closed realm rather than failing).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or not an object).
 */
cove_status_t cove_object_is_valid(cove_object_t* object, bool* out);

/**
 * The object in a frozen copy of its realm at the realm's current version: immutable, readable
 * from any thread. Freezing a frozen object gives it again (one more reference).
 * @param out_frozen receives the frozen object (+1); its realm closes when the last handle on
 *   it goes.
 * @return #COVE_OK; #COVE_ERR_IN_WRITE (freezing inside a write); #COVE_ERR_INVALIDATED (deleted);
 *   #COVE_ERR_CLOSED; #COVE_ERR_INVALID_ARGUMENT (NULL or not an object).
 */
cove_status_t cove_object_freeze(cove_object_t* object, cove_object_t** out_frozen);

/**
 * The same object in the live realm `live` (at its current version).
 * @param out receives the object (+1), or NULL when it was deleted since (still #COVE_OK).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kinds, or `live` frozen);
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_thaw(cove_object_t* frozen, cove_realm_t* live, cove_object_t** out);

/**
 * The object as a #COVE_TYPE_LINK value, to store in a link property. The value names the
 * object by its class key and object key, which mean something only within the object's file:
 * store it in realms of that file (any handle, frozen or live). Stored in a realm of another
 * file, it names whatever object has those keys there, or is refused when none has.
 * @return #COVE_OK; #COVE_ERR_INVALIDATED when the object was deleted (no link to nothing is made);
 *   #COVE_ERR_CLOSED; #COVE_ERR_INVALID_ARGUMENT (NULL or not an object).
 */
cove_status_t cove_object_to_link(cove_object_t* object, cove_value_t* out_link);

/**
 * The object a #COVE_TYPE_LINK value names.
 * @param out receives the object (+1); untouched on failure.
 * @return #COVE_OK; #COVE_ERR_WRONG_TYPE when the value is not a link; #COVE_ERR_NOT_FOUND for an
 *   unknown class key, and when no object of the class has the object key (it was deleted, or
 *   never made: the old value of a link in a change set may name a deleted object);
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_from_link(cove_realm_t* realm, const cove_value_t* link, cove_object_t** out);

/**
 * The object of a class with the given object key (a key from a link or from results).
 * @param out receives the object (+1), or NULL when there is none.
 */
cove_status_t cove_object_get_by_object_key(cove_realm_t* realm, const char* class_name, int64_t object_key,
                                            cove_object_t** out);

/*
 * Objects by keys, without a handle: a class key (cove_class_key(), or a #COVE_TYPE_LINK
 * value's), an object key (cove_results_get_keys(), a link's) and a property key
 * (cove_property_key()) name what a program reading (or writing) many objects works on, so
 * that it need not make a #cove_object_t for each. Keys are never reused: an object key names
 * the same object for the file's life, and once that object is deleted, nothing. These calls
 * work on the realm's current version (in a write, the write's own state), as the same calls on
 * a handle would. The three that do not write (cove_object_from_keys(),
 * cove_object_exists_by_keys(), cove_object_get_by_keys()) are short and take no lock another
 * thread may hold for long, so a binding may keep its own lock (an interpreter's) around them.
 */

/**
 * A handle to the object of a class with an object key, made whether the object exists or not:
 * for a program that holds the keys of an object it read (cove_object_exists_by_keys(),
 * cove_object_get_by_keys()) and now needs its handle. A handle of an object that does not
 * exist behaves as the handle of a deleted object: cove_object_is_valid() answers false and
 * reads give #COVE_ERR_INVALIDATED. Give it keys the library handed out: a key it has not
 * handed out yet names whatever object a later create gives that key.
 * @param realm a live or frozen realm; the object handle belongs to it.
 * @param class_key the key of a class the realm sees (cove_class_key()).
 * @param object_key the object's key.
 * @param out receives the object (+1); untouched on failure.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm, NULL out);
 *   #COVE_ERR_NOT_FOUND (no class the realm sees has the key); #COVE_ERR_WRONG_THREAD;
 *   #COVE_ERR_CLOSED.
 * Complexity: O(1) in the number of objects.
 * Threads: as the realm.
 */
cove_status_t cove_object_from_keys(cove_realm_t* realm, uint32_t class_key, int64_t object_key,
                                    cove_object_t** out);

/**
 * Whether the object of a class with an object key exists at the realm's current version (a
 * key of results, read before a write that may have deleted the object, for instance).
 * @param realm a live or frozen realm.
 * @param class_key the key of a class the realm sees (cove_class_key()).
 * @param object_key the object's key; a negative key names no object (false).
 * @param out receives the answer; untouched on failure.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm, NULL out);
 *   #COVE_ERR_NOT_FOUND (no class the realm sees has the key); #COVE_ERR_WRONG_THREAD;
 *   #COVE_ERR_CLOSED.
 * Complexity: O(log n); less for objects read in key order.
 * Threads: as the realm.
 */
cove_status_t cove_object_exists_by_keys(cove_realm_t* realm, uint32_t class_key, int64_t object_key, bool* out);

/**
 * Reads a property of the object of a class with an object key, without a handle: what
 * cove_object_get_by_key() reads on the object's handle. Strings and binaries handed out stay
 * valid as cove_object_get() says (until the realm's next write, refresh, delivery or close).
 * @param realm a live or frozen realm.
 * @param class_key the key of a class the realm sees (cove_class_key()).
 * @param object_key the object's key.
 * @param property_key the key of a property of that class (cove_property_key()): a single value
 *   or a link (a link reads as #COVE_TYPE_LINK or #COVE_TYPE_NULL).
 * @param out receives the value; untouched on failure.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm, NULL out);
 *   #COVE_ERR_NOT_FOUND (no class the realm sees has the class key, or the class no property
 *   the property key; the message names them); #COVE_ERR_INVALIDATED (no object of the class
 *   has the object key: it was deleted, or never made; the message names class and key);
 *   #COVE_ERR_WRONG_TYPE (a list, set, map or backlinks property); #COVE_ERR_WRONG_THREAD;
 *   #COVE_ERR_CLOSED.
 * Complexity: O(log n); less for objects read in key order.
 * Threads: as the realm.
 */
cove_status_t cove_object_get_by_keys(cove_realm_t* realm, uint32_t class_key, int64_t object_key,
                                      int64_t property_key, cove_value_t* out);

/**
 * Writes a property of the object of a class with an object key, inside a write, without a
 * handle: what cove_object_set_by_key() writes on the object's handle (and cove_object_set()
 * by name), with the same checks and conversions.
 * @param realm a live realm in a write transaction.
 * @param class_key the key of a class the realm sees (cove_class_key()).
 * @param object_key the object's key.
 * @param property_key the key of a property of that class (cove_property_key()).
 * @param value the value, as cove_object_set() takes it.
 * @return #COVE_OK; as cove_object_set() otherwise (#COVE_ERR_NOT_IN_WRITE, #COVE_ERR_WRONG_TYPE,
 *   #COVE_ERR_DUPLICATE_KEY, #COVE_ERR_INVALIDATED for an object that does not exist, ...);
 *   #COVE_ERR_NOT_FOUND also for a class key no class the realm sees has; #COVE_ERR_FROZEN for a
 *   frozen realm; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm, NULL value);
 *   #COVE_ERR_WRONG_THREAD; #COVE_ERR_CLOSED. Nothing changes on failure.
 * Complexity: as cove_object_set().
 * Threads: as the realm.
 */
cove_status_t cove_object_set_by_keys(cove_realm_t* realm, uint32_t class_key, int64_t object_key,
                                      int64_t property_key, const cove_value_t* value);

/* ------------------------------------------------------------------------------------------ */
/* Collections                                                                                 */
/* ------------------------------------------------------------------------------------------ */

/*
 * Lists ("int[]", "Dog[]"), sets ("string<>") and maps ("double{}") are properties of an object.
 * A #cove_list_t, #cove_set_t or #cove_map_t names one such property of one object, keeps its
 * realm handle alive, and reads through to the realm's current version (in a write, the write's
 * own state). Rules shared by every function of this section:
 *
 * - Handles: NULL or a handle of another kind (an object passed as a list) gives
 *   #COVE_ERR_INVALID_ARGUMENT naming the argument and both kinds.
 * - Indexes are positions from 0; an index outside the collection gives #COVE_ERR_OUT_OF_RANGE
 *   naming the index, the collection and the valid range.
 * - Values are checked against the element type: #COVE_ERR_WRONG_TYPE names class, property,
 *   expected and given type (also for NULL into a collection that is not optional, e.g. "int[]");
 *   an int is accepted for float, double and decimal128 elements, a double for float ones.
 *   Invalid UTF-8, a bad type tag or timestamp gives #COVE_ERR_INVALID_ARGUMENT; so does a link to
 *   a missing object (#COVE_ERR_WRONG_TYPE for one of the wrong class) or a link to an embedded
 *   object (embedded elements are created in place with cove_list_insert_embedded() and
 *   cove_map_set_embedded()).
 * - Links are #COVE_TYPE_LINK values (cove_object_to_link()). Deleting an object takes it out of
 *   every list and set that holds it, and sets map values that name it to null, as Realm does.
 *   Collections of mixed hold links to any class: to objects that exist and are not embedded
 *   (#COVE_ERR_INVALID_ARGUMENT otherwise); when the target is deleted, a list or map element
 *   that held it becomes null and a set loses it.
 * - Writes happen inside a write transaction: outside one (so always on a read-only realm) they
 *   give #COVE_ERR_NOT_IN_WRITE, through a frozen handle #COVE_ERR_FROZEN. This holds also for a
 *   write that would change nothing (erasing an absent element, a union with an empty set).
 * - Once the owning object is deleted, reads (and writes inside a write) give
 *   #COVE_ERR_INVALIDATED; once the realm is closed, every call gives #COVE_ERR_CLOSED.
 * - Strings and binaries handed out follow the rule of #cove_value_t: valid until the next call
 *   on that realm that writes, refreshes, delivers or closes, or until the realm and every handle
 *   made from it are released.
 * - Threads: as the realm the handle came from (a frozen list may be read by any thread).
 */

/**
 * The list property `property` of an object.
 * @param object the owner.
 * @param property the property's name (NUL-terminated UTF-8).
 * @param out receives the list (+1); release it with cove_release().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind, invalid UTF-8);
 *   #COVE_ERR_NOT_FOUND (no such property); #COVE_ERR_WRONG_TYPE (the property is not a list);
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_get_list(cove_object_t* object, const char* property, cove_list_t** out);

/**
 * The number of elements of a list. O(1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_size(cove_list_t* list, size_t* out);

/**
 * The element at `index` (0 <= index < size). A list of objects gives #COVE_TYPE_LINK values
 * (cove_object_from_link() turns them into objects). O(log n).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_OUT_OF_RANGE; #COVE_ERR_INVALIDATED;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_get(cove_list_t* list, size_t index, cove_value_t* out);

/**
 * Inserts a value at `index` (0 <= index <= size; size appends), inside a write. O(log n).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_WRONG_TYPE; #COVE_ERR_OUT_OF_RANGE;
 *   #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_FROZEN; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_insert(cove_list_t* list, size_t index, const cove_value_t* value);

/**
 * Replaces the element at `index` (0 <= index < size), inside a write. An embedded object
 * replaced is deleted.
 * @return as cove_list_insert().
 */
cove_status_t cove_list_set(cove_list_t* list, size_t index, const cove_value_t* value);

/**
 * Removes the element at `index`, inside a write. An embedded object removed is deleted; a linked
 * object is not.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_OUT_OF_RANGE; #COVE_ERR_NOT_IN_WRITE;
 *   #COVE_ERR_FROZEN; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_erase(cove_list_t* list, size_t index);

/**
 * Moves the element at `from` so that it ends up at `to` (both 0 <= i < size), inside a write;
 * the elements between shift by one.
 * @return as cove_list_erase().
 */
cove_status_t cove_list_move(cove_list_t* list, size_t from, size_t to);

/**
 * Removes every element, inside a write (embedded elements are deleted).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_clear(cove_list_t* list);

/**
 * Creates an embedded object at `index` (0 <= index <= size) of a list of an embedded class,
 * inside a write, every property at its default. It lives as long as it stays in the list.
 * @param out receives the new object (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_WRONG_TYPE (not a list of an embedded
 *   class); #COVE_ERR_OUT_OF_RANGE; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_insert_embedded(cove_list_t* list, size_t index, cove_object_t** out);

/**
 * A frozen copy of a list: the same property of the same object in a frozen realm of the list's
 * current version (as cove_freeze() makes), readable from any thread. It pins that version until
 * released; writes through it give #COVE_ERR_FROZEN. Freezing a frozen list returns it again
 * (with one more reference).
 * @param out_frozen receives the frozen list (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE inside a write;
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_TOO_MANY_VERSIONS; #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_freeze(cove_list_t* list, cove_list_t** out_frozen);

/**
 * The set property `property` of an object (a set holds distinct values, in value order).
 * @param out receives the set (+1); release it with cove_release().
 * @return as cove_object_get_list(), #COVE_ERR_WRONG_TYPE when the property is not a set.
 */
cove_status_t cove_object_get_set(cove_object_t* object, const char* property, cove_set_t** out);

/** The number of elements of a set. O(1). @return as cove_list_size(). */
cove_status_t cove_set_size(cove_set_t* set, size_t* out);

/**
 * The element at `index` in the set's order: by value (numbers ascending, strings and binaries
 * by their bytes, null first). O(log n).
 * @return as cove_list_get().
 */
cove_status_t cove_set_get(cove_set_t* set, size_t index, cove_value_t* out);

/**
 * Adds a value inside a write. O(log n).
 * @param out_inserted receives false when the set held it already; may be NULL.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (also for a string or binary too long to be a
 *   set element); #COVE_ERR_WRONG_TYPE; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_set_insert(cove_set_t* set, const cove_value_t* value, bool* out_inserted);

/**
 * Removes a value inside a write (also when the set does not hold it).
 * @param out_erased receives whether the set held it; may be NULL.
 * @return as cove_set_insert().
 */
cove_status_t cove_set_erase(cove_set_t* set, const cove_value_t* value, bool* out_erased);

/**
 * Whether the set holds a value. O(log n).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_WRONG_TYPE (a value the set cannot
 *   hold); #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_set_contains(cove_set_t* set, const cove_value_t* value, bool* out);

/** Removes every element, inside a write. @return as cove_list_clear(). */
cove_status_t cove_set_clear(cove_set_t* set);

/*
 * Set algebra. `set` and `other` may be properties of different objects (or the same handle),
 * but must belong to the same realm: the same cove_realm_t, or handles made from it (a set of
 * another cove_realm_t, even of the same file, or a frozen set, gives #COVE_ERR_INVALID_ARGUMENT:
 * its links and values may be of another file or version). Both must have the same element type,
 * optionality included ("int<>" and "int?<>" differ): #COVE_ERR_WRONG_TYPE otherwise, naming
 * both. Each operation is O(n log n).
 */

/**
 * Adds every element of `other` to `set`, inside a write (RLMSet unionSet:).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_WRONG_TYPE; #COVE_ERR_NOT_IN_WRITE;
 *   #COVE_ERR_FROZEN; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_set_union(cove_set_t* set, cove_set_t* other);

/** Keeps in `set` only the elements `other` holds too, inside a write. @return as cove_set_union(). */
cove_status_t cove_set_intersect(cove_set_t* set, cove_set_t* other);

/** Removes from `set` every element of `other`, inside a write. @return as cove_set_union(). */
cove_status_t cove_set_minus(cove_set_t* set, cove_set_t* other);

/** Makes `set` hold exactly the elements of `other`, inside a write (RLMSet setSet:). @return as cove_set_union(). */
cove_status_t cove_set_assign(cove_set_t* set, cove_set_t* other);

/**
 * Whether the two sets share an element.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_WRONG_TYPE; #COVE_ERR_INVALIDATED;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_set_intersects(cove_set_t* set, cove_set_t* other, bool* out);

/** Whether every element of `set` is in `other`. @return as cove_set_intersects(). */
cove_status_t cove_set_is_subset(cove_set_t* set, cove_set_t* other, bool* out);

/** Whether the two sets hold the same elements. @return as cove_set_intersects(). */
cove_status_t cove_set_equals(cove_set_t* set, cove_set_t* other, bool* out);

/**
 * The smallest element of a set of numbers (int, float, double, decimal128, mixed numbers
 * compared by value) or dates; nulls are skipped.
 * @param out receives the element, or #COVE_TYPE_NULL when there is none.
 * @param out_found receives whether there was one (false for an empty set or only nulls).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_WRONG_TYPE (elements with no order
 *   for min: strings, bools...); #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_set_min(cove_set_t* set, cove_value_t* out, bool* out_found);

/** The greatest element; as cove_set_min(). */
cove_status_t cove_set_max(cove_set_t* set, cove_value_t* out, bool* out_found);

/**
 * The sum of a set of numbers, nulls skipped: an int for ints, a double when any element is a
 * float or double, a decimal128 when any is a decimal128. A set of floats or doubles sums to a
 * double and a set of decimal128 to a decimal128 also when empty; an empty set of ints (or of
 * mixed values) sums to the int 0.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_WRONG_TYPE (not numbers);
 *   #COVE_ERR_OUT_OF_RANGE (an int sum overflows 64 bits); #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_set_sum(cove_set_t* set, cove_value_t* out);

/**
 * The mean of a set of numbers, nulls skipped: a double, or a decimal128 when any element is one.
 * @param out receives the mean, or #COVE_TYPE_NULL when there is no element.
 * @param out_found receives whether there was one.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_WRONG_TYPE; #COVE_ERR_INVALIDATED;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_set_average(cove_set_t* set, cove_value_t* out, bool* out_found);

/**
 * The map property `property` of an object (string keys, kept in the order of their UTF-8
 * bytes).
 * @param out receives the map (+1); release it with cove_release().
 * @return as cove_object_get_list(), #COVE_ERR_WRONG_TYPE when the property is not a map.
 */
cove_status_t cove_object_get_map(cove_object_t* object, const char* property, cove_map_t** out);

/** The number of entries of a map. O(1). @return as cove_list_size(). */
cove_status_t cove_map_size(cove_map_t* map, size_t* out);

/**
 * The value of a key. O(log n).
 * @param key NUL-terminated UTF-8.
 * @param out receives the value (#COVE_TYPE_NULL for a null value, and when the key is absent).
 * @param out_found receives whether the map has the key.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, invalid UTF-8); #COVE_ERR_INVALIDATED;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_map_get(cove_map_t* map, const char* key, cove_value_t* out, bool* out_found);

/**
 * Sets the value of a key, adding the entry when it is new, inside a write. An embedded object
 * replaced is deleted.
 * @param key NUL-terminated UTF-8, without '.' and not starting with '$' (Realm's rule, which
 *   keeps key paths and query operators unambiguous).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (also for a key with '.', a leading '$', or too
 *   long); #COVE_ERR_WRONG_TYPE; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_FROZEN; #COVE_ERR_INVALIDATED;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_map_set(cove_map_t* map, const char* key, const cove_value_t* value);

/**
 * Removes the entry of a key, inside a write (also when the map has no such key). An embedded
 * value is deleted.
 * @param out_erased receives whether there was an entry; may be NULL.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_NOT_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_map_erase(cove_map_t* map, const char* key, bool* out_erased);

/**
 * The entry at `index` in key order (0 <= index < size), to walk a map. O(log n).
 * @param out_key receives the key; its bytes are also NUL-terminated (so it can be passed back as
 *   a key) and follow the lifetime rule of strings in values.
 * @param out_value receives the value.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_OUT_OF_RANGE; #COVE_ERR_INVALIDATED;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_map_get_at(cove_map_t* map, size_t index, cove_string_t* out_key, cove_value_t* out_value);

/**
 * Creates an embedded object as the value of a key of a map of an embedded class, inside a
 * write, every property at its default; the object it replaces is deleted.
 * @param out receives the new object (+1).
 * @return as cove_map_set(), and #COVE_ERR_WRONG_TYPE when the map is not of an embedded class.
 */
cove_status_t cove_map_set_embedded(cove_map_t* map, const char* key, cove_object_t** out);

/**
 * Creates an embedded object as the value of a single link property to an embedded class
 * ("Toy?"), inside a write, every property at its default. The object it replaces is deleted;
 * setting the property to null with cove_object_set() deletes it too. An embedded object lives
 * as long as its parent holds it, and is deleted with its parent.
 * @param parent the object that will own it.
 * @param out receives the new object (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_NOT_FOUND (no such property);
 *   #COVE_ERR_WRONG_TYPE (not a single link to an embedded class; collections use
 *   cove_list_insert_embedded() and cove_map_set_embedded()); #COVE_ERR_NOT_IN_WRITE;
 *   #COVE_ERR_FROZEN; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_create_embedded(cove_object_t* parent, const char* property, cove_object_t** out);

/* ------------------------------------------------------------------------------------------ */
/* Queries and results                                                                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * A #cove_results_t is the objects of a class that a query selects (cove_query()), the elements
 * of a list or set (cove_list_as_results(), cove_set_as_results()) or the objects linking to an
 * object (cove_object_get_backlinks()), narrowed, ordered and thinned by a chain of
 * cove_results_filter(), cove_results_sort() and cove_results_distinct(). Queries are RQL, as
 * docs/query-language.md describes: the Realm Query Language with Cove's decisions (unescaped
 * string literals, Unicode [c] and [d], OFFSET beside LIMIT...). Rules shared by every function of
 * this section:
 *
 * - Results are live: every read (count, element, aggregate, JSON...) runs on the realm's current
 *   version, and on its thread it sees the uncommitted writes of a write in progress; after a
 *   commit, a cancel or a refresh the next read shows the new state. The matches are computed
 *   again only when the version or the write changed since the last read of the same results, so
 *   reading element after element costs one evaluation. A frozen results handle
 *   (cove_results_freeze()) keeps the version it was frozen at.
 * - A function that makes results (cove_query(), cove_results_filter(), cove_results_sort(),
 *   cove_results_distinct(), cove_results_thaw(), cove_object_get_backlinks()) runs them once
 *   before returning, so that every error of a query, of its syntax or of its meaning, comes back
 *   from that call; it costs the query's evaluation, which the first read then reuses.
 * - Errors of a query: #COVE_ERR_QUERY_SYNTAX for text that does not parse, the message naming
 *   the query, the position, what was expected and what was found (e.g. "expected a value at
 *   position 6"); #COVE_ERR_INVALID_ARGUMENT for a query that parses but names an unknown
 *   property, compares values of types that do not compare (a string with an int, a list of
 *   objects or backlinks with null, a collection with another collection), takes an aggregate of
 *   what has none (`tags.@sum` of strings, `dogs.@avg` without a property of the objects), uses
 *   `.@type` on a value that is not mixed or with an unknown type name (names: `'int'`,
 *   `'numeric'`, `'string'`...), misuses an operator, or uses an argument that is missing (`$2`
 *   with two arguments) or of the wrong type.
 * - Arguments: `args` holds `n_args` values bound to `$0` ... `$(n_args-1)` (also `%@` in order,
 *   and `$Kn` when the value is a string naming a key path). Each is checked as a value passed to
 *   cove_object_set() is (type tag, UTF-8, timestamp): #COVE_ERR_INVALID_ARGUMENT naming
 *   `args[i]`. `args` may be NULL when `n_args` is 0. A list argument (`IN $0`) cannot be passed
 *   from C: write the list in the text (`age IN {1, 2, 3}`).
 * - Elements: results of a class, of a list or set of objects, and of backlinks hold objects
 *   (cove_results_get_object(), cove_results_get_keys(); cove_results_get_value() gives them as
 *   #COVE_TYPE_LINK values). Results of a list or set of values hold values
 *   (cove_results_get_value() only; `self` names the element in their queries, sorts and
 *   distincts: `self > 2`).
 * - Handles: results keep their realm handle alive. NULL or a handle of another kind gives
 *   #COVE_ERR_INVALID_ARGUMENT naming the argument and both kinds. Once the realm is closed every
 *   read gives #COVE_ERR_CLOSED; once the owner of a list or set the results read is deleted,
 *   #COVE_ERR_INVALIDATED.
 * - Strings and binaries handed out follow the rule of #cove_value_t: valid until the next call
 *   on that realm that writes, refreshes, delivers or closes, or until the realm and every handle
 *   made from it are released. Text handed out (JSON, plans) is the caller's: cove_free() it.
 * - Threads: as the realm the results come from; a frozen results handle may be read by any
 *   number of threads at once.
 */

/**
 * The objects of a class that a query selects.
 * @param realm an open realm.
 * @param class_name NUL-terminated UTF-8: a class of the realm's schema.
 * @param rql the query, NUL-terminated UTF-8: a predicate (`TRUEPREDICATE` for every object)
 *   optionally followed by SORT, DISTINCT, LIMIT and OFFSET, e.g.
 *   "age > $0 AND name BEGINSWITH[c] $1 SORT(age DESC) LIMIT(10)".
 * @param args the values of `$0`...; may be NULL when `n_args` is 0.
 * @param n_args the number of values in `args`.
 * @param out receives the results (+1); release them with cove_release().
 * @return #COVE_OK;
 *   #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm, NULL class_name, rql or out, invalid
 *   UTF-8, NULL args with n_args > 0, a bad argument value, and the query's semantic errors);
 *   #COVE_ERR_QUERY_SYNTAX; #COVE_ERR_NOT_FOUND (unknown class); #COVE_ERR_CLOSED.
 * Complexity: the query's evaluation: O(n) in the class's objects for a scan, O(log n + m) when
 *   the first condition is an equality or IN on an indexed property or the primary key (see
 *   cove_results_explain()), plus O(m log m) for a sort of m matches.
 */
cove_status_t cove_query(cove_realm_t* realm, const char* class_name, const char* rql,
                         const cove_value_t* args, size_t n_args, cove_results_t** out);

/**
 * The matches of `results` that also satisfy a query (chaining: `results` is not changed). The
 * query's SORT, DISTINCT, LIMIT and OFFSET apply after the stages of `results`.
 * @param results results of any kind; for results of values the query names the element `self`.
 * @param rql, args, n_args as for cove_query().
 * @param out receives the new results (+1), of the same kind and realm as `results`.
 * @return as cove_query() (without #COVE_ERR_NOT_FOUND), and #COVE_ERR_INVALIDATED when the
 *   owner of the list or set was deleted.
 */
cove_status_t cove_results_filter(cove_results_t* results, const char* rql, const cove_value_t* args,
                                  size_t n_args, cove_results_t** out);

/**
 * The results sorted by a key path, stably: ties keep their order, ascending or descending. Nulls
 * come first ascending; strings compare by their UTF-8 bytes. Sorting again makes the new key the
 * primary one.
 * @param key_path NUL-terminated UTF-8: a property, or a path through to-one links
 *   ("owner.name"); `self` for results of values.
 * @param ascending true for ascending order.
 * @param out receives the new results (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind, invalid UTF-8, an unknown
 *   property, a collection property); #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 * Complexity: O(m log m) for m matches, at the first read after each change.
 */
cove_status_t cove_results_sort(cove_results_t* results, const char* key_path, bool ascending,
                                cove_results_t** out);

/**
 * The first match of each distinct value of a key path, in the order of `results`.
 * @param key_path as for cove_results_sort().
 * @param out receives the new results (+1).
 * @return as cove_results_sort().
 */
cove_status_t cove_results_distinct(cove_results_t* results, const char* key_path, cove_results_t** out);

/**
 * The elements of a list as results, in list order: objects for a list of objects, values
 * otherwise. They follow the list: an element added or removed shows at the next read.
 * @param out receives the results (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind); #COVE_ERR_INVALIDATED (the
 *   list's owner was deleted); #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_as_results(cove_list_t* list, cove_results_t** out);

/**
 * The elements of a set as results, in the set's order (by value). As cove_list_as_results().
 */
cove_status_t cove_set_as_results(cove_set_t* set, cove_results_t** out);

/**
 * The objects of another class that link to an object through a backlinks property
 * ("@links(Person.dogs)": the Person objects whose `dogs` holds this object), as results of that
 * class, in object-key (creation) order; filter, sort and read them like any results. Each link
 * counts, as in Realm: an object whose list holds this one twice is there twice (one after the
 * other), and once after one of the two links is removed. Once the object is deleted, nothing
 * links to it and the results are empty.
 * @param object the object linked to.
 * @param property NUL-terminated UTF-8: a backlinks property of the object's class.
 * @param out receives the results (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind, invalid UTF-8);
 *   #COVE_ERR_NOT_FOUND (no such property); #COVE_ERR_WRONG_TYPE (not a backlinks property);
 *   #COVE_ERR_INVALIDATED (the object was deleted); #COVE_ERR_CLOSED.
 * Complexity: O(k log n) for k linking objects at each evaluation, before any filter.
 */
cove_status_t cove_object_get_backlinks(cove_object_t* object, const char* property, cove_results_t** out);

/**
 * The number of matches.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind); #COVE_ERR_INVALIDATED;
 *   #COVE_ERR_CLOSED.
 * Complexity: the query's evaluation after a change, O(1) otherwise.
 */
cove_status_t cove_results_count(cove_results_t* results, size_t* out);

/**
 * The object at `index` (0 <= index < count) of results of objects.
 * @param out receives the object (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_OUT_OF_RANGE (the message names the
 *   index and the count); #COVE_ERR_WRONG_TYPE for results of values (use
 *   cove_results_get_value()); #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_get_object(cove_results_t* results, size_t index, cove_object_t** out);

/**
 * The element at `index` (0 <= index < count) as a value: the value itself for results of values,
 * a #COVE_TYPE_LINK value (cove_object_from_link()) for results of objects.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_OUT_OF_RANGE; #COVE_ERR_INVALIDATED;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_get_value(cove_results_t* results, size_t index, cove_value_t* out);

/**
 * The object keys of up to `count` matches from `start`, for reading many objects in one call
 * (cove_object_get_by_object_key(), or without a handle an object, cove_object_get_by_keys()).
 * Results of objects only.
 * @param start the first match (0 <= start <= count of the results; start == count gives none).
 * @param count the capacity of `out_keys`.
 * @param out_keys receives the keys, in results order; may be NULL when `count` is 0.
 * @param out_n receives how many keys were written: min(count, results count - start).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind results, NULL out_n, NULL
 *   out_keys with count > 0); #COVE_ERR_OUT_OF_RANGE (start past the end); #COVE_ERR_WRONG_TYPE
 *   for results of values; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_get_keys(cove_results_t* results, size_t start, size_t count,
                                    int64_t* out_keys, size_t* out_n);

/**
 * The smallest value of a property over the matches: numbers (compared by value across int,
 * float, double and decimal128) or dates; nulls are skipped.
 * @param property NUL-terminated UTF-8: a property of the objects, or a path through to-one
 *   links; NULL for results of values (the elements themselves).
 * @param out receives the value, or #COVE_TYPE_NULL when there is none.
 * @param out_found receives whether there was one (false for no matches, or only nulls).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind results, NULL out or
 *   out_found, invalid UTF-8, an unknown property or a collection, a NULL property for results
 *   of objects, a property for results of values); #COVE_ERR_WRONG_TYPE (values that are neither
 *   numbers nor dates: strings, bools...); #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_min(cove_results_t* results, const char* property, cove_value_t* out, bool* out_found);

/** The greatest value of a property over the matches; as cove_results_min(). */
cove_status_t cove_results_max(cove_results_t* results, const char* property, cove_value_t* out, bool* out_found);

/**
 * The sum of a numeric property over the matches, nulls skipped: an int for ints, a double when
 * any value is a float or double, a decimal128 when any is a decimal128; with no matches, zero of
 * the property's type.
 * @param property as for cove_results_min().
 * @return as cove_results_min(), #COVE_ERR_WRONG_TYPE for values that are not numbers, and
 *   #COVE_ERR_OUT_OF_RANGE when an int sum overflows 64 bits.
 */
cove_status_t cove_results_sum(cove_results_t* results, const char* property, cove_value_t* out);

/**
 * The mean of a numeric property over the matches, nulls skipped: a double, or a decimal128 when
 * any value is one.
 * @param out receives the mean, or #COVE_TYPE_NULL when there is no value.
 * @param out_found receives whether there was one.
 * @return as cove_results_sum().
 */
cove_status_t cove_results_average(cove_results_t* results, const char* property, cove_value_t* out, bool* out_found);

/**
 * Frozen results: the same query over a frozen realm of the results' current version (as
 * cove_freeze() makes), readable from any thread. They pin that version until released. Freezing
 * frozen results returns them again (with one more reference).
 * @param out receives the frozen results (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE inside a write (commit or
 *   cancel first); #COVE_ERR_INVALIDATED (the list's or set's owner was deleted);
 *   #COVE_ERR_TOO_MANY_VERSIONS; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_freeze(cove_results_t* results, cove_results_t** out);

/**
 * Live results from frozen ones: the same query, sort and distinct over `live`, a live realm of
 * the same file, at its current version (a list's or set's results follow the same property of
 * the same object there).
 * @param frozen the results to thaw (live ones work too).
 * @param live a live realm of the same file.
 * @param out receives the live results (+1), or NULL when the owner of their list or set no
 *   longer exists in `live` (still #COVE_OK, as cove_object_thaw() answers for a deleted object).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL, wrong kind, a frozen `live`);
 *   #COVE_ERR_NOT_FOUND (the class is not in `live`'s schema); the errors of the query on
 *   `live`; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_thaw(cove_results_t* frozen, cove_realm_t* live, cove_results_t** out);

/**
 * Whether the results can still be read: false once their realm is closed, or once the owner of
 * the list or set they read was deleted.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT.
 */
cove_status_t cove_results_is_valid(cove_results_t* results, bool* out);

/**
 * The matches as a JSON array: objects as objects of their properties (as the CLI's dump writes
 * them), values as JSON values.
 * @param out_json receives NUL-terminated UTF-8; free it with cove_free().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_to_json(cove_results_t* results, char** out_json);

/**
 * How the results are computed, for a person reading it: the source (a scan of the class, a
 * primary-key or secondary index lookup with its number of candidates, a list's elements) and
 * each stage after it, e.g. "secondary index on Person.age (1 lookups, 2 candidates), then filter
 * age == 25 AND name BEGINSWITH 'd'". The wording may change between versions. Runs the query if
 * it has not run on the current version.
 * @param out_text receives NUL-terminated UTF-8; free it with cove_free().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_explain(cove_results_t* results, char** out_text);

/* ------------------------------------------------------------------------------------------ */
/* Notifications                                                                               */
/* ------------------------------------------------------------------------------------------ */

/*
 * Results, lists, sets, maps and objects can be observed: a callback hears what commits (of this
 * realm, of another realm of the same file on any thread, or of another process) changed. Rules
 * shared by every function of this section:
 *
 * - Delivery: callbacks run only inside cove_deliver(), cove_refresh() and cove_begin_write()
 *   (which delivers the changes due before its write starts, when the realm has observers;
 *   initial calls still due wait for the next cove_deliver() or cove_refresh(), so that they
 *   show the state after the write), on the thread that
 *   calls them, never inside a write. cove_deliver() and cove_refresh() both advance the realm
 *   to the newest version and then deliver what happened up to it. The commits since a callback's last call are merged into one change; a
 *   commit that changes nothing a callback observes calls nothing, nor does a net no-op.
 * - The first call: a results, list, set or map callback is called once with the initial state
 *   (cove_changes_is_initial() true, nothing else set) at the first delivery after it was
 *   registered, then after each change. An object callback has no initial call. A callback
 *   registered during a delivery (from inside another callback) is first called by the next one.
 * - Key paths (`key_paths`, `n_key_paths`): NULL (with 0) observes every property of the
 *   observed objects and of the objects they link to, through links, lists, sets and maps, up
 *   to four levels deep. An array of dotted paths from the observed objects' class
 *   ("name", "dog.name", "toys.brand") observes exactly those properties, along the whole path;
 *   insertions and deletions of a collection's own rows are always reported. A non-NULL array
 *   with `n_key_paths` 0 observes insertions and deletions only. The filter is exact per
 *   callback, whatever other callbacks on the same collection observe. Each path must name
 *   properties (#COVE_ERR_INVALID_ARGUMENT otherwise, naming the path, the class and the
 *   property); a collection of values takes no key paths but the empty array.
 * - Change objects (#cove_collection_changes_t, #cove_map_changes_t, #cove_object_changes_t)
 *   are lent to the callback: they, and every array, string and value read from them, are valid
 *   during that call only. Copy what you keep. A change object retained past its call reads as
 *   empty (counts 0, NULL strings, #COVE_ERR_INVALIDATED from the value accessors). Accessors
 *   given NULL or a handle of another kind answer 0, false or NULL.
 * - Tokens: each registration returns a #cove_token_t (+1), a handle that keeps its realm handle
 *   alive. cove_token_invalidate() or cove_release() of the token stops the observation: no call
 *   starts after it returns. Both may be called from inside the token's own callback (the
 *   current call finishes normally) or from any other callback.
 * - User data: `free_userdata` (may be NULL) is called with `userdata` exactly once, when the
 *   token is invalidated or released, whichever comes first; from inside the token's own
 *   callback, right after that call returns. It runs on the thread that invalidated or released
 *   the token (or that ran the callback). Closing the realm, a deletion or an error stops the
 *   calls but does not free the user data: release the token. A registration that fails does
 *   not call it: `userdata` stays the caller's.
 * - Errors while computing changes (results of a list or set whose owner was deleted, a change
 *   record that cannot be read, an I/O error) reach the callback once, with cove_changes_error(),
 *   cove_map_changes_error() or cove_object_changes_error() non-NULL; that observation then
 *   stops (its token still has to be released).
 * - Registering fails with #COVE_ERR_IN_WRITE inside a write, #COVE_ERR_FROZEN on a frozen
 *   handle (it never changes), #COVE_ERR_INVALIDATED on a deleted object or a collection whose
 *   owner was deleted, #COVE_ERR_CLOSED once the realm is closed, #COVE_ERR_INVALID_ARGUMENT
 *   for NULL or wrong-kind handles, a NULL callback or out, a NULL `key_paths` with
 *   `n_key_paths` > 0, a NULL or invalid UTF-8 path, and a path that names no property.
 * - Threads: as the realm; the callback runs on the thread that delivers. A token released from
 *   another thread while its realm's thread delivers may still see the call in progress finish;
 *   its user data is freed after that call.
 */

/**
 * The changes a results, list or set callback receives.
 * @param userdata the pointer given at registration.
 * @param changes the changes, lent for this call only (see above).
 */
typedef void (*cove_collection_cb)(void* userdata, const cove_collection_changes_t* changes);

/**
 * The changes a map callback receives, by key.
 * @param userdata the pointer given at registration.
 * @param changes the changes, lent for this call only.
 */
typedef void (*cove_map_cb)(void* userdata, const cove_map_changes_t* changes);

/**
 * The changes an object callback receives: the properties written, or the object's deletion.
 * @param userdata the pointer given at registration.
 * @param changes the changes, lent for this call only.
 */
typedef void (*cove_object_cb)(void* userdata, const cove_object_changes_t* changes);

/**
 * Observes results: the initial call at the next delivery, then, after each commit that
 * changed the matches or (as the key paths say) their objects, the rows deleted (old indices),
 * inserted and modified (new indices), ascending. A row whose position among the others
 * changed (a sort key written) is reported as deleted and inserted; a row inserted is never
 * also modified; writing a value equal to the old one counts as a modification.
 * @param results live results of any kind (a class's objects, a list's or set's elements,
 *   backlinks), filtered, sorted or distinct.
 * @param key_paths, n_key_paths the properties that count as modifications (see above); results
 *   of values take none (NULL, or an empty array).
 * @param callback called as described; not NULL.
 * @param userdata passed to every call; may be NULL.
 * @param free_userdata called with `userdata` once the token is invalidated or released; may be
 *   NULL.
 * @param out receives the token (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_INVALIDATED (the owner of the list or set was deleted); #COVE_ERR_CLOSED.
 * Complexity: each delivery that touches the results' classes evaluates them again and diffs
 *   the rows, O(n log n) for n rows, plus the key paths' reads for the rows that stayed.
 */
cove_status_t cove_results_observe(cove_results_t* results, const char* const* key_paths, size_t n_key_paths,
                                   cove_collection_cb callback, void* userdata, cove_free_fn free_userdata,
                                   cove_token_t** out);

/**
 * Observes a list: the initial call, then insertions, deletions and modifications (an element
 * replaced with cove_list_set(), or for a list of objects an object changed as the key paths
 * say), and moves (cove_list_move()): cove_changes_moves() gives old and new index pairs, and
 * each moved element is also deleted at its old index and inserted at its new one (so the
 * deletions and insertions alone turn the old list into the new), never modified.
 * cove_list_clear() sets cove_changes_cleared() (and deletes every old index). When the list's owner is deleted the
 * callback gets every old index as deleted with cove_changes_root_deleted() true, once; no call
 * follows.
 * @param list a live list.
 * @param key_paths, n_key_paths for a list of objects, paths from its class; a list of values
 *   takes none.
 * @param callback, userdata, free_userdata, out as cove_results_observe().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_INVALIDATED (the owner was deleted); #COVE_ERR_CLOSED.
 */
cove_status_t cove_list_observe(cove_list_t* list, const char* const* key_paths, size_t n_key_paths,
                                cove_collection_cb callback, void* userdata, cove_free_fn free_userdata,
                                cove_token_t** out);

/**
 * Observes a set: as cove_list_observe(), with indices in the set's order (by value) and no
 * moves.
 * @return as cove_list_observe().
 */
cove_status_t cove_set_observe(cove_set_t* set, const char* const* key_paths, size_t n_key_paths,
                               cove_collection_cb callback, void* userdata, cove_free_fn free_userdata,
                               cove_token_t** out);

/**
 * Observes a map, by key: the initial call (cove_map_changes_is_initial()), then the keys that
 * went away, came, and whose value was written (or, for a map of objects, whose object changed
 * as the key paths say), each in the order of their UTF-8 bytes. When the owner is deleted, every
 * old key is reported deleted with cove_map_changes_root_deleted() true, once.
 * @param map a live map.
 * @param key_paths, n_key_paths for a map of objects, paths from its class; a map of values
 *   takes none.
 * @param callback called as described; not NULL.
 * @param userdata, free_userdata, out as cove_results_observe().
 * @return as cove_list_observe().
 */
cove_status_t cove_map_observe(cove_map_t* map, const char* const* key_paths, size_t n_key_paths,
                               cove_map_cb callback, void* userdata, cove_free_fn free_userdata,
                               cove_token_t** out);

/**
 * Observes an object: after each commit that wrote properties of it (a value equal to the old
 * one too) or, as the key paths say, of objects it links to, the callback gets the changed
 * properties in schema order with their values at the previous call and now. A change along a
 * link (`dog.name`, or any linked object without key paths) is a change of the link property
 * (`dog`). A list, set or map property is listed when it changed, without values. When the
 * object is deleted the callback gets cove_object_changes_is_deleted() true, once; no call
 * follows. There is no initial call.
 * @param object a live object.
 * @param key_paths, n_key_paths paths from the object's class (see above); an empty array
 *   observes only the deletion.
 * @param callback called as described; not NULL.
 * @param userdata, free_userdata, out as cove_results_observe().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_INVALIDATED (the object was deleted); #COVE_ERR_CLOSED.
 */
cove_status_t cove_object_observe(cove_object_t* object, const char* const* key_paths, size_t n_key_paths,
                                  cove_object_cb callback, void* userdata, cove_free_fn free_userdata,
                                  cove_token_t** out);

/**
 * Stops an observation: no call of its callback starts after this returns, and its
 * `free_userdata` runs now (or, called from inside that callback, when the callback returns).
 * Invalidating again does nothing. The token handle itself stays valid until cove_release()
 * (which also stops the observation, if this was not called).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind token).
 */
cove_status_t cove_token_invalidate(cove_token_t* token);

/**
 * Whether this is the initial call of a results, list or set callback (nothing else is set).
 * False for NULL.
 */
bool cove_changes_is_initial(const cove_collection_changes_t* changes);

/**
 * The rows that went away, as indices in the collection before the change, ascending.
 * @param out receives the array, or NULL when there are none; may be NULL (to get the count).
 * @return the number of indices.
 */
size_t cove_changes_deletions(const cove_collection_changes_t* changes, const size_t** out);

/**
 * The rows that came, as indices in the collection after the change, ascending.
 * @param out as cove_changes_deletions(). @return the number of indices.
 */
size_t cove_changes_insertions(const cove_collection_changes_t* changes, const size_t** out);

/**
 * The rows that stayed and changed, as indices after the change, ascending.
 * @param out as cove_changes_deletions(). @return the number of indices.
 */
size_t cove_changes_modifications(const cove_collection_changes_t* changes, const size_t** out);

/**
 * The same rows as cove_changes_modifications(), in the same order, as indices before the
 * change.
 * @param out as cove_changes_deletions(). @return the number of indices.
 */
size_t cove_changes_modifications_old(const cove_collection_changes_t* changes, const size_t** out);

/**
 * The elements a list moved (cove_list_move()): `out_from[i]` is an old index, `out_to[i]` the
 * new one, in ascending new index. Each `out_from[i]` is also among the deletions and each
 * `out_to[i]` among the insertions: a consumer that does not animate moves can ignore them.
 * Always none for results and sets.
 * @param out_from, out_to receive the two arrays (NULL when there are none); either may be NULL.
 * @return the number of moves.
 */
size_t cove_changes_moves(const cove_collection_changes_t* changes, const size_t** out_from,
                          const size_t** out_to);

/**
 * Whether a list or set was emptied by a clear (cove_list_clear(), cove_set_clear()) in one of
 * the merged commits: the deletions then name every old
 * index, and the insertions every element it holds now, those added after the clear included
 * (in the same commit or a later one); no element is a modification. False for NULL.
 */
bool cove_changes_cleared(const cove_collection_changes_t* changes);

/**
 * Whether the object owning the list or set was deleted: the deletions then name every old
 * index, and no call follows. False for results and NULL.
 */
bool cove_changes_root_deleted(const cove_collection_changes_t* changes);

/**
 * Why the observation stopped: NULL normally; a message when the changes could not be computed
 * (the observation is over, no call follows, and the other accessors give nothing). Valid
 * during the call only.
 */
const char* cove_changes_error(const cove_collection_changes_t* changes);

/** Whether this is the initial call of a map callback. False for NULL. */
bool cove_map_changes_is_initial(const cove_map_changes_t* changes);

/**
 * The keys that went away, in the order of their UTF-8 bytes.
 * @param out receives the array of keys (NULL when there are none); may be NULL. Each key's bytes
 *   are also NUL-terminated, so `data` can be passed back as a key.
 * @return the number of keys.
 */
size_t cove_map_changes_deletions(const cove_map_changes_t* changes, const cove_string_t** out);

/** The keys that came; as cove_map_changes_deletions(). */
size_t cove_map_changes_insertions(const cove_map_changes_t* changes, const cove_string_t** out);

/** The keys that stayed and whose value was written or whose object changed; as cove_map_changes_deletions(). */
size_t cove_map_changes_modifications(const cove_map_changes_t* changes, const cove_string_t** out);

/**
 * Whether the object owning the map was deleted: the deletions then name every old key, and no
 * call follows. False for NULL.
 */
bool cove_map_changes_root_deleted(const cove_map_changes_t* changes);

/** Why the map's observation stopped, or NULL; as cove_changes_error(). */
const char* cove_map_changes_error(const cove_map_changes_t* changes);

/**
 * Whether the observed object was deleted (then the count is 0, and no call follows). False for
 * NULL.
 */
bool cove_object_changes_is_deleted(const cove_object_changes_t* changes);

/** The number of changed properties; 0 for a deletion, an error and NULL. */
size_t cove_object_changes_count(const cove_object_changes_t* changes);

/**
 * The name of the `i`th changed property (0 <= i < count), NUL-terminated UTF-8, valid during the
 * call only. NULL for an index out of range and NULL changes.
 */
const char* cove_object_changes_property(const cove_object_changes_t* changes, size_t i);

/**
 * The value the `i`th changed property had at the callback's previous call (at registration,
 * for the first one). A link reads as #COVE_TYPE_LINK; strings and binaries are valid during the
 * call only.
 * @param out receives the value.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind changes, NULL out);
 *   #COVE_ERR_OUT_OF_RANGE (i >= count); #COVE_ERR_WRONG_TYPE for a list, set or map property
 *   (its change carries no values: read the collection from the object);
 *   #COVE_ERR_INVALIDATED after the call returned.
 */
cove_status_t cove_object_changes_old_value(const cove_object_changes_t* changes, size_t i, cove_value_t* out);

/** The value the `i`th changed property has now; as cove_object_changes_old_value(). */
cove_status_t cove_object_changes_new_value(const cove_object_changes_t* changes, size_t i, cove_value_t* out);

/**
 * Why the object's observation stopped: NULL normally; a message when its changes could not be
 * computed (the count is then 0, is_deleted false, and no call follows). Valid during the call
 * only.
 */
const char* cove_object_changes_error(const cove_object_changes_t* changes);

/**
 * A file descriptor that becomes readable when a commit (of any realm of the file, on any
 * thread or in any process, this one included) made a version newer than the one the realm last
 * delivered, and the realm's notification thread has computed its results observers' change
 * sets for it, or when the wait of a cove_results_subscribe() ended: give it to poll, epoll,
 * select or an event loop (asyncio's add_reader, libuv),
 * then call cove_deliver() (or cove_refresh()), which advances, delivers and drains it. Only wait for it to be
 * readable; never read, write or close it. The first call (or the first results observer)
 * starts the notification thread; later calls return the same descriptor. It belongs to the
 * realm and is closed with it (cove_close() or the last cove_release()).
 * @param out_fd receives the descriptor.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm, NULL out_fd);
 *   #COVE_ERR_FROZEN (a frozen realm never changes); #COVE_ERR_IO (no pipe or thread could be
 *   made); #COVE_ERR_CLOSED.
 */
cove_status_t cove_notification_fd(cove_realm_t* realm, int* out_fd);

/**
 * Advances the realm to the newest version (as Realm's autorefresh does when its run loop wakes:
 * the same as cove_refresh()), then calls the callbacks that have something to report: initial
 * calls due, and the changes of the commits since each callback's last call, whichever thread
 * or process made them, and the callbacks of cove_results_subscribe() whose wait ended (after
 * the notifications). Strings and binaries handed out
 * earlier by this realm's handles are invalidated (as the rule of #cove_value_t says). Called
 * from inside a callback, it returns at once.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE inside a write (nothing is
 *   delivered inside one); #COVE_ERR_FROZEN; #COVE_ERR_CLOSED; #COVE_ERR_IO or
 *   #COVE_ERR_CORRUPT when the commits' change records cannot be read.
 * Threads: the callbacks run on the calling thread, before this returns.
 */
cove_status_t cove_deliver(cove_realm_t* realm);

/**
 * Waits until a version newer than the realm's exists (a commit of any realm of the file, in
 * any thread or process), or the timeout passes. It neither advances the realm nor delivers:
 * call cove_refresh() next.
 * @param timeout_ms the longest wait in milliseconds: 0 checks without waiting, -1 waits
 *   forever (as does a wait longer than 10^12 ms).
 * @param out_changed receives whether a newer version exists; may be NULL.
 * @return #COVE_OK (also on timeout); #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm, a
 *   timeout below -1); #COVE_ERR_IN_WRITE (it would wait for itself); #COVE_ERR_FROZEN;
 *   #COVE_ERR_CLOSED.
 * Threads: blocks the calling thread; polls the file's commit counter with a backoff from 50 microseconds
 *   to 2 ms.
 */
cove_status_t cove_wait_for_change(cove_realm_t* realm, int64_t timeout_ms, bool* out_changed);

/* ------------------------------------------------------------------------------------------ */
/* Sectioned results and projections                                                           */
/* ------------------------------------------------------------------------------------------ */

/*
 * Sectioned results cut results of objects into sections by a key: the value of a key path
 * (cove_results_sectioned()) or what a C callback says of each object
 * (cove_results_sectioned_by()). Sections are ordered by key (ascending, unless
 * cove_results_sectioned() is asked for descending); rows within a section keep the results'
 * order. A section (#cove_section_t) follows its key, not its position: it reads the
 * rows whose key is its own, wherever that section is now, and none while no row has it.
 * Projections (#cove_projection_t) map names of the caller's choosing onto key paths of one root
 * object ("name" onto "firstName", "friendNames" onto "friends.firstName"); reads go through to
 * the object and observing reports changes under the projected names. A name that reaches many
 * values through a list or set ("friends.firstName") has no live results of its own: its values
 * are copied into a caller's buffer by cove_projection_get_values(); a name that maps onto a list
 * or set of the root itself also has live results (cove_projection_get_list()). Rules shared by
 * every function of this section:
 *
 * - Handles: #cove_sectioned_results_t, #cove_section_t and #cove_projection_t are handles as
 *   every other (+1 through `out`, cove_release()); each keeps its realm handle alive, a section
 *   keeps its sectioned results alive. Frozen sectioned results (cove_sectioned_freeze()) and
 *   their sections may be read by any number of threads at once; cove_is_frozen() answers for
 *   all three kinds.
 * - Keys: a key is any #cove_value_t (a key path's null is a key like another). Sections are
 *   ordered as the query language's SORT orders values: null first, numbers by value across
 *   types, strings by their UTF-8 bytes.
 * - Reading: sectioned results are lazy and live, like results: each read shows the realm's
 *   current version (and the uncommitted changes of a write in progress on the realm's thread).
 *   The sections read at one version are kept while the realm stays on it outside a write, so
 *   reading the rows of a section one by one keys each row once per version
 *   (cove_sectioned_get_section() keys them once more, to make the section).
 * - The key callback (#cove_section_key_fn) runs on the thread that reads the sectioned results
 *   (any cove_sectioned_ or cove_section_ read, cove_sectioned_get_section()) or delivers their
 *   notifications (cove_deliver(), cove_refresh(), cove_begin_write()), never on a thread of the
 *   library; for frozen sectioned results read by several threads at once it may run on several
 *   threads at once. It must give the same key for the same object at one version. From inside
 *   it, reading the sectioned results it keys (or their sections) fails with
 *   #COVE_ERR_INVALID_ARGUMENT; every other call is allowed (the object's properties, other
 *   results). Its `free_userdata` runs exactly once, on the thread that releases the last
 *   handle or token using the callback: the sectioned results, their sections, frozen copies
 *   and the tokens observing any of them.
 * - Change objects (#cove_sectioned_changes_t) are lent to the callback as the other change
 *   objects are (see "Notifications"): valid during the call only, empty afterwards; accessors
 *   given NULL or another kind answer 0, false or NULL. Tokens, user data, delivery, key paths
 *   and the errors of registering follow the rules of "Notifications".
 * - Threads: as the realm; reads of live handles on the realm's thread.
 */

/**
 * Gives the section key of one object.
 * @param userdata the pointer given to cove_results_sectioned_by().
 * @param object the object, lent for this call: valid until the callback returns (cove_retain()
 *   it to keep it longer). Read it with cove_object_get() and the other object functions.
 * @param out_key receives the key (set to #COVE_TYPE_NULL before the call). A string's or
 *   binary's bytes are copied when the callback returns: they need to live until then only.
 * @return #COVE_OK with `out_key` set; any other status fails the read that called it with
 *   #COVE_ERR_CALLBACK, whose message names the status and the object (during a delivery, the
 *   observers get that message from cove_sectioned_changes_error() instead). A key of an unknown
 *   type tag fails the same way.
 */
typedef cove_status_t (*cove_section_key_fn)(void* userdata, cove_object_t* object, cove_value_t* out_key);

/**
 * The changes a sectioned results or section callback receives, as index paths.
 * @param userdata the pointer given at registration.
 * @param changes the changes, lent for this call only.
 */
typedef void (*cove_sectioned_cb)(void* userdata, const cove_sectioned_changes_t* changes);

/**
 * Sections results of objects by the value of a key path: the results are sorted by the path
 * (rows with equal keys keep their order), then cut where the key changes. Runs the query once
 * before returning, so that its errors show here.
 * @param results live or frozen results of objects (a class's, backlinks, a list's or set's of
 *   objects), filtered, sorted or distinct.
 * @param key_path NUL-terminated UTF-8: a property of the objects, or a path through to-one links
 *   ("dog.name"); not a list, set or map.
 * @param ascending whether sections (and the sort) go in ascending key order.
 * @param out receives the sectioned results (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind results, NULL key_path or
 *   out, invalid UTF-8, a path that names no property or reaches a collection);
 *   #COVE_ERR_WRONG_TYPE for results of values; #COVE_ERR_INVALIDATED (the owner of the list or
 *   set was deleted); #COVE_ERR_CLOSED.
 * Complexity: each read at a new version sorts and keys the rows, O(n log n).
 */
cove_status_t cove_results_sectioned(cove_results_t* results, const char* key_path, bool ascending,
                                     cove_sectioned_results_t** out);

/**
 * Sections results of objects by what a callback says of each: the results keep their own
 * order (sort them first to order the rows of each section), and sections go in ascending key
 * order. The callback is not called here: it runs at the first read, on the thread that reads.
 * @param results live or frozen results of objects.
 * @param key_fn gives each object's key (see #cove_section_key_fn and the rules above); not NULL.
 * @param userdata passed to every call; may be NULL.
 * @param free_userdata called with `userdata` once the sectioned results, their sections,
 *   frozen copies and tokens are all released; may be NULL. Not called when this fails.
 * @param out receives the sectioned results (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind results, NULL key_fn or out);
 *   #COVE_ERR_WRONG_TYPE for results of values; #COVE_ERR_CLOSED.
 * Complexity: each read at a new version calls the callback once per row.
 */
cove_status_t cove_results_sectioned_by(cove_results_t* results, cove_section_key_fn key_fn, void* userdata,
                                        cove_free_fn free_userdata, cove_sectioned_results_t** out);

/**
 * The number of sections (of keys that some row has).
 * @param out receives the count.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind sectioned, NULL out, called
 *   from inside their own key callback); #COVE_ERR_CALLBACK (the key callback failed);
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_sectioned_count(cove_sectioned_results_t* sectioned, size_t* out);

/**
 * The section at a position, as a handle that follows its key from now on: after later commits
 * it reads the rows whose key is its own, at whatever position their section then is.
 * @param index 0 <= index < cove_sectioned_count().
 * @param out receives the section (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_OUT_OF_RANGE (index past the last
 *   section); #COVE_ERR_CALLBACK; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 * Complexity: keys every row again (the sections' handle is made from the engine's own cut).
 */
cove_status_t cove_sectioned_get_section(cove_sectioned_results_t* sectioned, size_t index, cove_section_t** out);

/**
 * The key of a section. A string's or binary's bytes follow the rule of #cove_value_t.
 * @param out receives the key.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind section, NULL out).
 */
cove_status_t cove_section_key(cove_section_t* section, cove_value_t* out);

/**
 * The number of rows whose key is the section's now: 0 once no row has it.
 * @param out receives the count.
 * @return as cove_sectioned_count().
 */
cove_status_t cove_section_count(cove_section_t* section, size_t* out);

/**
 * The object at a row of the section now.
 * @param index 0 <= index < cove_section_count().
 * @param out receives the object (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_OUT_OF_RANGE (index past the last
 *   row); #COVE_ERR_CALLBACK; #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_section_get_object(cove_section_t* section, size_t index, cove_object_t** out);

/**
 * Frozen sectioned results: the results frozen at their current version (as
 * cove_results_freeze() makes them) and sectioned the same way, by the same key path or key
 * callback; readable from any thread. Freezing frozen sectioned results returns them again (with
 * one more reference).
 * @param out receives the frozen sectioned results (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE inside a write;
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_TOO_MANY_VERSIONS; #COVE_ERR_CLOSED.
 */
cove_status_t cove_sectioned_freeze(cove_sectioned_results_t* sectioned, cove_sectioned_results_t** out);

/**
 * Observes sectioned results: the initial call at the next delivery, then, after each commit
 * that changed them, the rows deleted (old index paths), inserted and modified (new index paths),
 * each ascending, and the sections inserted (new positions) and deleted (old positions). The
 * rows of an inserted or deleted section are not listed row by row. A row whose key changed
 * moves between sections as a deletion plus an insertion; a row that stayed in its section but
 * changed position there too. Apply a change as a table view does: delete rows (from the end),
 * delete sections, insert sections, insert rows, reload the modified rows.
 * @param sectioned live sectioned results.
 * @param key_paths, n_key_paths the properties that count as modifications, as for
 *   cove_results_observe(); a change of the key path the results are sectioned by always counts.
 *   With a key callback, list the properties it reads (or pass NULL): a key changed by a commit
 *   that changed nothing observed is seen at the next change that is.
 * @param callback called as described; not NULL.
 * @param userdata, free_userdata, out as cove_results_observe().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_CLOSED. When the changes cannot be computed (the key callback failed, the list's
 *   owner was deleted), the callback gets cove_sectioned_changes_error() once and no call
 *   follows.
 */
cove_status_t cove_sectioned_observe(cove_sectioned_results_t* sectioned, const char* const* key_paths,
                                     size_t n_key_paths, cove_sectioned_cb callback, void* userdata,
                                     cove_free_fn free_userdata, cove_token_t** out);

/**
 * Observes one section by its key: the initial call, then the rows of that key deleted, inserted
 * and modified as index paths of section 0. The section is always there for its observer: when
 * no row has the key any more, its rows are deletions; when rows have it again, they are
 * insertions (cove_sectioned_changes_sections_to_delete() and _to_insert() give none).
 * @param section a section of live sectioned results.
 * @param key_paths, n_key_paths, callback, userdata, free_userdata, out as
 *   cove_sectioned_observe().
 * @return as cove_sectioned_observe().
 */
cove_status_t cove_section_observe(cove_section_t* section, const char* const* key_paths, size_t n_key_paths,
                                   cove_sectioned_cb callback, void* userdata, cove_free_fn free_userdata,
                                   cove_token_t** out);

/** Whether this is the initial call of a sectioned callback (nothing else is set). False for NULL. */
bool cove_sectioned_changes_is_initial(const cove_sectioned_changes_t* changes);

/**
 * The rows that came, as index paths after the change, ascending (by section, then row); rows
 * of inserted sections are not listed.
 * @param out receives the array, or NULL when there are none; may be NULL (to get the count).
 * @return the number of index paths.
 */
size_t cove_sectioned_changes_insertions(const cove_sectioned_changes_t* changes, const cove_index_path_t** out);

/**
 * The rows that went away, as index paths before the change, ascending; rows of deleted
 * sections are not listed.
 * @param out as cove_sectioned_changes_insertions(). @return the number of index paths.
 */
size_t cove_sectioned_changes_deletions(const cove_sectioned_changes_t* changes, const cove_index_path_t** out);

/**
 * The rows that stayed in their section and changed, as index paths after the change, ascending.
 * @param out as cove_sectioned_changes_insertions(). @return the number of index paths.
 */
size_t cove_sectioned_changes_modifications(const cove_sectioned_changes_t* changes, const cove_index_path_t** out);

/**
 * The sections that appeared, as positions after the change, ascending.
 * @param out receives the array, or NULL when there are none; may be NULL.
 * @return the number of sections.
 */
size_t cove_sectioned_changes_sections_to_insert(const cove_sectioned_changes_t* changes, const size_t** out);

/**
 * The sections that disappeared, as positions before the change, ascending.
 * @param out as cove_sectioned_changes_sections_to_insert(). @return the number of sections.
 */
size_t cove_sectioned_changes_sections_to_delete(const cove_sectioned_changes_t* changes, const size_t** out);

/**
 * Why the observation stopped: NULL normally; a message when the changes could not be computed
 * (the key callback failed, say). No call follows, and the other accessors give nothing. Valid
 * during the call only.
 */
const char* cove_sectioned_changes_error(const cove_sectioned_changes_t* changes);

/**
 * A projection of an object: `names[i]` read through `key_paths[i]` from `root`. A key path is a
 * property of the root's class or a dotted path through links, lists and sets
 * ("firstName", "dog.name", "friends.firstName"); a path through a list or set reaches many
 * values.
 * @param root a live or frozen object; the projection reads it as it is at each call.
 * @param names, key_paths `n` NUL-terminated UTF-8 strings each, not NULL (unless `n` is 0) nor
 *   empty; each name once.
 * @param out receives the projection (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind root, NULL out, a NULL array
 *   with n > 0, a NULL, empty or invalid UTF-8 string, a name given twice, a key path that names
 *   no property); #COVE_ERR_INVALIDATED (the root was deleted); #COVE_ERR_CLOSED.
 */
cove_status_t cove_projection_new(cove_object_t* root, const char* const* names, const char* const* key_paths,
                                  size_t n, cove_projection_t** out);

/**
 * The value of a projected name whose key path reaches one value (a null when a link on the way
 * is null). A link reads as #COVE_TYPE_LINK; strings and binaries follow the rule of
 * #cove_value_t.
 * @param name NUL-terminated UTF-8: one of the projection's names.
 * @param out receives the value.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind projection, NULL name or
 *   out); #COVE_ERR_NOT_FOUND (not a projected name); #COVE_ERR_WRONG_TYPE (the path reaches a
 *   collection: read it with cove_projection_get_values()); #COVE_ERR_INVALIDATED (the root was
 *   deleted); #COVE_ERR_CLOSED.
 */
cove_status_t cove_projection_get(cove_projection_t* projection, const char* name, cove_value_t* out);

/**
 * Live results of a projected name that maps onto a list or set property of the root itself
 * (as cove_object_get_list() and cove_list_as_results() give them): its objects, or its values.
 * Results exist for nothing else: a path through a collection to other values
 * ("friends.firstName") is read with cove_projection_get_values(), and observed with
 * cove_projection_observe().
 * @param out receives the results (+1).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT; #COVE_ERR_NOT_FOUND (not a projected name);
 *   #COVE_ERR_WRONG_TYPE (one value, a map, or a path through a collection: the message names the
 *   function to use); #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_projection_get_list(cove_projection_t* projection, const char* name, cove_results_t** out);

/**
 * The values a projected name's key path reaches now, in order (a path through a list follows
 * the list's order): for "friends.firstName" each friend's first name (none for no friends); for
 * a path to one value, that value, as cove_projection_get() reads it.
 * @param name one of the projection's names.
 * @param out_values receives up to `capacity` values; strings and binaries follow the rule of
 *   #cove_value_t. May be NULL when `capacity` is 0.
 * @param capacity the room in `out_values`.
 * @param out_n receives how many values the path reaches, which may be more than `capacity`
 *   (then only the first `capacity` were written: call again with room for all).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind projection, NULL name or
 *   out_n, NULL out_values with capacity > 0); #COVE_ERR_NOT_FOUND (not a projected name);
 *   #COVE_ERR_INVALIDATED; #COVE_ERR_CLOSED.
 */
cove_status_t cove_projection_get_values(cove_projection_t* projection, const char* name, cove_value_t* out_values,
                                         size_t capacity, size_t* out_n);

/**
 * Observes a projection: after each commit that changed what a projected name reads (through
 * the whole key path: a friend's first name for "friends.firstName", but not the friend's last
 * name), the callback gets a #cove_object_changes_t whose properties are the projected names that
 * changed, in the projection's order, with their values at the previous call and now (a name
 * that reaches a collection is listed without values: #COVE_ERR_WRONG_TYPE from the value
 * accessors). Changes are found per property of the root along the observed paths, so names
 * whose paths start with the same property are listed together: with "friends.firstName" and
 * "friends.lastName" both observed, a friend's new last name lists both names. The
 * root's deletion is reported once (cove_object_changes_is_deleted()). No initial call. The token
 * keeps the projection alive: the projection handle may be released first.
 * @param names, n_names the projected names to observe; NULL (with 0) for every name; an empty
 *   array observes only the deletion.
 * @param callback called as described; not NULL.
 * @param userdata, free_userdata, out as cove_results_observe().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (also for a name the projection does not have);
 *   #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN; #COVE_ERR_INVALIDATED (the root was deleted);
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_projection_observe(cove_projection_t* projection, const char* const* names, size_t n_names,
                                      cove_object_cb callback, void* userdata, cove_free_fn free_userdata,
                                      cove_token_t** out);

/* ------------------------------------------------------------------------------------------ */
/* Checking a file                                                                             */
/* ------------------------------------------------------------------------------------------ */

/**
 * Compacts the file at `path` in place when no other handle, in this process or another, has
 * it open, and `should_compact` (when given) returns true: a compacted copy is written beside it
 * (`<path>.compacting`), flushed, and renamed over it, so that a crash leaves the old file or the
 * new one, never neither. No other handle can open the file meanwhile.
 * @param path NUL-terminated; an existing Cove file (an empty or missing one is created).
 * @param key, key_size the 64-byte key of an encrypted file, which stays encrypted with it;
 *   NULL and 0 for a plain file.
 * @param should_compact asked with the file's numbers once the file is known to be free; NULL
 *   compacts whenever it is.
 * @param userdata passed to `should_compact`.
 * @param out_compacted receives whether the file was compacted (false: another handle has it
 *   open, or `should_compact` said no). May be NULL.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL path, a key not of 64 bytes);
 *   #COVE_ERR_IO / #COVE_ERR_NO_SPACE (the copy is removed, the file left as it was);
 *   #COVE_ERR_CORRUPT, #COVE_ERR_FORMAT, #COVE_ERR_DECRYPTION as cove_open() reports them.
 * Threads: any; the callback runs on the calling thread.
 */
cove_status_t cove_compact_file(const char* path, const uint8_t* key, size_t key_size,
                                cove_should_compact_fn should_compact, void* userdata, bool* out_compacted);

/**
 * Salvages a damaged file (as sqlite3's `.recover`): copies everything that can still be read of
 * the file at `damaged_path` into a new file at `out_path`. The damaged file is read without
 * being trusted and is never written (no lock file either): of the versions its meta slots hold,
 * the newest whose schema can be read is taken, even one cove_open() would discard. A page that
 * fails its checksum or does not decode loses only what lives on it (objects of a table page,
 * elements of a collection's page, a long value, which takes its property's default); links to
 * lost objects become null or leave their lists and sets, embedded objects whose parent was
 * lost go with it; indexes, primary keys and backlinks are built anew. The new file is committed
 * durably and passes cove_verify(). Run it on a file no other process is writing.
 * @param damaged_path NUL-terminated; the damaged Cove file.
 * @param out_path NUL-terminated; no file may exist there.
 * @param key, key_size the 64-byte key of an encrypted damaged file (the new file is encrypted
 *   with it too); NULL and 0 for a plain file.
 * @param out_report_json receives, when a file was written, the report as JSON (free with
 *   cove_free()): `version` salvaged, `newest_version`, `complete` (nothing was lost),
 *   `version_notes`, `damaged_pages`, `catalog_pages`, and `classes`, per class `class`,
 *   `objects_copied`, `objects_lost` (null when the class's table entry itself was lost),
 *   `collections_damaged`, `values_lost`, `links_dropped`, `damaged_pages`. NULL on failure. May
 *   be NULL.
 * @return #COVE_OK when the new file was written, whether or not something was lost (see
 *   `complete`); #COVE_ERR_INVALID_ARGUMENT (a NULL path, the same path twice, a file at
 *   `out_path`); #COVE_ERR_CORRUPT when nothing can be salvaged (not a Cove file, no meta slot
 *   holds together, no version's schema can be read; nothing is written); #COVE_ERR_IO (the
 *   damaged file cannot be read, or the new one written: a partial new file is removed);
 *   #COVE_ERR_NO_SPACE; #COVE_ERR_FORMAT (a file of a newer Cove); #COVE_ERR_DECRYPTION (an
 *   encrypted file without its key, or with another one).
 * Complexity: O(n log n) for n objects, collection elements and index entries.
 * Threads: any.
 */
cove_status_t cove_recover_file(const char* damaged_path, const char* out_path, const uint8_t* key, size_t key_size,
                                char** out_report_json);

/**
 * Writes a compacted copy of the version the realm reads to a new file at `path`: the same
 * schema, objects, links, collections and indexes in as few pages as they fit, committed
 * durably (SQLite's `VACUUM INTO`). Other threads and processes may go on writing meanwhile.
 * The copy opens as any file does; it starts a history of its own. It is encrypted with `key`, or
 * plain without one, whatever the realm's own file is: a copy adds, changes or removes a key.
 * @param realm a live or frozen realm, not in a write transaction.
 * @param path NUL-terminated; no file may exist there.
 * @param key, key_size the copy's 64-byte key (see cove_config_set_encryption_key()); NULL and 0
 *   for a plain copy.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL argument, a file at `path`, the realm in a
 *   write transaction, a key not of 64 bytes); #COVE_ERR_IO / #COVE_ERR_NO_SPACE when the copy
 *   cannot be written (the partial copy is removed); #COVE_ERR_CLOSED; #COVE_ERR_WRONG_THREAD.
 * Complexity: O(n log n) for n objects and index entries.
 * Threads: as the realm.
 */
cove_status_t cove_write_copy(cove_realm_t* realm, const char* path, const uint8_t* key, size_t key_size);

/**
 * Checks the whole file at the realm's current version: every reachable page's checksum, every
 * tree's order and counts, that live and free pages partition the file, that every index (primary
 * key and secondary) has exactly one entry per object holding its value, and that every backlink
 * tree holds exactly the links its property holds (counted for collections and mixed values),
 * and that every small list, set or map kept inline in its class's collection area is whole and
 * counted by its object, the area holding nothing else.
 * @param out_report receives a text report (free with cove_free()); may be NULL.
 * @return #COVE_OK when the file is sound; #COVE_ERR_CORRUPT naming the first problem found;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_verify(cove_realm_t* realm, char** out_report);

/* ------------------------------------------------------------------------------------------ */
/* Sync                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * A synced file uploads what its realms write to a Cove Sync server and downloads what others
 * wrote there, in the background: one session per file per process, with two threads of its
 * own, shared by every realm of the file opened with a sync configuration. A write is queued in
 * the file in its own commit, so it survives a crash or a server out of reach and goes up when
 * the server answers again; a request that fails is tried again after a growing pause, and a
 * refusal that trying again cannot mend (a token the server does not accept, a file bound to
 * another user) stops the session, whose status then says #COVE_SYNC_INACTIVE and
 * cove_sync_last_error() why. Every class of a synced schema needs a primary key (cove_open()
 * fails with #COVE_ERR_SCHEMA otherwise, naming the class), and a synced realm needs a file it
 * can write: not in memory, not read-only. Closing the last realm of the file stops its session;
 * what it had not uploaded stays queued for the next one.
 */

/**
 * Makes a sync configuration for cove_config_set_sync(), with the defaults of the setters
 * below.
 * @param url the server's base URL, `http://` or `https://` and a host
 *   (`https://sync.example.com`); NUL-terminated UTF-8.
 * @param token the bearer token the server gave the user (`cove-sync-server token`).
 * @param out receives the configuration; release it with cove_release().
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT for a NULL argument or invalid UTF-8. The URL and
 *   the token themselves are checked by cove_open(), which fails with #COVE_ERR_INVALID_ARGUMENT
 *   for a URL of another scheme or without a host, an empty token, or a token with characters a
 *   bearer token cannot have (spaces, control characters, non-ASCII).
 * Threads: a configuration is used by one thread at a time.
 */
cove_status_t cove_sync_config_new(const char* url, const char* token, cove_sync_config_t** out);

/**
 * Trusts the PEM certificates of a file instead of the system's, for a server whose certificate
 * a private authority signed. A file that cannot be read makes every request fail (the session
 * tries again, and cove_sync_last_error() says why).
 * @param pem_path NUL-terminated, not empty; NULL goes back to the system's certificates (the
 *   default).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration, an empty path,
 *   invalid UTF-8).
 */
cove_status_t cove_sync_config_set_trusted_certificates(cove_sync_config_t* sync, const char* pem_path);

/**
 * How long one request may take before the session gives it up and tries again, in seconds
 * (default 30); a long-polling download may wait the long poll's seconds more.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration, a time not
 *   above 0 or above 3600, NaN).
 */
cove_status_t cove_sync_config_set_request_timeout(cove_sync_config_t* sync, double seconds);

/**
 * How long a download waits at the server for news before it answers with nothing, in seconds
 * (default 25): the longer, the fewer requests an idle session makes.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration, a number
 *   outside 0 to 60).
 */
cove_status_t cove_sync_config_set_long_poll(cove_sync_config_t* sync, int32_t seconds);

/**
 * The most changesets one download asks the server for (default 1000). A download is applied in
 * write transactions of bounded size, so that readers and notifications keep flowing while a
 * large one arrives.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration, a count
 *   outside 1 to 100000).
 */
cove_status_t cove_sync_config_set_changesets_per_transaction(cove_sync_config_t* sync, int32_t count);

/**
 * Whether the session connects when the realm opens (default true); false starts it paused
 * (#COVE_SYNC_PAUSED), and cove_sync_resume() connects it.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration).
 */
cove_status_t cove_sync_config_set_starts_connected(cove_sync_config_t* sync, bool connected);

/** What a synced file does when it can no longer sync under its client file id (see
 *  cove_sync_config_set_client_reset()). */
typedef enum {
    /** Takes a new id, keeps its objects, and sends what the server never took again, on top of
     *  the server's state (the default). */
    COVE_CLIENT_RESET_RECOVER = 0,
    /** Takes a new id and drops its synced objects and what it had not uploaded: the server's
     *  state comes back by downloads. */
    COVE_CLIENT_RESET_DISCARD = 1,
    /** Stops the session (#COVE_SYNC_INACTIVE) with the error that says why, changing nothing. */
    COVE_CLIENT_RESET_MANUAL = 2,
} cove_client_reset_e;

/**
 * What the file does when its session finds that it cannot go on syncing under its client file
 * id: it is an older copy of itself (a backup put back, a copy of a synced file: the server
 * holds changesets of its id that it did not make), or it has downloaded further than the
 * server's history goes (the server's database put back from a backup, another server at the
 * URL). cove_sync_client_resets() tells whether and why a reset happened.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration, a mode that is
 *   none of #cove_client_reset_e).
 */
cove_status_t cove_sync_config_set_client_reset(cove_sync_config_t* sync, cove_client_reset_e mode);

/**
 * Syncs the realms opened with `config` through a server (see above), as Realm's
 * `syncConfiguration`. cove_open() then checks the sync configuration and the schema, starts
 * sync in a file that never synced (every object it holds is queued for upload), and joins the
 * file's session.
 * @param sync the sync configuration, copied (later changes to it, or its release, do not
 *   affect `config`); NULL: the realms do not sync (the default).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind configuration, a `sync` of
 *   another kind). cove_open() then fails with #COVE_ERR_INVALID_ARGUMENT for a URL or token it
 *   refuses (cove_sync_config_new()), an in-memory or read-only configuration;
 *   #COVE_ERR_SCHEMA for a class without a primary key, or with an embedded object (neither can
 *   sync); #COVE_ERR_IO when the session's threads or HTTP cannot start.
 */
cove_status_t cove_config_set_sync(cove_config_t* config, const cove_sync_config_t* sync);

/** Whether a sync session works (#cove_sync_status_t `state`). Stored as int32_t. */
typedef enum {
    /** Uploading and downloading, or trying to reach the server. */
    COVE_SYNC_ACTIVE = 0,
    /** Paused by cove_sync_pause(), or started so (cove_sync_config_set_starts_connected()). */
    COVE_SYNC_PAUSED = 1,
    /** Stopped for good: the server refused the session (cove_sync_last_error() says why). */
    COVE_SYNC_INACTIVE = 2
} cove_sync_state_e;

/** Whether a sync session reaches the server now (#cove_sync_status_t `connection`). Stored as
 *  int32_t. */
typedef enum {
    /** The last request failed, or none was made yet. */
    COVE_SYNC_DISCONNECTED = 0,
    /** Binding the file to the token's user (the first request of a session). */
    COVE_SYNC_CONNECTING = 1,
    /** The server answered the last request. */
    COVE_SYNC_CONNECTED = 2
} cove_sync_connection_e;

/** Where a sync session stands (cove_sync_get_status()). */
typedef struct cove_sync_status {
    /** A #cove_sync_state_e. */
    int32_t state;
    /** A #cove_sync_connection_e. */
    int32_t connection;
    /** The newest local changeset version made: the count of this file's writes that synced
     *  something. */
    uint64_t local_version;
    /** The newest local changeset version the server holds (equal to `local_version` when
     *  everything is uploaded). */
    uint64_t uploaded_version;
    /** The server version the file has downloaded up to. */
    uint64_t downloaded_version;
    /** The newest server version the session has heard of. */
    uint64_t server_version;
} cove_sync_status_t;

/**
 * The state, connection and progress of the realm's sync session.
 * @param out receives the status.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm or out); #COVE_ERR_SYNC when the realm
 *   does not sync (opened without cove_config_set_sync(), or frozen: its live realm has the
 *   session); #COVE_ERR_CLOSED.
 * Threads: as the realm; the session's own threads move the numbers meanwhile.
 */
cove_status_t cove_sync_get_status(cove_realm_t* realm, cove_sync_status_t* out);

/**
 * The session's latest error: a request that failed (the session tries again, and a request
 * that succeeds clears it) or the refusal that stopped it (#COVE_SYNC_INACTIVE).
 * @param out_message receives the message (free it with cove_free()), or NULL when there is
 *   none.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm or out_message); #COVE_ERR_SYNC when
 *   the realm does not sync; #COVE_ERR_CLOSED.
 */
cove_status_t cove_sync_last_error(cove_realm_t* realm, char** out_message);

/**
 * The writes of this file the server refused and undid (its read and write rules, or an object
 * outside the file's subscriptions): the server's own changeset brings each object back to the
 * server's state through the next download, and the upload's answer names them. The newest 100
 * the session heard of are kept.
 * @param out_json receives them as a JSON array, oldest first, each
 *   `{"class": "Note", "key": 7, "reason": "write rule of class 'Note' (owner == $user)"}` (the
 *   key as changesets write primary keys: an integer, a string, `{"oid": ...}` or
 *   `{"uuid": ...}`); free it with cove_free().
 * @param out_total receives how many the session heard of in all (may be NULL).
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm or out_json); #COVE_ERR_SYNC when the
 *   realm does not sync; #COVE_ERR_CLOSED.
 */
cove_status_t cove_sync_compensating_writes(cove_realm_t* realm, char** out_json, uint64_t* out_total);

/**
 * The client resets the realm's session made (cove_sync_config_set_client_reset()).
 * @param out_count receives how many.
 * @param out_reason receives why the last one was made (free it with cove_free()), or NULL when
 *   none was; may be NULL.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm or out_count); #COVE_ERR_SYNC when the
 *   realm does not sync; #COVE_ERR_CLOSED.
 */
cove_status_t cove_sync_client_resets(cove_realm_t* realm, uint64_t* out_count, char** out_reason);

/**
 * Waits until everything the file had written when the call was made is on the server (Realm's
 * `waitForUpload`). A paused session does not upload: the wait then lasts its timeout unless
 * another thread resumes the session.
 * @param timeout_seconds how long to wait at most: 0 or more, finite.
 * @return #COVE_OK; #COVE_ERR_SYNC when the timeout passes first ("the upload did not finish
 *   within 0.5 s", with the session's last error) or the session stops ("the sync session
 *   stopped: " and the server's refusal), and when the realm does not sync;
 *   #COVE_ERR_INVALID_ARGUMENT (NULL realm, a negative, infinite or NaN timeout);
 *   #COVE_ERR_IN_WRITE inside a write transaction (the session needs the write lock to record
 *   what the server took); #COVE_ERR_CLOSED.
 * Threads: it blocks the calling thread only; the realm may not be used by another thread
 * meanwhile, as always. Closing the realm from another thread ends the wait (#COVE_ERR_SYNC)
 * when it was the file's last synced realm.
 */
cove_status_t cove_sync_wait_for_upload(cove_realm_t* realm, double timeout_seconds);

/**
 * Waits until the file holds everything the server had when the call was made (Realm's
 * `waitForDownload`); cove_refresh() then shows it. Statuses and threads as
 * cove_sync_wait_for_upload() ("the download did not finish within ...").
 */
cove_status_t cove_sync_wait_for_download(cove_realm_t* realm, double timeout_seconds);

/**
 * Pauses the session of the realm's file: no uploads or downloads until cove_sync_resume();
 * what the file writes meanwhile stays queued. Affects every realm of the file in this process.
 * Pausing a paused or stopped session does nothing.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm); #COVE_ERR_SYNC when the realm does
 *   not sync; #COVE_ERR_CLOSED.
 */
cove_status_t cove_sync_pause(cove_realm_t* realm);

/**
 * Starts a paused session again. A stopped session (#COVE_SYNC_INACTIVE) stays stopped: a realm
 * of the file opened afterwards (with a token the server accepts) starts a new one.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm); #COVE_ERR_SYNC when the realm does
 *   not sync; #COVE_ERR_CLOSED.
 */
cove_status_t cove_sync_resume(cove_realm_t* realm);

/* ------------------------------------------------------------------------------------------ */
/* Subscriptions                                                                               */
/* ------------------------------------------------------------------------------------------ */

/*
 * A synced realm downloads the objects its subscriptions cover: each subscription names a class
 * and a query over it (docs/SYNC.md, "Subscriptions"). The realm's subscription set is kept in
 * the file; each change commits a new version of it (1, 2, ...; 0 before the first), which the
 * session sends to the server, and the server sends the objects it covers and takes out of the
 * file those no subscription covers any more. Change it one subscription at a time with
 * cove_results_subscribe() and cove_results_unsubscribe(), or many at once between
 * cove_subscriptions_update_begin() and cove_subscriptions_update_commit(). Rules shared by
 * every function of this section:
 *
 * - Names: an unnamed subscription is known by its class and query: subscribing to a query an
 *   unnamed subscription already has adds nothing. A named one is known by its name: the same
 *   name with the same query adds nothing; with another query it takes the new query (and a
 *   new updated time). A name and an unnamed subscription with the same query are two
 *   subscriptions.
 * - Queries: the subset of the query language subscriptions take (docs/SYNC.md, "Subscription
 *   queries"): the class's own properties compared with literals or arguments, joined by AND,
 *   OR and NOT. SORT, DISTINCT, LIMIT and OFFSET are refused (#COVE_ERR_INVALID_ARGUMENT or #COVE_ERR_QUERY_SYNTAX, the message naming
 *   them), and so are key paths through links ("owner.name") and collection operators
 *   ("toys.@count"). Results subscribe to their filters alone: a sort or DISTINCT of the
 *   results orders or thins out what the filters match, and is left out.
 * - Realms: subscriptions need a live realm opened with cove_config_set_sync()
 *   (#COVE_ERR_INVALID_ARGUMENT otherwise; #COVE_ERR_FROZEN for a frozen one) and are refused
 *   inside a write transaction (#COVE_ERR_IN_WRITE): the set is written in a transaction of its
 *   own. #COVE_ERR_CLOSED once the realm is closed.
 * - Waits: the objects of a version of the set have arrived when the server sent them all. A
 *   wait ends with #COVE_ERR_SYNC when the server refuses the set (the message gives its reason:
 *   a query it cannot answer, a class or property it does not have), when the session stops
 *   (the server refused it), or when the timeout passes ("... did not arrive within 0.5 s"); a
 *   wait that ends cancels nothing: the subscription stays in the set. A paused session
 *   (cove_sync_pause(), cove_sync_config_set_starts_connected()) downloads nothing, so its
 *   waits last their timeout. A wait waits on the file's session, not on the realm: the realm
 *   is not used during it, and another thread may use it meanwhile. Timeouts (`timeout_s`) are
 *   seconds, 0 or more; -1 or INFINITY waits without limit; other negative numbers and NaN are
 *   #COVE_ERR_INVALID_ARGUMENT.
 * - Threads: as the realm.
 */

/** When a subscribe call waits for the server's objects of its subscription. */
typedef enum {
    /** Every time: for the subscription's objects, then for the download of everything the
     *  server held at the call. */
    COVE_WAIT_FOR_SYNC_ALWAYS = 0,
    /** Only when the call added the subscription, or gave a name a new query (the default of
     *  the other bindings). */
    COVE_WAIT_FOR_SYNC_ON_CREATION = 1,
    /** Never: the call completes once the subscription is committed to the file. */
    COVE_WAIT_FOR_SYNC_NEVER = 2
} cove_wait_for_sync_e;

/** Where the newest version of a subscription set stands (cove_subscriptions_get_state()).
 *  Stored as int32_t. */
typedef enum {
    /** Committed to the file; the server has not taken it yet. */
    COVE_SUBSCRIPTION_PENDING = 0,
    /** Taken by the server; its objects are downloading. */
    COVE_SUBSCRIPTION_BOOTSTRAPPING = 1,
    /** Its objects are in the file; downloads keep them up to date. */
    COVE_SUBSCRIPTION_COMPLETE = 2,
    /** The server refused it (the error message says why); the set it had before stays in
     *  force. */
    COVE_SUBSCRIPTION_ERROR = 3,
    /** A newer version was committed before this one completed. */
    COVE_SUBSCRIPTION_SUPERSEDED = 4
} cove_subscription_state_e;

/** One subscription of a set (cove_subscriptions_get()). */
typedef struct cove_subscription {
    /** The name, or NULL for an unnamed subscription. */
    const char* name;
    /** The class subscribed to. */
    const char* class_name;
    /** The query, its arguments written `$0`, `$1`, ... (the filters of subscribed results are
     *  joined with AND, their arguments numbered in order). */
    const char* query;
    /** When it was added, and when its query last changed (millisecond precision). */
    cove_timestamp_t created_at;
    cove_timestamp_t updated_at;
} cove_subscription_t;

/**
 * How a cove_results_subscribe() ends, called once.
 * @param userdata the pointer given to cove_results_subscribe().
 * @param status #COVE_OK when the wait ended as the mode asked (or there was none to make);
 *   #COVE_ERR_SYNC when the server refused the set, the session stopped or the timeout passed
 *   (the subscription stays); #COVE_ERR_CLOSED when the realm was closed first.
 * @param message NULL for #COVE_OK, else what went wrong; valid during the call only.
 */
typedef void (*cove_subscribe_cb)(void* userdata, cove_status_t status, const char* message);

/**
 * Subscribes to what results match (Results' `subscribe`): commits a subscription of their
 * class and filters to the realm's subscription set now, on the calling thread, then waits for
 * its objects as `mode` says on a thread of the library, and reports how the wait ended to
 * `callback`, delivered like notifications: it runs inside cove_deliver() or cove_refresh() on
 * the thread that calls them, after the realm advanced (so the objects that arrived are
 * readable), at the first of them after the wait ended (or at once, for a call that does not
 * wait); the realm's notification descriptor (cove_notification_fd()) becomes readable then.
 * Closing the realm (cove_close(), or releasing its last handle) first calls it at once with
 * #COVE_ERR_CLOSED, on that thread. The results remember the subscription they made, for
 * cove_results_unsubscribe().
 * @param results live results of a class's objects (not of a list's or set's elements).
 * @param name the subscription's name (NUL-terminated UTF-8, not empty), or NULL for an unnamed
 *   one (see "Names" above).
 * @param mode a #cove_wait_for_sync_e.
 * @param timeout_s the longest wait (see "Waits" above).
 * @param callback called exactly once for a call that returns #COVE_OK; not NULL.
 * @param userdata passed to the callback; may be NULL.
 * @param free_userdata called with `userdata` once, right after the callback returns; may be
 *   NULL. A call that fails calls neither: `userdata` stays the caller's.
 * @return #COVE_OK once the subscription is committed; #COVE_ERR_INVALID_ARGUMENT (NULL or
 *   wrong-kind results, NULL callback, a bad mode or timeout, an empty name, results of values,
 *   a realm that does not sync, a query subscriptions do not take); #COVE_ERR_QUERY_SYNTAX;
 *   #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_subscribe(cove_results_t* results, const char* name, cove_wait_for_sync_e mode,
                                     double timeout_s, cove_subscribe_cb callback, void* userdata,
                                     cove_free_fn free_userdata);

/**
 * cove_results_subscribe() that waits on the calling thread and returns how the wait ended
 * instead of calling back. The realm is not used during the wait (see "Waits"); it does not
 * advance: cove_refresh() then shows the objects that arrived.
 * @return the statuses of cove_results_subscribe() (nothing is committed then), and
 *   #COVE_ERR_SYNC when the wait ends without the objects (the subscription stays committed).
 */
cove_status_t cove_results_subscribe_blocking(cove_results_t* results, const char* name, cove_wait_for_sync_e mode,
                                              double timeout_s);

/**
 * Removes the subscription these results made (the named one, or the unnamed one with their
 * query), committing the removal to the set without waiting for the objects to leave; the
 * results' own query is unchanged. A named subscription given another query since, by a
 * subscribe of other results, stays. Results that made no subscription, one already removed,
 * and a realm that does not sync have nothing to remove: #COVE_OK.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind results); #COVE_ERR_IN_WRITE;
 *   #COVE_ERR_FROZEN; #COVE_ERR_CLOSED.
 */
cove_status_t cove_results_unsubscribe(cove_results_t* results);

/**
 * Begins an update of the realm's subscription set (the `update` block of the other bindings):
 * until cove_subscriptions_update_commit() or _cancel(), cove_subscriptions_append(),
 * _remove() and _remove_all() change a copy of the set, which the reading functions below show.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm, a realm that does not
 *   sync, an update already in progress); #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN;
 *   #COVE_ERR_CLOSED.
 */
cove_status_t cove_subscriptions_update_begin(cove_realm_t* realm);

/**
 * Adds a subscription to the objects of `class_name` matching `query`, by the rules of names
 * above.
 * @param query the query (NUL-terminated UTF-8), or NULL for every object ("TRUEPREDICATE").
 * @param args, n_args the query's arguments, `$0` to `$(n_args - 1)` (or `%@` in order), as
 *   cove_query() takes them; NULL with 0 for none.
 * @param name the subscription's name (not empty), or NULL for an unnamed one.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (no update in progress, a NULL class_name, an
 *   unknown class, a query or argument subscriptions do not take, an empty name);
 *   #COVE_ERR_QUERY_SYNTAX; #COVE_ERR_CLOSED.
 */
cove_status_t cove_subscriptions_append(cove_realm_t* realm, const char* class_name, const char* query,
                                        const cove_value_t* args, size_t n_args, const char* name);

/**
 * Removes the subscription named `name`.
 * @return #COVE_OK; #COVE_ERR_NOT_FOUND when none has that name; #COVE_ERR_INVALID_ARGUMENT (no
 *   update in progress, NULL name); #COVE_ERR_CLOSED.
 */
cove_status_t cove_subscriptions_remove(cove_realm_t* realm, const char* name);

/**
 * Removes every subscription to `class_name` (NULL: of every class); with `unnamed_only`, only
 * the unnamed ones among them.
 * @return #COVE_OK (also when nothing matched); #COVE_ERR_INVALID_ARGUMENT (no update in
 *   progress); #COVE_ERR_CLOSED.
 */
cove_status_t cove_subscriptions_remove_all(cove_realm_t* realm, const char* class_name, bool unnamed_only);

/**
 * Ends the update: commits its changes as the set's next version (none when they changed
 * nothing) and lets the session send it. The commit ends the update whether it succeeds or not
 * (a failure commits nothing). Nothing is waited for: cove_subscriptions_wait() waits.
 * @param out_version receives the version in force after it (the same as before when nothing
 *   changed); may be NULL.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (no update in progress); #COVE_ERR_IN_WRITE
 *   (a write transaction was begun since cove_subscriptions_update_begin()); #COVE_ERR_CLOSED.
 */
cove_status_t cove_subscriptions_update_commit(cove_realm_t* realm, uint64_t* out_version);

/**
 * Ends the update without committing its changes. Without an update in progress it does
 * nothing.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL or wrong-kind realm); #COVE_ERR_CLOSED.
 */
cove_status_t cove_subscriptions_update_cancel(cove_realm_t* realm);

/**
 * The version of the realm's subscription set: 0 before the first change, one more at each
 * commit that changed it.
 * @return #COVE_OK; #COVE_ERR_INVALID_ARGUMENT (NULL realm or out, a realm that does not sync);
 *   #COVE_ERR_IN_WRITE; #COVE_ERR_FROZEN; #COVE_ERR_CLOSED.
 */
cove_status_t cove_subscriptions_get_version(cove_realm_t* realm, uint64_t* out_version);

/**
 * Where the newest version of the set stands.
 * @param out_state receives a #cove_subscription_state_e.
 * @param out_error receives, for #COVE_SUBSCRIPTION_ERROR, the server's reason (free it with
 *   cove_free()), else NULL; may be NULL.
 * @return as cove_subscriptions_get_version().
 */
cove_status_t cove_subscriptions_get_state(cove_realm_t* realm, int32_t* out_state, char** out_error);

/** The number of subscriptions in the set. Statuses as cove_subscriptions_get_version(). */
cove_status_t cove_subscriptions_count(cove_realm_t* realm, size_t* out_count);

/**
 * The `index`th subscription of the set, in the order they were added.
 * @param out receives it; its strings are NUL-terminated UTF-8 that stay valid until the
 *   realm's next write, refresh, delivery or close (as the strings of #cove_value_t).
 * @return as cove_subscriptions_get_version(); #COVE_ERR_OUT_OF_RANGE (index >= count).
 */
cove_status_t cove_subscriptions_get(cove_realm_t* realm, size_t index, cove_subscription_t* out);

/**
 * Waits until version `version` of the set (or a later one) has its objects in the file (see
 * "Waits"); cove_refresh() then shows them.
 * @param version a committed version (cove_subscriptions_update_commit(),
 *   cove_subscriptions_get_version()).
 * @return #COVE_OK; #COVE_ERR_SYNC (refused, session stopped, timeout); #COVE_ERR_INVALID_ARGUMENT
 *   (a version above the newest, a bad timeout, a realm that does not sync); #COVE_ERR_IN_WRITE;
 *   #COVE_ERR_FROZEN; #COVE_ERR_CLOSED.
 */
cove_status_t cove_subscriptions_wait(cove_realm_t* realm, uint64_t version, double timeout_s);

#ifdef __cplusplus
}
#endif

#endif /* COVE_H */
