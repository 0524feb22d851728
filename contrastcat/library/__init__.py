"""The reference library: selection (docs/spec.md §2), building, and the HDF5 file."""

from .build import BuildReport, BuildSettings, build_library
from .reader import RefLibrary
from .schema import FORMAT, SCHEMA_VERSION, LibraryInfo, ReferenceEntry
from .select import ClassSelection, Selection, SelectionSettings, select_references

__all__ = [
    "FORMAT",
    "SCHEMA_VERSION",
    "BuildSettings",
    "BuildReport",
    "ClassSelection",
    "LibraryInfo",
    "RefLibrary",
    "ReferenceEntry",
    "Selection",
    "SelectionSettings",
    "build_library",
    "select_references",
]
