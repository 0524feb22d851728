"""The reference library: selection (docs/spec.md §2), building, and the HDF5 file.

Each name is imported from its module on first use (``contrastcat.lazy``)."""

from ..lazy import lazy_names

LAZY = {
    "FORMAT": "schema",
    "SCHEMA_VERSION": "schema",
    "BuildSettings": "build",
    "BuildReport": "build",
    "ClassSelection": "select",
    "LibraryInfo": "schema",
    "RefLibrary": "reader",
    "ReferenceEntry": "schema",
    "Selection": "select",
    "SelectionSettings": "select",
    "build_library": "build",
    "select_references": "select",
}
__all__ = list(LAZY)
__getattr__, __dir__ = lazy_names(__name__, LAZY)
