/* _speedups.c: the binding's per-value hot paths in C, beside the cffi module that carries the
 * rest. Python pays for every call and every cdata, so a lookup read through cffi spends most of
 * its time outside the library; these functions do the same work with the CPython API and call
 * libcove directly. Each handles the common case only and answers MISS (or None) for anything
 * else, and the caller then takes the general path in Python, which also raises the errors: the
 * behaviour is the cffi path's, only faster.
 *
 * Two base types carry the commonest calls whole: ObjectBase under cove.Object (the object's
 * handle, realm and class name in C fields; attribute writes) and RealmBase under cove.Realm
 * (create() and find()); what they do not take they pass to a Python method of the subclass.
 * Iterators of results and of lists, sets and maps hand out what they read here and ask a
 * Python function for the rest.
 *
 * Handles are passed as Python ints (their addresses); a caller passes only a handle it holds.
 * Every library call releases the GIL around it, as cffi's calls do, but the calls by keys
 * (cove_object_exists_by_keys(), cove_object_get_by_keys(), cove_object_from_keys()), which
 * the header says take no lock another thread may hold for long: they run as often as objects
 * are iterated, and letting go of the GIL and taking it back would cost about as much as the
 * read. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

#include "cove.h"

#if PY_VERSION_HEX < 0x030A0000
/* Python 3.9 */
static int PyModule_AddObjectRef(PyObject *module, const char *name, PyObject *value) {
    Py_XINCREF(value);
    int result = PyModule_AddObject(module, name, value);
    if (result < 0)
        Py_XDECREF(value);
    return result;
}
#define Py_TPFLAGS_DISALLOW_INSTANTIATION 0
#endif

/* The answer of a fast path that does not apply: take the general path. */
static PyObject *Miss;
/* A new reference to Miss. */
static PyObject *miss(void) {
    Py_INCREF(Miss);
    return Miss;
}

/* What a write of a packed value answers: None when the library did it, MISS when it refused
 * (the caller's general path repeats it and raises; a refused write changed nothing). */
static PyObject *written(cove_status_t status) {
    if (status != COVE_OK)
        return miss();
    Py_RETURN_NONE;
}

/* Runs a library call with the GIL released, as cffi's calls do. */
#define UNLOCKED(call) \
    do { \
        Py_BEGIN_ALLOW_THREADS call; \
        Py_END_ALLOW_THREADS \
    } while (0)

/* map_value(): the map has no such key. */
static PyObject *Missing;
/* take(): the iterator is exhausted / the batch is full. */
static PyObject *Done;
static PyObject *Full;
/* Interned attribute names. */
static PyObject *str_addr, *str_get, *str_setattr, *str_open, *str_link_classes, *str_create_call, *str_find_call,
    *str_object_handle;

static PyObject *link_object(const cove_value_t *v, PyObject *realm);
static PyObject *value_of(const cove_value_t *v, PyObject *realm);
static int64_t int64_argument(PyObject *o, int *ok);

/* The Python value of a library value of a plain type, or a new reference to Miss for a type
 * the general path converts (timestamps, decimals, object ids, uuids and links). */
static PyObject *plain_value(const cove_value_t *v) {
    switch (v->type) {
    case COVE_TYPE_INT:
        return PyLong_FromLongLong(v->u.integer);
    case COVE_TYPE_STRING:
        /* The library hands out valid UTF-8 only. */
        return PyUnicode_DecodeUTF8(v->u.string.data, (Py_ssize_t)v->u.string.size, "strict");
    case COVE_TYPE_DOUBLE:
        return PyFloat_FromDouble(v->u.dnum);
    case COVE_TYPE_NULL:
        Py_RETURN_NONE;
    case COVE_TYPE_BOOL:
        return PyBool_FromLong(v->u.boolean);
    case COVE_TYPE_FLOAT:
        return PyFloat_FromDouble(v->u.fnum);
    case COVE_TYPE_BINARY:
        return PyBytes_FromStringAndSize((const char *)v->u.binary.data, (Py_ssize_t)v->u.binary.size);
    default:
        return miss();
    }
}

/* The handle whose address the Python int `address` holds, or NULL with an exception set. */
static void *handle_at(PyObject *address) {
    void *p = PyLong_AsVoidPtr(address);
    if (p == NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "a null handle");
    return p;
}

/* cove.Realm derives from RealmBase, which keeps what the C paths of create() and find() read
 * (the realm's `_open` list, its handle's `_addr`, the `_create_plans` and `_targets` by the cls
 * given) and takes those calls without a Python frame: a call its plan or target does not
 * cover goes to Realm._create_call or Realm._find_call, the Python paths, with the arguments as
 * given. Objects read by keys take the realm's handle from here too. */
typedef struct {
    PyObject_HEAD
    PyObject *open, *addr, *plans, *targets;
} RealmBase;

static PyTypeObject *RealmBaseType;

/* The handle of `realm` when it is a RealmBase whose `_open` says [True], else NULL (no
 * exception). */
static void *open_realm(PyObject *realm) {
    if (realm == NULL || !PyObject_TypeCheck(realm, RealmBaseType))
        return NULL;
    RealmBase *r = (RealmBase *)realm;
    if (r->open == NULL || !PyList_Check(r->open) || PyList_GET_SIZE(r->open) < 1 ||
        PyList_GET_ITEM(r->open, 0) != Py_True || r->addr == NULL)
        return NULL;
    void *handle = PyLong_AsVoidPtr(r->addr);
    if (handle == NULL)
        PyErr_Clear();
    return handle;
}

/* ---- ObjectBase: the C part of every cove.Object ------------------------------------------- */

/* cove.Object derives from this type: an object keeps its library handle (+1, released when the
 * object goes), its realm and its class name in these fields rather than in its __dict__, so
 * that making an object in C costs one allocation, and reads and writes of its properties take
 * the handle without a lookup.
 *
 * An object that results hand out while they are iterated is made without a handle: it keeps
 * its class key and object key, and the keys of its class's single values and links (`props`),
 * and Accessor reads its plain values by keys (cove_object_get_by_keys()), as obj.name = value
 * writes them (cove_object_set_by_keys()). Whatever needs the handle (obj._addr, a link to it,
 * the general path) makes it then (make_handle()); the object keeps it from then on. */
typedef struct {
    PyObject_HEAD
    void *handle;          /* +1, or NULL for an object that was never given one */
    PyObject *realm;       /* the Realm */
    PyObject *class_name;  /* str */
    PyObject *props;       /* {property name: property key} (dict) for an object read by keys, else NULL */
    int64_t object_key;    /* with props: the object's keys */
    uint32_t class_key;
} ObjectBase;

static PyTypeObject *ObjectBaseType;

/* The handle of an object read by keys, made now (see ObjectBase) by cove_object_from_keys(), the
 * GIL kept as for the reads by keys (see the top), or else by realm._object_handle(), which
 * raises the library's error: 0, or -1 with that exception. */
static int make_handle(ObjectBase *obj) {
    void *realm = open_realm(obj->realm);
    cove_object_t *made = NULL;
    if (realm != NULL && cove_object_from_keys((cove_realm_t *)realm, obj->class_key, obj->object_key, &made) == COVE_OK) {
        obj->handle = made;
        return 0;
    }
    PyObject *class_key = PyLong_FromUnsignedLong(obj->class_key);
    PyObject *object_key = class_key == NULL ? NULL : PyLong_FromLongLong(obj->object_key);
    PyObject *address = object_key == NULL ? NULL
                        : PyObject_CallMethodObjArgs(obj->realm, str_object_handle, class_key, object_key, NULL);
    Py_XDECREF(class_key);
    Py_XDECREF(object_key);
    if (address == NULL)
        return -1;
    void *handle = handle_at(address);
    Py_DECREF(address);
    if (handle == NULL)
        return -1;
    if (obj->handle != NULL) {
        /* Made meanwhile (the call ran Python code): the first one stays. */
        UNLOCKED(cove_release(handle));
        return 0;
    }
    obj->handle = handle;
    return 0;
}

/* The handle of `o` when it is an object that has one or can make one (make_handle()), else
 * NULL without an exception (the caller's general path makes it again, and raises). */
static void *object_handle(PyObject *o) {
    if (!PyObject_TypeCheck(o, ObjectBaseType))
        return NULL;
    ObjectBase *obj = (ObjectBase *)o;
    if (obj->handle == NULL && obj->props != NULL && obj->realm != NULL && make_handle(obj) < 0)
        PyErr_Clear();
    return obj->handle;
}

/* Gives the handle back first: its realm may go with the object's last reference to it. */
static void ObjectBase_dealloc(ObjectBase *self) {
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    void *handle = self->handle;
    self->handle = NULL;
    if (handle != NULL) {
        UNLOCKED(cove_release(handle));
    }
    Py_CLEAR(self->realm);
    Py_CLEAR(self->class_name);
    Py_CLEAR(self->props);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

/* The realm and class name are visited and cleared as references; the handle stays until the
 * object goes. */
static int ObjectBase_traverse(ObjectBase *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->realm);
    Py_VISIT(self->class_name);
    Py_VISIT(self->props);
    return 0;
}

static int ObjectBase_clear(ObjectBase *self) {
    Py_CLEAR(self->realm);
    return 0;
}

/* obj._addr: the handle's address, made now for an object read by keys (make_handle(), which
 * may raise); AttributeError for an object without a handle (an unmanaged one). */
static PyObject *ObjectBase_addr(ObjectBase *self, void *closure) {
    if (self->handle == NULL && self->props != NULL && self->realm != NULL && make_handle(self) < 0)
        return NULL;
    if (self->handle == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_addr");
        return NULL;
    }
    return PyLong_FromVoidPtr(self->handle);
}

static int pack_value(PyObject *o, cove_value_t *v);

/* Writes `v`, a packed plain value, into the property `name` (an exact str) of `obj`: by keys
 * (cove_object_set_by_keys()) for an object read by keys, whose class's single values and links
 * `props` names; through its handle otherwise, the name not looked up. 1 when the library did
 * it, 0 otherwise (the name not among `props`, a refusal), for the general path. */
static int write_property(ObjectBase *obj, PyObject *name, const cove_value_t *v) {
    cove_status_t status;
    if (obj->props != NULL) {
        void *realm = open_realm(obj->realm);
        PyObject *key = realm == NULL ? NULL : PyDict_GetItemWithError(obj->props, name);
        int ok = 0;
        int64_t property_key = key == NULL ? 0 : int64_argument(key, &ok);
        if (!ok) {
            PyErr_Clear();
            return 0;
        }
        UNLOCKED(status = cove_object_set_by_keys((cove_realm_t *)realm, obj->class_key, obj->object_key, property_key, v));
        return status == COVE_OK;
    }
    Py_ssize_t size;
    const char *text = PyUnicode_AsUTF8AndSize(name, &size);
    if (text == NULL || strlen(text) != (size_t)size) {
        PyErr_Clear();
        return 0;
    }
    UNLOCKED(status = cove_object_set((cove_object_t *)obj->handle, text, v));
    return status == COVE_OK;
}

/* obj.name = value: a value of a plain type goes to the library from here (write_property());
 * everything else, and a write the library refused (which changed nothing), through
 * obj._setattr(name, value), the general path, which does what the property takes or raises.
 * Names starting with an underscore are ordinary attributes, as are deletions. */
static int ObjectBase_setattro(PyObject *self, PyObject *name, PyObject *value) {
    if (value == NULL || !PyUnicode_Check(name) ||
        (PyUnicode_GET_LENGTH(name) > 0 && PyUnicode_READ_CHAR(name, 0) == '_'))
        return PyObject_GenericSetAttr(self, name, value);
    ObjectBase *obj = (ObjectBase *)self;
    if ((obj->handle != NULL || obj->props != NULL) && PyUnicode_CheckExact(name)) {
        cove_value_t v;
        int packed = pack_value(value, &v);
        if (packed < 0)
            return -1;
        if (packed > 0 && write_property(obj, name, &v))
            return 0;
    }
    PyObject *result = PyObject_CallMethodObjArgs(self, str_setattr, name, value, NULL);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

static PyMemberDef ObjectBase_members[] = {
    {"_realm", T_OBJECT_EX, offsetof(ObjectBase, realm), READONLY, "the realm of the object"},
    {"_class_name", T_OBJECT_EX, offsetof(ObjectBase, class_name), READONLY, "the object's class name"},
    {NULL},
};

/* obj._has_handle: whether the object holds a library handle (one read by keys makes it when it
 * first needs it; an unmanaged object has none). */
static PyObject *ObjectBase_has_handle(ObjectBase *self, void *closure) {
    return PyBool_FromLong(self->handle != NULL);
}

static PyGetSetDef ObjectBase_getset[] = {
    {"_addr", (getter)ObjectBase_addr, NULL, "the address of the object's library handle", NULL},
    {"_has_handle", (getter)ObjectBase_has_handle, NULL, "whether the object holds its library handle", NULL},
    {NULL},
};

/* A garbage-collected base type for Python classes (ObjectBase, RealmBase): its doc,
 * size and life-cycle slots, and up to four `more` slots (ended by a {0, NULL}). */
static PyTypeObject *base_type(const char *name, const char *doc, int size, destructor dealloc, traverseproc traverse,
                               inquiry clear, const PyType_Slot *more) {
    PyType_Slot slots[10] = {
        {Py_tp_doc, (void *)doc},
        {Py_tp_new, (void *)PyType_GenericNew},
        {Py_tp_dealloc, (void *)dealloc},
        {Py_tp_traverse, (void *)traverse},
        {Py_tp_clear, (void *)clear},
    };
    for (int i = 0; i < 4 && more[i].slot != 0; i++)
        slots[5 + i] = more[i];
    PyType_Spec spec = {name, size, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, slots};
    return (PyTypeObject *)PyType_FromSpec(&spec);
}

static const PyType_Slot ObjectBase_more[] = {
    {Py_tp_setattro, ObjectBase_setattro},
    {Py_tp_members, ObjectBase_members},
    {Py_tp_getset, ObjectBase_getset},
    {0, NULL},
};

/* A new instance of `cls` (a subclass of ObjectBase) for `handle`, whose reference it takes
 * over. On failure the reference is released and NULL returned with the exception set. */
static PyObject *wrap(PyObject *cls, PyObject *realm, PyObject *class_name, void *handle) {
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, ObjectBaseType)) {
        UNLOCKED(cove_release(handle));
        PyErr_SetString(PyExc_TypeError, "wrap: not a subclass of ObjectBase");
        return NULL;
    }
    ObjectBase *obj = (ObjectBase *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (obj == NULL) {
        UNLOCKED(cove_release(handle));
        return NULL;
    }
    obj->handle = handle;
    Py_INCREF(realm);
    obj->realm = realm;
    Py_INCREF(class_name);
    obj->class_name = class_name;
    return (PyObject *)obj;
}

/* A new instance of `cls` (a subclass of ObjectBase, which the caller checked) for the object of
 * `class_key` and `object_key`, read by keys through `props` (see ObjectBase); NULL with the
 * exception set on failure. */
static PyObject *wrap_keys(PyObject *cls, PyObject *realm, PyObject *class_name, PyObject *props, uint32_t class_key,
                           int64_t object_key) {
    ObjectBase *obj = (ObjectBase *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (obj == NULL)
        return NULL;
    Py_INCREF(realm);
    obj->realm = realm;
    Py_INCREF(class_name);
    obj->class_name = class_name;
    Py_INCREF(props);
    obj->props = props;
    obj->class_key = class_key;
    obj->object_key = object_key;
    return (PyObject *)obj;
}

/* adopt(cls, realm, address, class_name): an instance of `cls` that takes over the reference
 * to the handle at `address` (a handle the caller owns, +1, and passes on). */
static PyObject *adopt(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyUnicode_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "adopt(cls, realm, address: int, class_name: str)");
        return NULL;
    }
    void *handle = handle_at(args[2]);
    if (handle == NULL)
        return NULL;
    return wrap(args[0], args[1], args[3], handle);
}

/* ---- Accessor: the class attribute that reads a property ---------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *name;    /* str */
    PyObject *encoded; /* bytes: the name as the library takes it */
} Accessor;

static int Accessor_init(Accessor *self, PyObject *args, PyObject *kwargs) {
    PyObject *name;
    if (!PyArg_ParseTuple(args, "U:Accessor", &name))
        return -1;
    PyObject *encoded = PyUnicode_AsEncodedString(name, "utf-8", "surrogatepass");
    if (encoded == NULL)
        return -1;
    if (strlen(PyBytes_AS_STRING(encoded)) != (size_t)PyBytes_GET_SIZE(encoded)) {
        /* The library takes NUL-terminated names. */
        Py_DECREF(encoded);
        PyErr_SetString(PyExc_ValueError, "a property name with a NUL character");
        return -1;
    }
    Py_INCREF(name);
    Py_XSETREF(self->name, name);
    Py_XSETREF(self->encoded, encoded);
    return 0;
}

static int Accessor_traverse(Accessor *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int Accessor_clear(Accessor *self) {
    Py_CLEAR(self->name);
    Py_CLEAR(self->encoded);
    return 0;
}

/* Frees an object of a garbage-collected heap type made here, after `clear` (its tp_clear). */
static void clear_and_free(PyObject *self, inquiry clear) {
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    clear(self);
    type->tp_free(self);
    Py_DECREF(type);
}

static void Accessor_dealloc(Accessor *self) {
    clear_and_free((PyObject *)self, (inquiry)Accessor_clear);
}

/* A property of an object read by keys (see ObjectBase), the GIL kept (see the top): its value,
 * or MISS when the general path must read it (the realm closed, a property not among the
 * class's single values and links, a refusal of the library, a type not converted here). */
static PyObject *read_by_keys(Accessor *self, ObjectBase *obj) {
    void *realm = open_realm(obj->realm);
    PyObject *key = realm == NULL ? NULL : PyDict_GetItemWithError(obj->props, self->name);
    if (key == NULL) {
        PyErr_Clear();
        return miss();
    }
    int ok;
    int64_t property_key = int64_argument(key, &ok);
    cove_value_t value;
    if (!ok || cove_object_get_by_keys((cove_realm_t *)realm, obj->class_key, obj->object_key, property_key,
                                       &value) != COVE_OK)
        return miss();
    return value_of(&value, obj->realm);
}

/* obj.<name>: a value of a plain type or a link straight from the library; anything else (a
 * collection, an error, an object without a handle) through obj._get(name, encoded). */
static PyObject *Accessor_get(Accessor *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return (PyObject *)self;
    }
    if (self->name == NULL) {
        PyErr_SetString(PyExc_AttributeError, "an accessor without a name");
        return NULL;
    }
    if (PyObject_TypeCheck(obj, ObjectBaseType) && ((ObjectBase *)obj)->props != NULL) {
        PyObject *result = read_by_keys(self, (ObjectBase *)obj);
        if (result != Miss)
            return result;
        Py_DECREF(result);
        return PyObject_CallMethodObjArgs(obj, str_get, self->name, self->encoded, NULL);
    }
    void *handle = PyObject_TypeCheck(obj, ObjectBaseType) ? ((ObjectBase *)obj)->handle : NULL;
    if (handle != NULL) {
        const char *property = PyBytes_AS_STRING(self->encoded);
        cove_value_t value;
        cove_status_t status;
        UNLOCKED(status = cove_object_get((cove_object_t *)handle, property, &value));
        if (status == COVE_OK) {
            PyObject *result = value_of(&value, ((ObjectBase *)obj)->realm);
            if (result != Miss)
                return result;
            Py_DECREF(result);
        }
    }
    return PyObject_CallMethodObjArgs(obj, str_get, self->name, self->encoded, NULL);
}

static PyMemberDef Accessor_members[] = {
    {"name", T_OBJECT, offsetof(Accessor, name), READONLY, "the property's name"},
    {"encoded", T_OBJECT, offsetof(Accessor, encoded), READONLY, "the name in UTF-8"},
    {NULL},
};

static PyType_Slot Accessor_slots[] = {
    {Py_tp_doc, "Reads a property of an object: plain values in C, the rest through obj._get()."},
    {Py_tp_init, Accessor_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, Accessor_dealloc},
    {Py_tp_traverse, Accessor_traverse},
    {Py_tp_clear, Accessor_clear},
    {Py_tp_descr_get, Accessor_get},
    {Py_tp_members, Accessor_members},
    {0, NULL},
};

static PyType_Spec Accessor_spec = {
    .name = "cove._speedups.Accessor",
    .basicsize = sizeof(Accessor),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = Accessor_slots,
};

/* ---- objects by int primary key, by object key, by position in results ---------------------- */

/* What a library call that looks an object up gave: MISS when it failed (the caller's general
 * path repeats the call and raises its error), None when there is no such object, else a new
 * instance of `cls` for it (wrap()). */
static PyObject *looked_up(cove_status_t status, cove_object_t *found, PyObject *const *made) {
    if (status != COVE_OK) {
        return miss();
    }
    if (found == NULL)
        Py_RETURN_NONE;
    return wrap(made[0], made[1], made[2], found);
}

/* An int argument as an int64_t; 0 with `*ok` false (and no exception) when it is not one. */
static int64_t int64_argument(PyObject *o, int *ok) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    *ok = !overflow && !(x == -1 && PyErr_Occurred());
    PyErr_Clear();
    return (int64_t)x;
}

/* The arguments of find_int() and object_by_key(): (realm, class_name: bytes, key: int, cls,
 * realm_object, class_name: str). 1 when they hold, 0 for a key past 64 bits (the caller answers
 * MISS), -1 with an exception for arguments of the wrong kind. */
static int keyed_arguments(PyObject *const *args, Py_ssize_t nargs, const char *function, void **realm,
                           const char **class_name, int64_t *key) {
    if (nargs != 6 || !PyBytes_Check(args[1])) {
        PyErr_Format(PyExc_TypeError, "%s(realm, class_name: bytes, key: int, cls, realm, class_name: str)", function);
        return -1;
    }
    if ((*realm = handle_at(args[0])) == NULL)
        return -1;
    *class_name = PyBytes_AS_STRING(args[1]);
    int ok;
    *key = int64_argument(args[2], &ok);
    return ok;
}

/* Arguments that start with a handle and an index: (handle, index: int, ...), `count` in all.
 * 1 when they hold, 0 for an index that is negative or past 64 bits (the caller answers MISS),
 * -1 with an exception for arguments of the wrong kind. */
static int indexed_arguments(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t count, const char *usage,
                             void **handle, size_t *index) {
    if (nargs != count) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if ((*handle = handle_at(args[0])) == NULL)
        return -1;
    int ok;
    int64_t i = int64_argument(args[1], &ok);
    *index = (size_t)i;
    return ok && i >= 0;
}

/* find_int(...): the object of `class_name` whose int primary key is `key` (looked_up()). */
static PyObject *find_int(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *realm;
    const char *class_name;
    cove_value_t pk;
    pk.type = COVE_TYPE_INT;
    int held = keyed_arguments(args, nargs, "find_int", &realm, &class_name, &pk.u.integer);
    if (held <= 0)
        return held < 0 ? NULL : miss();
    cove_object_t *found = NULL;
    cove_status_t status;
    UNLOCKED(status = cove_object_find((cove_realm_t *)realm, class_name, &pk, &found));
    return looked_up(status, found, args + 3);
}

/* object_by_key(...): the object of `class_name` with that object key (a key from results). */
static PyObject *object_by_key(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *realm;
    const char *class_name;
    int64_t key;
    int held = keyed_arguments(args, nargs, "object_by_key", &realm, &class_name, &key);
    if (held <= 0)
        return held < 0 ? NULL : miss();
    cove_object_t *found = NULL;
    cove_status_t status;
    UNLOCKED(status = cove_object_get_by_object_key((cove_realm_t *)realm, class_name, key, &found));
    return looked_up(status, found, args + 3);
}

/* results_object(results, index, cls, realm_object, class_name: str): the object at `index` of
 * results of objects, as find_int() answers (MISS for an index out of range, which the general
 * path reports). */
static PyObject *results_object(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *results;
    size_t index;
    int held = indexed_arguments(args, nargs, 5, "results_object(results, index: int, cls, realm, class_name: str)",
                                 &results, &index);
    if (held <= 0)
        return held < 0 ? NULL : miss();
    cove_object_t *found = NULL;
    cove_status_t status;
    UNLOCKED(status = cove_results_get_object((cove_results_t *)results, index, &found));
    if (status == COVE_OK && found == NULL)
        status = COVE_ERR_INTERNAL;
    return looked_up(status, found, args + 2);
}

/* ---- values with links ------------------------------------------------------------------ */

/* The object a link value names, read through `realm` (a Realm: its `_open`, `_addr` and
 * `_link_classes`, the class key's (class, name) pairs that the Python side fills on its first
 * link of a class); None when the object is gone; MISS when the realm is closed, the class key
 * is not known yet or the library refused (the general path then does it, and raises). */
static PyObject *link_object(const cove_value_t *v, PyObject *realm) {
    PyObject *open = NULL, *addr = NULL, *classes = NULL, *made = NULL, *result = NULL;
    open = PyObject_GetAttr(realm, str_open);
    if (open == NULL || !PyList_Check(open) || PyList_GET_SIZE(open) < 1 || PyList_GET_ITEM(open, 0) != Py_True)
        goto miss;
    addr = PyObject_GetAttr(realm, str_addr);
    classes = PyObject_GetAttr(realm, str_link_classes);
    if (addr == NULL || classes == NULL || !PyDict_Check(classes))
        goto miss;
    PyObject *key = PyLong_FromUnsignedLong(v->u.link.class_key);
    if (key == NULL)
        goto miss;
    made = PyDict_GetItemWithError(classes, key); /* borrowed */
    Py_DECREF(key);
    if (made == NULL || !PyTuple_Check(made) || PyTuple_GET_SIZE(made) != 2)
        goto miss;
    void *handle = PyLong_AsVoidPtr(addr);
    if (handle == NULL)
        goto miss;
    cove_object_t *found = NULL;
    cove_status_t status;
    UNLOCKED(status = cove_object_from_link((cove_realm_t *)handle, v, &found));
    PyObject *args[3] = {PyTuple_GET_ITEM(made, 0), realm, PyTuple_GET_ITEM(made, 1)};
    result = looked_up(status, found, args);
    goto done;
miss:
    PyErr_Clear();
    result = miss();
done:
    Py_XDECREF(open);
    Py_XDECREF(addr);
    Py_XDECREF(classes);
    return result;
}

/* The Python value of a library value read through `realm` (see link_object()), or MISS. */
static PyObject *value_of(const cove_value_t *v, PyObject *realm) {
    if (v->type == COVE_TYPE_LINK)
        return link_object(v, realm);
    return plain_value(v);
}

/* element(get, collection, index, realm): the element at `index` of a list or set, MISS when
 * the general path must read it (an error, a type not read here). */
typedef cove_status_t (*element_getter)(void *collection, size_t index, cove_value_t *out);

static PyObject *element(element_getter get, PyObject *const *args, Py_ssize_t nargs, const char *usage) {
    void *collection;
    size_t index;
    int held = indexed_arguments(args, nargs, 3, usage, &collection, &index);
    if (held <= 0)
        return held < 0 ? NULL : miss();
    cove_value_t value;
    cove_status_t status;
    UNLOCKED(status = get(collection, index, &value));
    if (status != COVE_OK) {
        return miss();
    }
    return value_of(&value, args[2]);
}

static cove_status_t get_list_element(void *list, size_t index, cove_value_t *out) {
    return cove_list_get((cove_list_t *)list, index, out);
}

static cove_status_t get_set_element(void *set, size_t index, cove_value_t *out) {
    return cove_set_get((cove_set_t *)set, index, out);
}

static PyObject *list_element(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return element(get_list_element, args, nargs, "list_element(list, index: int, realm)");
}

static PyObject *set_element(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return element(get_set_element, args, nargs, "set_element(set, index: int, realm)");
}

/* Arguments (handle, name: bytes, third): the handle and the name's bytes (NUL-terminated, as
 * bytes objects are); 0, or -1 with an exception for arguments of the wrong kind. */
static int named_arguments(PyObject *const *args, Py_ssize_t nargs, const char *usage, void **handle, const char **name) {
    if (nargs != 3 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if ((*handle = handle_at(args[0])) == NULL)
        return -1;
    *name = PyBytes_AS_STRING(args[1]);
    return 0;
}

/* The (key, value) tuple of a map entry read through `realm`, or MISS (value_of()). */
static PyObject *map_pair(const cove_string_t *key, const cove_value_t *value, PyObject *realm) {
    /* The key first: reading a link's object may call the library again, after which the key's
     * bytes may be gone. */
    PyObject *k = PyUnicode_DecodeUTF8(key->data, (Py_ssize_t)key->size, "strict");
    if (k == NULL)
        return NULL;
    PyObject *v = value_of(value, realm);
    if (v == NULL || v == Miss) {
        Py_DECREF(k);
        return v;
    }
    PyObject *entry = PyTuple_Pack(2, k, v);
    Py_DECREF(k);
    Py_DECREF(v);
    return entry;
}

/* map_entry(map, index, realm): the (key, value) entry at `index` of a map in key order, or MISS
 * when the general path must read it (an error, a value of a type not read here). */
static PyObject *map_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *map;
    size_t index;
    int held = indexed_arguments(args, nargs, 3, "map_entry(map, index: int, realm)", &map, &index);
    if (held <= 0)
        return held < 0 ? NULL : miss();
    cove_string_t key;
    cove_value_t value;
    cove_status_t status;
    UNLOCKED(status = cove_map_get_at((cove_map_t *)map, index, &key, &value));
    if (status != COVE_OK) {
        return miss();
    }
    return map_pair(&key, &value, args[2]);
}

/* map_value(map, key: bytes, realm): the value of `key` (UTF-8 without NUL) in a map, MISSING
 * when the map has no such key, MISS when the general path must read it. */
static PyObject *map_value(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *map;
    const char *key;
    if (named_arguments(args, nargs, "map_value(map, key: bytes, realm)", &map, &key) < 0)
        return NULL;
    cove_value_t value;
    bool found = false;
    cove_status_t status;
    UNLOCKED(status = cove_map_get((cove_map_t *)map, key, &value, &found));
    if (status != COVE_OK) {
        return miss();
    }
    if (!found) {
        Py_INCREF(Missing);
        return Missing;
    }
    return value_of(&value, args[2]);
}

/* ---- writes of plain values: set_value, list_insert, list_append, list_set, set_add, map_set -- */

static int pack_value(PyObject *o, cove_value_t *v);

/* What each write function does with its packed value. */
enum write { SET_PROPERTY, INSERT_ELEMENT, APPEND_ELEMENT, SET_ELEMENT, ADD_ELEMENT, STORE_ENTRY };

/* Writes `o`, when it is a value of a plain type (int, float, bool, str, bytes, None), into
 * `handle` as `write` says (at `name` or `index` where it takes one) and returns None; MISS for
 * any other value, or when the library refused (the caller's general path repeats the write and
 * raises; a refused write changed nothing). A str's or bytes' pointer stays valid during the
 * call: the caller holds the value. */
static PyObject *write_plain(enum write write, void *handle, const char *name, size_t index, PyObject *o) {
    cove_value_t value;
    int packed = pack_value(o, &value);
    if (packed <= 0)
        return packed < 0 ? NULL : miss();
    cove_status_t status = COVE_OK;
    Py_BEGIN_ALLOW_THREADS
    switch (write) {
    case SET_PROPERTY: status = cove_object_set((cove_object_t *)handle, name, &value); break;
    case INSERT_ELEMENT: status = cove_list_insert((cove_list_t *)handle, index, &value); break;
    case APPEND_ELEMENT:
        status = cove_list_size((cove_list_t *)handle, &index);
        if (status == COVE_OK)
            status = cove_list_insert((cove_list_t *)handle, index, &value);
        break;
    case SET_ELEMENT: status = cove_list_set((cove_list_t *)handle, index, &value); break;
    case ADD_ELEMENT: status = cove_set_insert((cove_set_t *)handle, &value, NULL); break;
    case STORE_ENTRY: status = cove_map_set((cove_map_t *)handle, name, &value); break;
    }
    Py_END_ALLOW_THREADS
    return written(status);
}

/* set_value(object, name: bytes, value) and map_set(map, key: bytes, value). */
static PyObject *write_named(enum write write, PyObject *const *args, Py_ssize_t nargs, const char *usage) {
    void *handle;
    const char *name;
    if (named_arguments(args, nargs, usage, &handle, &name) < 0)
        return NULL;
    return write_plain(write, handle, name, 0, args[2]);
}

/* list_insert(list, index, value) and list_set(list, index, value). */
static PyObject *write_indexed(enum write write, PyObject *const *args, Py_ssize_t nargs, const char *usage) {
    void *list;
    size_t index;
    int held = indexed_arguments(args, nargs, 3, usage, &list, &index);
    if (held <= 0)
        return held < 0 ? NULL : miss();
    return write_plain(write, list, NULL, index, args[2]);
}

static PyObject *set_value(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return write_named(SET_PROPERTY, args, nargs, "set_value(object, name: bytes, value)");
}

static PyObject *map_set(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return write_named(STORE_ENTRY, args, nargs, "map_set(map, key: bytes, value)");
}

static PyObject *list_insert(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return write_indexed(INSERT_ELEMENT, args, nargs, "list_insert(list, index: int, value)");
}

static PyObject *list_set(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return write_indexed(SET_ELEMENT, args, nargs, "list_set(list, index: int, value)");
}

/* set_add(set, value) and list_append(list, value). */
static PyObject *write_unplaced(enum write write, PyObject *const *args, Py_ssize_t nargs, const char *usage) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    void *handle = handle_at(args[0]);
    return handle == NULL ? NULL : write_plain(write, handle, NULL, 0, args[1]);
}

static PyObject *set_add(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return write_unplaced(ADD_ELEMENT, args, nargs, "set_add(set, value)");
}

static PyObject *list_append(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return write_unplaced(APPEND_ELEMENT, args, nargs, "list_append(list, value)");
}

/* map_store(map, key, value): map_set() of a key given as a str (exactly), which it encodes;
 * MISS for any other key, one with a NUL character or lone surrogates, and as map_set(). */
static PyObject *map_store(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "map_store(map, key: str, value)");
        return NULL;
    }
    void *map = handle_at(args[0]);
    if (map == NULL)
        return NULL;
    Py_ssize_t size;
    const char *key = PyUnicode_CheckExact(args[1]) ? PyUnicode_AsUTF8AndSize(args[1], &size) : NULL;
    if (key == NULL || strlen(key) != (size_t)size) {
        PyErr_Clear();
        return miss();
    }
    return write_plain(STORE_ENTRY, map, key, 0, args[2]);
}

/* ---- take(iterator, keys, rows, limit) ----------------------------------------------------- */

/* Whether `row` is a dict with exactly `keys` (a tuple of str), in that order. Keys are
 * compared as exact str only, so that no Python code (a key's __eq__) runs while the dict is
 * being walked; a row with other keys is left to the general path. */
static int has_keys(PyObject *row, PyObject *keys) {
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (!PyDict_CheckExact(row) || PyDict_GET_SIZE(row) != n)
        return 0;
    Py_ssize_t pos = 0, i = 0;
    PyObject *key, *value;
    while (PyDict_Next(row, &pos, &key, &value)) {
        PyObject *want = PyTuple_GET_ITEM(keys, i++);
        if (key != want && (!PyUnicode_CheckExact(key) || !PyUnicode_CheckExact(want) ||
                            PyUnicode_Compare(key, want) != 0))
            return 0;
    }
    return 1;
}

/* Moves rows from `iterator` into `rows` (a list) while each is a dict with exactly `keys`, in
 * that order, appending the list of its values, until `rows` holds `limit`. Returns Full then,
 * Done when the iterator is exhausted, or the first row that differs (the caller takes it the
 * general way). An exception of the iterator propagates. */
static PyObject *take(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyTuple_Check(args[1]) || !PyList_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "take(iterator, keys: tuple, rows: list, limit: int)");
        return NULL;
    }
    PyObject *iterator = args[0], *keys = args[1], *rows = args[2];
    Py_ssize_t limit = PyLong_AsSsize_t(args[3]);
    if (limit == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    while (PyList_GET_SIZE(rows) < limit) {
        PyObject *row = PyIter_Next(iterator);
        if (row == NULL) {
            if (PyErr_Occurred())
                return NULL;
            Py_INCREF(Done);
            return Done;
        }
        if (!has_keys(row, keys))
            return row;
        PyObject *values = PyList_New(n);
        if (values == NULL) {
            Py_DECREF(row);
            return NULL;
        }
        Py_ssize_t pos = 0, i = 0;
        PyObject *key, *value;
        while (PyDict_Next(row, &pos, &key, &value)) {
            Py_INCREF(value);
            PyList_SET_ITEM(values, i++, value);
        }
        Py_DECREF(row);
        int failed = PyList_Append(rows, values);
        Py_DECREF(values);
        if (failed)
            return NULL;
    }
    Py_INCREF(Full);
    return Full;
}

/* ---- pack(rows, n, buffer) ----------------------------------------------------------------- */

/* Writes one Python value as a library value; 0 when its type is not one done here (the
 * caller's general path writes it), -1 on error. Strings and bytes point into the objects,
 * which the caller's rows keep alive. */
static int pack_value(PyObject *o, cove_value_t *v) {
    if (PyLong_CheckExact(o)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow)
            return 0;
        if (x == -1 && PyErr_Occurred())
            return -1;
        v->type = COVE_TYPE_INT;
        v->u.integer = x;
        return 1;
    }
    if (PyUnicode_CheckExact(o)) {
        Py_ssize_t size;
        const char *data = PyUnicode_AsUTF8AndSize(o, &size);
        if (data == NULL) {
            /* Lone surrogates: the general path encodes them and the library names the row. */
            PyErr_Clear();
            return 0;
        }
        v->type = COVE_TYPE_STRING;
        v->u.string.data = data;
        v->u.string.size = (size_t)size;
        return 1;
    }
    if (PyFloat_CheckExact(o)) {
        v->type = COVE_TYPE_DOUBLE;
        v->u.dnum = PyFloat_AS_DOUBLE(o);
        return 1;
    }
    if (o == Py_None) {
        v->type = COVE_TYPE_NULL;
        return 1;
    }
    if (PyBool_Check(o)) {
        v->type = COVE_TYPE_BOOL;
        v->u.boolean = o == Py_True;
        return 1;
    }
    if (PyBytes_CheckExact(o)) {
        v->type = COVE_TYPE_BINARY;
        v->u.binary.data = (const uint8_t *)PyBytes_AS_STRING(o);
        v->u.binary.size = (size_t)PyBytes_GET_SIZE(o);
        return 1;
    }
    return 0;
}

/* Writes `o` as a link when it is an object of `realm` (its realm is that very realm; an
 * object of another realm is the general path's to refuse or to take) whose handle the
 * library turns into a link; 0 for anything else (the general path writes it). */
static int pack_link(PyObject *o, PyObject *realm, cove_value_t *v) {
    void *handle = object_handle(o);
    if (handle == NULL || realm == Py_None || ((ObjectBase *)o)->realm != realm)
        return 0;
    /* Reads the handle's class and object keys, taking no lock: no need to let go of the GIL. */
    return cove_object_to_link((cove_object_t *)handle, v) == COVE_OK;
}

/* pack_value(), else pack_link() for `realm`: 1 packed, 0 left to the general path, -1 error. */
static int pack_row_value(PyObject *o, PyObject *realm, cove_value_t *v) {
    int packed = pack_value(o, v);
    return packed == 0 ? pack_link(o, realm, v) : packed;
}

/* Fills `buffer` (writable, zeroed, room for len(rows) * n library values) row-major from
 * `rows`, a list of lists of n values each, and returns the list of the flat indices
 * (row * n + column) of the values it left for the general path, in order. Objects of
 * `realm` become links (pack_link()); with None, every object is left. */
static PyObject *pack(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "pack(rows: list, n: int, buffer, realm)");
        return NULL;
    }
    PyObject *rows = args[0], *realm = args[3];
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    if (n < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "pack: a negative width");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(rows);
    Py_buffer view;
    if (PyObject_GetBuffer(args[2], &view, PyBUF_WRITABLE) < 0)
        return NULL;
    PyObject *left = NULL;
    if (count != 0 && (size_t)view.len / sizeof(cove_value_t) / (size_t)count < (size_t)n) {
        PyErr_SetString(PyExc_ValueError, "pack: the buffer is too small");
        goto done;
    }
    left = PyList_New(0);
    if (left == NULL)
        goto done;
    cove_value_t *out = view.buf;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!PyList_CheckExact(row) || PyList_GET_SIZE(row) != n) {
            PyErr_Format(PyExc_ValueError, "pack: row %zd is not a list of %zd values", i, n);
            Py_CLEAR(left);
            goto done;
        }
        for (Py_ssize_t j = 0; j < n; j++) {
            int packed = pack_row_value(PyList_GET_ITEM(row, j), realm, out + i * n + j);
            if (packed < 0) {
                Py_CLEAR(left);
                goto done;
            }
            if (packed == 0) {
                PyObject *index = PyLong_FromSsize_t(i * n + j);
                if (index == NULL || PyList_Append(left, index) < 0) {
                    Py_XDECREF(index);
                    Py_CLEAR(left);
                    goto done;
                }
                Py_DECREF(index);
            }
        }
    }
done:
    PyBuffer_Release(&view);
    return left;
}

/* ---- create(realm, class_name, names, row, realm_object, cls, class_name) -------------------- */

/* The values of one object, as many as fit here, packed without allocating. */
#define CREATE_MAX_VALUES 32

/* create(realm, class_name: bytes, names: int, row: list, realm_object, cls, class_name: str):
 * a new object of the class from `row`, one value for each of the `len(row)` property names
 * whose C array `names` addresses (a `const char*[]` the caller keeps), as a new instance of
 * `cls`. MISS when a value is not one pack() writes (plain, or an object of `realm_object`),
 * when there are more than CREATE_MAX_VALUES, or when the library refused: a refused create
 * made nothing, and the caller's general path repeats it and raises. */
static PyObject *create(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !PyBytes_Check(args[1]) || !PyList_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "create(realm, class_name: bytes, names: int, row: list, realm, cls, class_name)");
        return NULL;
    }
    void *realm = handle_at(args[0]);
    if (realm == NULL)
        return NULL;
    PyObject *row = args[3];
    Py_ssize_t n = PyList_GET_SIZE(row);
    const char *const *names = NULL;
    if (n > 0) {
        names = PyLong_AsVoidPtr(args[2]);
        if (names == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "create: a null array of names");
            return NULL;
        }
    }
    if (n > CREATE_MAX_VALUES)
        return miss();
    cove_value_t values[CREATE_MAX_VALUES];
    for (Py_ssize_t j = 0; j < n; j++) {
        int packed = pack_row_value(PyList_GET_ITEM(row, j), args[4], &values[j]);
        if (packed <= 0)
            return packed < 0 ? NULL : miss();
    }
    /* The strings packed point into the row's objects, which the caller holds. */
    cove_object_t *made = NULL;
    cove_status_t status;
    UNLOCKED(status = cove_object_create_with_values((cove_realm_t *)realm, PyBytes_AS_STRING(args[1]), names,
                                                     (size_t)n, n > 0 ? values : NULL, &made));
    if (status != COVE_OK)
        return miss();
    return wrap(args[5], args[4], args[6], made);
}

/* ---- planned creates ------------------------------------------------------------------------ */

/* planned(plan, values, realm): realm.create(cls, values) of a new object in one call,
 * from a plan the Python side made after a first create of the class (Realm._create_plans):
 * (realm address, class name: bytes, cls, class name: str, {property: UTF-8 name} of the
 * class's single values and links, ((name, default), ...) for the names `values` may lack,
 * primary key name or None, [keys, names] of the last dict taken (remember_keys())). `values`
 * is a dict (exactly) or None. MISS when a key is not in
 * the plan, the primary key is not given, a value is not one pack() writes, there are more than
 * CREATE_MAX_VALUES values, or the library refused (which made nothing): the caller's general
 * path then repeats the create and raises. */
/* Keeps in `memo` (a list of two) the keys of `values` that planned() just took, in order, and
 * their UTF-8 names: the next dict with the very same key objects skips looking them up. */
static int remember_keys(PyObject *memo, PyObject *values, PyObject *const *encoded, Py_ssize_t n) {
    PyObject *keys = PyTuple_New(n), *names = PyTuple_New(n);
    if (keys == NULL || names == NULL) {
        Py_XDECREF(keys);
        Py_XDECREF(names);
        return -1;
    }
    Py_ssize_t pos = 0, i = 0;
    PyObject *key, *value;
    while (i < n && PyDict_Next(values, &pos, &key, &value)) {
        Py_INCREF(key);
        PyTuple_SET_ITEM(keys, i, key);
        Py_INCREF(encoded[i]);
        PyTuple_SET_ITEM(names, i, encoded[i]);
        i++;
    }
    return PyList_SetItem(memo, 0, keys) < 0 || PyList_SetItem(memo, 1, names) < 0 ? -1 : 0;
}

static PyObject *planned(PyObject *plan, PyObject *values, PyObject *realm_object) {
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 8 || !PyBytes_Check(PyTuple_GET_ITEM(plan, 1)) ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(plan, 4)) || !PyTuple_CheckExact(PyTuple_GET_ITEM(plan, 5)) ||
        !PyList_CheckExact(PyTuple_GET_ITEM(plan, 7)) || PyList_GET_SIZE(PyTuple_GET_ITEM(plan, 7)) != 2) {
        PyErr_SetString(PyExc_TypeError, "a create plan is a tuple of 8");
        return NULL;
    }
    PyObject *props = PyTuple_GET_ITEM(plan, 4), *defaults = PyTuple_GET_ITEM(plan, 5);
    PyObject *primary_key = PyTuple_GET_ITEM(plan, 6), *memo = PyTuple_GET_ITEM(plan, 7);
    void *realm = handle_at(PyTuple_GET_ITEM(plan, 0));
    if (realm == NULL)
        return NULL;
    if (values != Py_None && !PyDict_CheckExact(values))
        return miss();
    /* The keys and names of the last dict taken (remember_keys()); a dict with the same key
     * objects in the same order has the primary key too. */
    PyObject *seen = PyList_GET_ITEM(memo, 0), *seen_names = PyList_GET_ITEM(memo, 1);
    int same = values != Py_None && PyTuple_CheckExact(seen) && PyTuple_CheckExact(seen_names) &&
               PyTuple_GET_SIZE(seen) == PyDict_GET_SIZE(values) && PyTuple_GET_SIZE(seen_names) == PyTuple_GET_SIZE(seen);
    const char *names[CREATE_MAX_VALUES];
    PyObject *encodings[CREATE_MAX_VALUES];
    cove_value_t packed[CREATE_MAX_VALUES];
    /* The values packed, held during the call (their strings are pointed into). */
    PyObject *held[CREATE_MAX_VALUES];
    Py_ssize_t n = 0, pos = 0;
    PyObject *result = NULL, *key, *value;
    while (values != Py_None && PyDict_Next(values, &pos, &key, &value)) {
        PyObject *encoded = NULL;
        if (same && PyTuple_GET_ITEM(seen, n) == key)
            encoded = PyTuple_GET_ITEM(seen_names, n);
        else if ((same = 0, PyUnicode_CheckExact(key)))
            /* An exact str key is compared with the plan's str keys only: no Python code runs. */
            encoded = PyDict_GetItemWithError(props, key);
        if (encoded == NULL || n == CREATE_MAX_VALUES)
            goto miss;
        names[n] = PyBytes_AS_STRING(encoded);
        encodings[n] = encoded;
        int done = pack_row_value(value, realm_object, &packed[n]);
        if (done <= 0)
            goto miss;
        Py_INCREF(value);
        held[n++] = value;
    }
    if (!same) {
        if (primary_key != Py_None) {
            int given = values == Py_None ? 0 : PyDict_Contains(values, primary_key);
            if (given <= 0)
                goto miss;
        }
        if (values != Py_None && remember_keys(memo, values, encodings, n) < 0)
            goto done;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(defaults); i++) {
        PyObject *pair = PyTuple_GET_ITEM(defaults, i);
        int given = values == Py_None ? 0 : PyDict_Contains(values, PyTuple_GET_ITEM(pair, 0));
        if (given < 0)
            goto done;
        if (given)
            continue;
        PyObject *encoded = PyDict_GetItemWithError(props, PyTuple_GET_ITEM(pair, 0));
        if (encoded == NULL || n == CREATE_MAX_VALUES)
            goto miss;
        names[n] = PyBytes_AS_STRING(encoded);
        value = PyTuple_GET_ITEM(pair, 1);
        int done = pack_row_value(value, realm_object, &packed[n]);
        if (done <= 0)
            goto miss;
        Py_INCREF(value);
        held[n++] = value;
    }
    cove_object_t *made = NULL;
    cove_status_t status;
    UNLOCKED(status = cove_object_create_with_values((cove_realm_t *)realm, PyBytes_AS_STRING(PyTuple_GET_ITEM(plan, 1)),
                                                     names, (size_t)n, n > 0 ? packed : NULL, &made));
    if (status != COVE_OK)
        goto miss;
    result = wrap(PyTuple_GET_ITEM(plan, 2), realm_object, PyTuple_GET_ITEM(plan, 3), made);
    goto done;
miss:
    if (!PyErr_Occurred())
        result = miss();
done:
    while (n > 0)
        Py_DECREF(held[--n]);
    return result;
}

/* ---- iterators: the objects of results, the elements of lists, sets and maps ---------------- */

/* A type of iterator made here: `next` gives the elements, `dealloc` frees one. */
static PyTypeObject *iterator_type(const char *name, const char *doc, int size, destructor dealloc, iternextfunc next) {
    PyType_Slot slots[] = {
        {Py_tp_doc, (void *)doc},
        {Py_tp_dealloc, (void *)dealloc},
        {Py_tp_iter, (void *)PyObject_SelfIter},
        {Py_tp_iternext, (void *)next},
        {0, NULL},
    };
    PyType_Spec spec = {name, size, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
    return (PyTypeObject *)PyType_FromSpec(&spec);
}

/* The objects of results of objects, as Results.__iter__ hands them out: the keys of every
 * match are read when the iterator is made, each object when the iterator reaches it (one
 * deleted since is skipped). The objects are read by keys (see ObjectBase): the iterator asks
 * whether each exists (cove_object_exists_by_keys(), which also refuses a closed realm and the
 * wrong thread) and makes no handle. An object the library does not answer for here comes from
 * `general(key)`, the Python path, which gives it, None, or raises. */
typedef struct {
    PyObject_HEAD
    int64_t *keys;
    size_t count, next;
    void *realm;           /* the realm's handle, used while `open[0]` is True */
    uint32_t class_key;
    /* The references (free_iterator()): the class's property keys (ObjectBase's `props`), and
     * the rest. */
    PyObject *props, *cls, *realm_object, *class_name, *open, *general;
} ObjectIterator;

static PyTypeObject *ObjectIteratorType;

/* Frees an iterator made here whose last `n` fields, from the one at offset `first`, are
 * references. */
static void free_iterator(PyObject *self, size_t first, int n) {
    PyTypeObject *type = Py_TYPE(self);
    PyObject **references = (PyObject **)((char *)self + first);
    for (int i = 0; i < n; i++)
        Py_XDECREF(references[i]);
    PyObject_Free(self);
    Py_DECREF(type);
}

static void ObjectIterator_dealloc(ObjectIterator *self) {
    PyMem_Free(self->keys);
    free_iterator((PyObject *)self, offsetof(ObjectIterator, props), 6);
}

static PyObject *ObjectIterator_next(ObjectIterator *self) {
    while (self->next < self->count) {
        int64_t key = self->keys[self->next++];
        if (PyList_GET_ITEM(self->open, 0) == Py_True) {
            bool exists = false;
            if (cove_object_exists_by_keys((cove_realm_t *)self->realm, self->class_key, key, &exists) == COVE_OK) {
                if (!exists)
                    continue;
                return wrap_keys(self->cls, self->realm_object, self->class_name, self->props, self->class_key, key);
            }
        }
        PyObject *k = PyLong_FromLongLong(key);
        if (k == NULL)
            return NULL;
        PyObject *obj = PyObject_CallOneArg(self->general, k);
        Py_DECREF(k);
        if (obj != Py_None)
            return obj;
        Py_DECREF(obj);
    }
    PyMem_Free(self->keys);
    self->keys = NULL;
    self->count = self->next = 0;
    return NULL;
}

/* iterate_objects(results, realm, class_key: int, props: dict, cls, realm_object, class_name:
 * str, open: list, general): an ObjectIterator over the matches of `results` (addresses of the
 * results' and the realm's handles) of the class of `class_key`, whose single values and links
 * have the keys `props` ({name: property key}); `cls` a subclass of ObjectBase. MISS when the
 * library does not give the keys of the matches (the caller's general path asks again and
 * raises). */
static PyObject *iterate_objects(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 9 || !PyLong_Check(args[2]) || !PyDict_Check(args[3]) || !PyType_Check(args[4]) ||
        !PyType_IsSubtype((PyTypeObject *)args[4], ObjectBaseType) || !PyList_Check(args[7]) ||
        PyList_GET_SIZE(args[7]) < 1 || !PyCallable_Check(args[8])) {
        PyErr_SetString(PyExc_TypeError, "iterate_objects(results, realm, class_key: int, props: dict, cls, realm, "
                                         "class_name, open: list, general)");
        return NULL;
    }
    unsigned long class_key = PyLong_AsUnsignedLong(args[2]);
    if (class_key == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    if (class_key > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "iterate_objects: a class key past 32 bits");
        return NULL;
    }
    void *results = handle_at(args[0]), *realm = results == NULL ? NULL : handle_at(args[1]);
    if (realm == NULL)
        return NULL;
    size_t count = 0, got = 0;
    cove_status_t status;
    UNLOCKED(status = cove_results_count((cove_results_t *)results, &count));
    if (status != COVE_OK)
        return miss();
    int64_t *keys = NULL;
    if (count > 0) {
        keys = PyMem_Malloc(count * sizeof(int64_t));
        if (keys == NULL)
            return PyErr_NoMemory();
        UNLOCKED(status = cove_results_get_keys((cove_results_t *)results, 0, count, keys, &got));
        if (status != COVE_OK) {
            PyMem_Free(keys);
            return miss();
        }
    }
    ObjectIterator *it = PyObject_New(ObjectIterator, ObjectIteratorType);
    if (it == NULL) {
        PyMem_Free(keys);
        return NULL;
    }
    it->keys = keys;
    it->count = got;
    it->next = 0;
    it->realm = realm;
    it->class_key = (uint32_t)class_key;
    PyObject **fields[] = {&it->props, &it->cls, &it->realm_object, &it->class_name, &it->open, &it->general};
    for (int i = 0; i < 6; i++) {
        Py_INCREF(args[3 + i]);
        *fields[i] = args[3 + i];
    }
    return (PyObject *)it;
}

/* The elements of a list or a set, or the keys, values or entries of a map, as their
 * collection's __iter__ hands them out: the size is read at the first next() and each element
 * when the iteration reaches it. An element not read here (an error, a type converted in
 * Python) comes from `general(index)`, the Python path, which gives it, gives DONE when the
 * collection has shrunk below the index (the iteration ends), or raises. */
enum walk { LIST_ELEMENTS, SET_ELEMENTS, MAP_KEYS, MAP_VALUES, MAP_ENTRIES };

typedef struct {
    PyObject_HEAD
    int walk;
    Py_ssize_t count; /* -1 before the first next() */
    Py_ssize_t next;
    void *handle;
    /* The references (free_iterator()): the collection, which holds the handle, and the rest. */
    PyObject *collection, *realm, *general;
} ElementIterator;

static PyTypeObject *ElementIteratorType;

static void ElementIterator_dealloc(ElementIterator *self) {
    free_iterator((PyObject *)self, offsetof(ElementIterator, collection), 3);
}

/* The element at `index` read here, or MISS. */
static PyObject *element_at(ElementIterator *self, size_t index) {
    cove_value_t value;
    cove_string_t key;
    cove_status_t status;
    switch (self->walk) {
    case LIST_ELEMENTS:
        UNLOCKED(status = cove_list_get((cove_list_t *)self->handle, index, &value));
        break;
    case SET_ELEMENTS:
        UNLOCKED(status = cove_set_get((cove_set_t *)self->handle, index, &value));
        break;
    default:
        UNLOCKED(status = cove_map_get_at((cove_map_t *)self->handle, index, &key, &value));
        if (status == COVE_OK && self->walk == MAP_KEYS)
            return PyUnicode_DecodeUTF8(key.data, (Py_ssize_t)key.size, "strict");
        if (status == COVE_OK && self->walk == MAP_ENTRIES)
            return map_pair(&key, &value, self->realm);
    }
    if (status != COVE_OK)
        return miss();
    return value_of(&value, self->realm);
}

/* The number of elements, from the library, or else from len(collection), which raises. */
static Py_ssize_t element_count(ElementIterator *self) {
    size_t size = 0;
    cove_status_t status;
    switch (self->walk) {
    case LIST_ELEMENTS:
        UNLOCKED(status = cove_list_size((cove_list_t *)self->handle, &size));
        break;
    case SET_ELEMENTS:
        UNLOCKED(status = cove_set_size((cove_set_t *)self->handle, &size));
        break;
    default:
        UNLOCKED(status = cove_map_size((cove_map_t *)self->handle, &size));
    }
    if (status == COVE_OK)
        return (Py_ssize_t)size;
    return PyObject_Size(self->collection);
}

static PyObject *ElementIterator_next(ElementIterator *self) {
    if (self->count < 0 && (self->count = element_count(self)) < 0) {
        self->count = 0;
        return NULL;
    }
    if (self->next >= self->count)
        return NULL;
    Py_ssize_t index = self->next++;
    PyObject *element = element_at(self, (size_t)index);
    if (element != Miss)
        return element;
    Py_DECREF(element);
    PyObject *i = PyLong_FromSsize_t(index);
    if (i == NULL)
        return NULL;
    element = PyObject_CallOneArg(self->general, i);
    Py_DECREF(i);
    if (element == Done) {
        Py_DECREF(element);
        self->next = self->count;
        return NULL;
    }
    if (element == NULL || (self->walk != MAP_KEYS && self->walk != MAP_VALUES))
        return element;
    /* general() gives a map's entries: the key or the value of one. */
    PyObject *part = NULL;
    if (PyTuple_Check(element) && PyTuple_GET_SIZE(element) == 2)
        part = PyTuple_GET_ITEM(element, self->walk == MAP_KEYS ? 0 : 1);
    else
        PyErr_SetString(PyExc_TypeError, "a map entry is a (key, value) pair");
    Py_XINCREF(part);
    Py_DECREF(element);
    return part;
}

/* iterate_elements(walk, collection_address, collection, realm, general): an ElementIterator;
 * `walk` is LIST_ELEMENTS, SET_ELEMENTS, MAP_KEYS, MAP_VALUES or MAP_ENTRIES (module constants). */
static PyObject *iterate_elements(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyLong_Check(args[0]) || !PyCallable_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "iterate_elements(walk: int, address: int, collection, realm, general)");
        return NULL;
    }
    long walk = PyLong_AsLong(args[0]);
    if (walk < LIST_ELEMENTS || walk > MAP_ENTRIES) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "iterate_elements: an unknown walk");
        return NULL;
    }
    void *handle = handle_at(args[1]);
    if (handle == NULL)
        return NULL;
    ElementIterator *it = PyObject_New(ElementIterator, ElementIteratorType);
    if (it == NULL)
        return NULL;
    it->walk = (int)walk;
    it->count = -1;
    it->next = 0;
    it->handle = handle;
    Py_INCREF(args[2]);
    it->collection = args[2];
    Py_INCREF(args[3]);
    it->realm = args[3];
    Py_INCREF(args[4]);
    it->general = args[4];
    return (PyObject *)it;
}

/* ---- RealmBase: create() and find() of cove.Realm in C -------------------------------------- */

/* RealmBase itself is defined at the top: objects read by keys take the realm's handle from it.
 * Its fields are the realm's references, visited and cleared in a row. */
#define REALM_REFERENCES 4

static int RealmBase_traverse(RealmBase *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    PyObject **references = &self->open;
    for (int i = 0; i < REALM_REFERENCES; i++)
        Py_VISIT(references[i]);
    return 0;
}

static int RealmBase_clear(RealmBase *self) {
    PyObject **references = &self->open;
    for (int i = 0; i < REALM_REFERENCES; i++)
        Py_CLEAR(references[i]);
    return 0;
}

static void RealmBase_dealloc(RealmBase *self) {
    clear_and_free((PyObject *)self, (inquiry)RealmBase_clear);
}

/* What `cache` (a dict of the realm) holds for `cls`, a tuple of `size` items, when the realm is
 * open; else NULL, without an exception (an unhashable cls is the Python path's to refuse). */
static PyObject *cached_for(RealmBase *self, PyObject *cache, PyObject *cls, Py_ssize_t size) {
    PyObject *open = self->open;
    if (open == NULL || !PyList_Check(open) || PyList_GET_SIZE(open) < 1 || PyList_GET_ITEM(open, 0) != Py_True ||
        cache == NULL || !PyDict_CheckExact(cache))
        return NULL;
    PyObject *found = PyDict_GetItemWithError(cache, cls);
    if (found == NULL)
        PyErr_Clear();
    return found != NULL && PyTuple_CheckExact(found) && PyTuple_GET_SIZE(found) == size ? found : NULL;
}

/* self.<method>(*args) with the arguments of a vectorcall, keywords included. */
static PyObject *forward(PyObject *self, PyObject *method, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Py_ssize_t total = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject *small[8], **stack = total < 8 ? small : PyMem_Malloc((size_t)(total + 1) * sizeof(PyObject *));
    if (stack == NULL)
        return PyErr_NoMemory();
    stack[0] = self;
    for (Py_ssize_t i = 0; i < total; i++)
        stack[i + 1] = args[i];
    PyObject *result = PyObject_VectorcallMethod(method, stack, (size_t)(nargs + 1), kwnames);
    if (stack != small)
        PyMem_Free(stack);
    return result;
}

/* realm.create(cls, values=None, update=False). */
static PyObject *RealmBase_create(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    /* update=False, given or not, by position or by name */
    Py_ssize_t named = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    int plain = named == 0 ? (nargs == 1 || nargs == 2 || (nargs == 3 && args[2] == Py_False))
                           : (named == 1 && (nargs == 1 || nargs == 2) && args[nargs] == Py_False &&
                              PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) &&
                              PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "update") == 0);
    if (plain) {
        PyObject *plan = cached_for((RealmBase *)self, ((RealmBase *)self)->plans, args[0], 8);
        if (plan != NULL) {
            /* Plans hold references to what they name; the dict may drop this one meanwhile. */
            Py_INCREF(plan);
            PyObject *made = planned(plan, nargs >= 2 ? args[1] : Py_None, self);
            Py_DECREF(plan);
            if (made != Miss)
                return made;
            Py_DECREF(made);
        }
    }
    return forward(self, str_create_call, args, nargs, kwnames);
}

/* realm.find(cls, primary_key). */
static PyObject *RealmBase_find(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (kwnames == NULL && nargs == 2 && PyLong_CheckExact(args[1])) {
        RealmBase *realm = (RealmBase *)self;
        PyObject *target = cached_for(realm, realm->targets, args[0], 3);
        int ok = 0;
        cove_value_t pk;
        pk.type = COVE_TYPE_INT;
        pk.u.integer = target == NULL ? 0 : int64_argument(args[1], &ok);
        void *handle = target == NULL || !ok ? NULL : PyLong_AsVoidPtr(realm->addr);
        if (handle != NULL && PyBytes_Check(PyTuple_GET_ITEM(target, 0))) {
            Py_INCREF(target);
            cove_object_t *found = NULL;
            cove_status_t status;
            UNLOCKED(status = cove_object_find((cove_realm_t *)handle, PyBytes_AS_STRING(PyTuple_GET_ITEM(target, 0)),
                                               &pk, &found));
            PyObject *made[3] = {PyTuple_GET_ITEM(target, 1), self, PyTuple_GET_ITEM(target, 2)};
            PyObject *result = looked_up(status, found, made);
            Py_DECREF(target);
            if (result != Miss)
                return result;
            Py_DECREF(result);
        }
        PyErr_Clear();
    }
    return forward(self, str_find_call, args, nargs, kwnames);
}

static PyMethodDef RealmBase_methods[] = {
    {"create", (PyCFunction)(void (*)(void))RealmBase_create, METH_FASTCALL | METH_KEYWORDS,
     "create($self, cls, values=None, update=False)\n--\n\n"
     "Creates an object inside a write and sets ``values`` (a dict by property name).\n\n"
     "``cls`` is a class name or a declared class. With a primary key, its value is taken from\n"
     "``values``; ``update=True`` updates the object that already has it instead of raising\n"
     "DuplicateKeyError. Lists, sets and maps take iterables and dicts; a dict for a link to an\n"
     "embedded class creates the embedded object, a dict for another link creates (or with\n"
     "``update``, upserts) the linked object. A declared class's defaults fill what a new\n"
     "object is not given; a required value (not optional, not a collection or link, no\n"
     "default) that a new object of a declared class is not given raises InvalidArgumentError\n"
     "(\"missing value for property 'Dog.name'\"). An unmanaged object given for a link is\n"
     "added (``add``). A link takes an object of this realm, of a frozen copy of it or of\n"
     "another realm open on the same file; an object of a realm on another file raises\n"
     "InvalidArgumentError (here and wherever an object becomes a link or a query argument)."},
    {"find", (PyCFunction)(void (*)(void))RealmBase_find, METH_FASTCALL | METH_KEYWORDS,
     "find($self, cls, primary_key)\n--\n\nThe object of ``cls`` with that primary key, or None."},
    {NULL},
};

static PyMemberDef RealmBase_members[] = {
    {"_open", T_OBJECT_EX, offsetof(RealmBase, open), 0, "[True] while the realm's handle is held"},
    {"_addr", T_OBJECT_EX, offsetof(RealmBase, addr), 0, "the address of the realm's handle"},
    {"_create_plans", T_OBJECT_EX, offsetof(RealmBase, plans), 0, "create()'s plans by cls"},
    {"_targets", T_OBJECT_EX, offsetof(RealmBase, targets), 0, "find()'s targets by cls"},
    {NULL},
};

static const PyType_Slot RealmBase_more[] = {
    {Py_tp_methods, RealmBase_methods},
    {Py_tp_members, RealmBase_members},
    {0, NULL},
};

/* ---- the module ------------------------------------------------------------------------------ */

/* manage(obj, realm, address, class_name): gives an object made without a handle (an unmanaged
 * cove.Object, made by calling its class) the handle at `address`, whose reference it takes
 * over, its realm and its class name: from then on its attributes read and write that object.
 * An object that has a handle already, or is read by keys, keeps what it has (TypeError, the
 * reference released). */
static PyObject *manage(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyObject_TypeCheck(args[0], ObjectBaseType) || !PyUnicode_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "manage(obj, realm, address: int, class_name: str)");
        return NULL;
    }
    void *handle = handle_at(args[2]);
    if (handle == NULL)
        return NULL;
    ObjectBase *obj = (ObjectBase *)args[0];
    if (obj->handle != NULL || obj->props != NULL) {
        UNLOCKED(cove_release(handle));
        PyErr_SetString(PyExc_TypeError, "manage: the object has a handle already, or is read by keys");
        return NULL;
    }
    obj->handle = handle;
    Py_INCREF(args[1]);
    Py_XSETREF(obj->realm, args[1]);
    Py_INCREF(args[3]);
    Py_XSETREF(obj->class_name, args[3]);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"adopt", (PyCFunction)(void (*)(void))adopt, METH_FASTCALL,
     "adopt(cls, realm, address, class_name): an object that takes over the handle at address"},
    {"manage", (PyCFunction)(void (*)(void))manage, METH_FASTCALL,
     "manage(obj, realm, address, class_name): an object without a handle takes over the one at address"},
    {"find_int", (PyCFunction)(void (*)(void))find_int, METH_FASTCALL,
     "find_int(realm, class_name, key, cls, realm, class_name): the object with that int primary key, None, or MISS"},
    {"object_by_key", (PyCFunction)(void (*)(void))object_by_key, METH_FASTCALL,
     "object_by_key(realm, class_name, key, cls, realm, class_name): the object with that object key, None, or MISS"},
    {"list_element", (PyCFunction)(void (*)(void))list_element, METH_FASTCALL,
     "list_element(list, index, realm): the element at index of a list, or MISS"},
    {"set_element", (PyCFunction)(void (*)(void))set_element, METH_FASTCALL,
     "set_element(set, index, realm): the element at index of a set, or MISS"},
    {"set_value", (PyCFunction)(void (*)(void))set_value, METH_FASTCALL,
     "set_value(object, name, value): sets a property of a plain type, or MISS"},
    {"list_insert", (PyCFunction)(void (*)(void))list_insert, METH_FASTCALL,
     "list_insert(list, index, value): inserts a value of a plain type, or MISS"},
    {"list_set", (PyCFunction)(void (*)(void))list_set, METH_FASTCALL,
     "list_set(list, index, value): sets a value of a plain type, or MISS"},
    {"list_append", (PyCFunction)(void (*)(void))list_append, METH_FASTCALL,
     "list_append(list, value): appends a value of a plain type, or MISS"},
    {"map_store", (PyCFunction)(void (*)(void))map_store, METH_FASTCALL,
     "map_store(map, key: str, value): stores a value of a plain type, or MISS"},
    {"set_add", (PyCFunction)(void (*)(void))set_add, METH_FASTCALL,
     "set_add(set, value): adds a value of a plain type, or MISS"},
    {"map_set", (PyCFunction)(void (*)(void))map_set, METH_FASTCALL,
     "map_set(map, key, value): stores a value of a plain type, or MISS"},
    {"map_entry", (PyCFunction)(void (*)(void))map_entry, METH_FASTCALL,
     "map_entry(map, index, realm): the (key, value) entry at index of a map, or MISS"},
    {"map_value", (PyCFunction)(void (*)(void))map_value, METH_FASTCALL,
     "map_value(map, key, realm): the value of key in a map, MISSING, or MISS"},
    {"results_object", (PyCFunction)(void (*)(void))results_object, METH_FASTCALL,
     "results_object(results, index, cls, realm, class_name): the object at index of results, or MISS"},
    {"take", (PyCFunction)(void (*)(void))take, METH_FASTCALL,
     "take(iterator, keys, rows, limit): moves rows with exactly these keys into rows"},
    {"create", (PyCFunction)(void (*)(void))create, METH_FASTCALL,
     "create(realm, class_name, names, row, realm, cls, class_name): a new object from plain values and links, or MISS"},
    {"iterate_objects", (PyCFunction)(void (*)(void))iterate_objects, METH_FASTCALL,
     "iterate_objects(results, realm, class_key, props, cls, realm, class_name, open, general): the objects of results"},
    {"iterate_elements", (PyCFunction)(void (*)(void))iterate_elements, METH_FASTCALL,
     "iterate_elements(walk, address, collection, realm, general): the elements of a list, set or map"},
    {"pack", (PyCFunction)(void (*)(void))pack, METH_FASTCALL,
     "pack(rows, n, buffer, realm): writes the rows' plain values and objects of realm; the indices left for Python"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cove._speedups",
    .m_doc = "The binding's per-value hot paths in C: attribute reads, lookups by int key, bulk rows.",
    .m_size = -1,
    .m_methods = methods,
};

static PyObject *sentinel(PyObject *module, const char *name) {
    PyObject *o = PyObject_CallObject((PyObject *)&PyBaseObject_Type, NULL);
    if (o == NULL || PyModule_AddObjectRef(module, name, o) < 0) {
        Py_XDECREF(o);
        return NULL;
    }
    return o;
}

PyMODINIT_FUNC PyInit__speedups(void) {
    /* The layout pack() writes is the header's. */
    _Static_assert(sizeof(cove_value_t) == 24, "cove_value_t is three 8-byte words");
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    PyObject *accessor = PyType_FromSpec(&Accessor_spec);
    if (accessor == NULL || PyModule_AddObjectRef(module, "Accessor", accessor) < 0)
        goto fail;
    Py_DECREF(accessor);
    accessor = NULL;
    if ((Miss = sentinel(module, "MISS")) == NULL || (Done = sentinel(module, "DONE")) == NULL ||
        (Full = sentinel(module, "FULL")) == NULL || (Missing = sentinel(module, "MISSING")) == NULL)
        goto fail;
    ObjectBaseType = base_type("cove._speedups.ObjectBase",
                               "The handle, realm and class name of a cove.Object; plain attribute writes in C.",
                               sizeof(ObjectBase), (destructor)ObjectBase_dealloc, (traverseproc)ObjectBase_traverse,
                               (inquiry)ObjectBase_clear, ObjectBase_more);
    if (ObjectBaseType == NULL || PyModule_AddObjectRef(module, "ObjectBase", (PyObject *)ObjectBaseType) < 0)
        goto fail;
    if ((str_addr = PyUnicode_InternFromString("_addr")) == NULL ||
        (str_get = PyUnicode_InternFromString("_get")) == NULL ||
        (str_setattr = PyUnicode_InternFromString("_setattr")) == NULL ||
        (str_create_call = PyUnicode_InternFromString("_create_call")) == NULL ||
        (str_find_call = PyUnicode_InternFromString("_find_call")) == NULL ||
        (str_object_handle = PyUnicode_InternFromString("_object_handle")) == NULL ||
        (str_open = PyUnicode_InternFromString("_open")) == NULL ||
        (str_link_classes = PyUnicode_InternFromString("_link_classes")) == NULL)
        goto fail;
    RealmBaseType = base_type(
        "cove._speedups.RealmBase", "The C part of cove.Realm: create() and find() without a Python frame.",
        sizeof(RealmBase), (destructor)RealmBase_dealloc, (traverseproc)RealmBase_traverse, (inquiry)RealmBase_clear,
        RealmBase_more);
    if (RealmBaseType == NULL || PyModule_AddObjectRef(module, "RealmBase", (PyObject *)RealmBaseType) < 0)
        goto fail;
    ObjectIteratorType = iterator_type("cove._speedups.ObjectIterator",
                                       "The objects of results, read as the iteration reaches them.",
                                       sizeof(ObjectIterator), (destructor)ObjectIterator_dealloc,
                                       (iternextfunc)ObjectIterator_next);
    ElementIteratorType = iterator_type("cove._speedups.ElementIterator",
                                        "The elements of a list, set or map, read as the iteration reaches them.",
                                        sizeof(ElementIterator), (destructor)ElementIterator_dealloc,
                                        (iternextfunc)ElementIterator_next);
    if (ObjectIteratorType == NULL || ElementIteratorType == NULL)
        goto fail;
    if (PyModule_AddIntConstant(module, "VALUE_SIZE", (long)sizeof(cove_value_t)) < 0 ||
        PyModule_AddIntConstant(module, "LIST_ELEMENTS", LIST_ELEMENTS) < 0 ||
        PyModule_AddIntConstant(module, "SET_ELEMENTS", SET_ELEMENTS) < 0 ||
        PyModule_AddIntConstant(module, "MAP_KEYS", MAP_KEYS) < 0 ||
        PyModule_AddIntConstant(module, "MAP_VALUES", MAP_VALUES) < 0 ||
        PyModule_AddIntConstant(module, "MAP_ENTRIES", MAP_ENTRIES) < 0)
        goto fail;
    return module;
fail:
    Py_XDECREF(accessor);
    Py_DECREF(module);
    return NULL;
}
