# Builds the `cove` wheel: a cffi extension (API mode) compiled against include/cove.h, with
# libcove.so carried inside the package. The declarations come from the header itself
# (`cc -E -P -DCOVE_CDEF include/cove.h`), never copied by hand.
#
# libcove.so: set COVE_LIBRARY to a libcove.so that the project's CMake build already made, so
# the Swift sources compile once; without it, this script runs that CMake build itself.
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
INCLUDE = os.path.join(ROOT, "include")
PACKAGE = os.path.join(HERE, "cove")
SHIPPED = os.path.join(PACKAGE, "libcove.so.0")


def _build_libcove() -> str:
    """Runs the CMake build of libcove.so and returns its path."""
    build = os.path.join(HERE, "build", "cmake")
    subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"])
    subprocess.check_call(["cmake", "--build", build, "--target", "cove"])
    return os.path.join(build, "libcove.so")


def _prepare_library() -> str:
    """Copies libcove.so into the package and returns a folder to link the extension against."""
    source = os.environ.get("COVE_LIBRARY") or _build_libcove()
    if not os.path.isfile(source):
        sys.exit(f"COVE_LIBRARY={source} is not a file")
    shutil.copyfile(os.path.realpath(source), SHIPPED)
    link_dir = tempfile.mkdtemp(prefix="cove-link-")
    os.symlink(SHIPPED, os.path.join(link_dir, "libcove.so"))
    return link_dir


# Python functions the library calls back (cffi's extern "Python"), each declared when the header
# has the name it is keyed by.
_CALLBACKS = {
    "cove_migration_fn": 'extern "Python" bool _cove_migration_cb(void*, cove_migration_t*);',
    "cove_should_compact_fn": 'extern "Python" bool _cove_should_compact_cb(void*, uint64_t, uint64_t);',
    "cove_migration_object_fn": 'extern "Python" bool _cove_migration_object_cb(void*, cove_object_t*, cove_object_t*);',
    "cove_collection_cb": 'extern "Python" void _cove_collection_cb(void*, const cove_collection_changes_t*);',
    "cove_map_cb": 'extern "Python" void _cove_map_cb(void*, const cove_map_changes_t*);',
    "cove_object_cb": 'extern "Python" void _cove_object_cb(void*, const cove_object_changes_t*);',
    # the free_userdata of notification tokens
    "cove_token_invalidate": 'extern "Python" void _cove_free_observation(void*);',
    "cove_sectioned_cb": 'extern "Python" void _cove_sectioned_cb(void*, const cove_sectioned_changes_t*);',
    "cove_section_key_fn": 'extern "Python" cove_status_t _cove_section_key_cb(void*, cove_object_t*, cove_value_t*);',
    # the free_userdata of a key function's sectioned results
    "cove_results_sectioned_by": 'extern "Python" void _cove_free_section_key(void*);',
    "cove_subscribe_cb": 'extern "Python" void _cove_subscribe_cb(void*, cove_status_t, const char*);',
    # the free_userdata of an awaited subscribe
    "cove_results_subscribe": 'extern "Python" void _cove_free_subscribe(void*);',
}


def _cdef() -> str:
    cc = os.environ.get("CC", "cc")
    cdef = subprocess.check_output([cc, "-E", "-P", "-DCOVE_CDEF", os.path.join(INCLUDE, "cove.h")], text=True)
    return cdef + "\n".join(decl for name, decl in _CALLBACKS.items() if name in cdef) + "\n"


def _ffibuilder():
    from cffi import FFI

    ffi = FFI()
    ffi.cdef(_cdef())
    ffi.set_source(
        "cove._cove_ffi",
        '#include "cove.h"',
        include_dirs=[INCLUDE],
        library_dirs=[LINK_DIR],
        libraries=["cove"],
        extra_link_args=["-Wl,-rpath,$ORIGIN"],
    )
    return ffi


def _speedups():
    """The C module of the binding's per-value hot paths (cove/_speedups.c), linked like the cffi
    module against the libcove.so the package carries."""
    from setuptools import Extension

    return Extension(
        "cove._speedups",
        sources=[os.path.join("cove", "_speedups.c")],
        include_dirs=[INCLUDE],
        library_dirs=[LINK_DIR],
        libraries=["cove"],
        extra_compile_args=["-O2"],
        extra_link_args=["-Wl,-rpath,$ORIGIN"],
    )


BUILDING = any(a in sys.argv for a in ("build", "build_ext", "build_py", "bdist_wheel", "install", "develop", "editable_wheel"))
ext_modules = []
if BUILDING:
    LINK_DIR = _prepare_library()
    ext_modules = [_ffibuilder().distutils_extension(), _speedups()]

setup(ext_modules=ext_modules, zip_safe=False)
