"""Where prepared models live, and how an entry is known to be complete.

Root: ``$CONTRASTCAT_CACHE`` if set, else ``$XDG_CACHE_HOME/contrastcat``,
else ``~/.cache/contrastcat``. An entry ``models/<name>/`` holds a
``save_pretrained`` model and tokenizer and ``contrastcat-model.json``; it is
built in a temporary sibling folder and renamed into place only when
complete, and the metadata records the weights' fingerprint, so a partial or
altered entry is detected (and rebuilt), never silently used.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

METADATA = "contrastcat-model.json"
CACHE_ENV = "CONTRASTCAT_CACHE"
RECIPE_VERSION = 1  # of the training recipe: an entry of another version is prepared again
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def cache_root() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "contrastcat"


def entry_dir(name: str) -> Path:
    return cache_root() / "models" / name


def read_metadata(directory: Path) -> dict | None:
    try:
        return json.loads((directory / METADATA).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def staging_dir(name: str) -> Path:
    parent = cache_root() / "models"
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=parent))


def install(staging: Path, name: str, metadata: dict) -> Path:
    """Write the metadata last, then move the finished folder into place."""
    (staging / METADATA).write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    target = entry_dir(name)
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)
    return target


def discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def entry_status(name: str, quick: bool = False) -> tuple[bool, str]:
    """(ready, why not) for the cache entry of ``name``."""
    directory = entry_dir(name)
    if not directory.exists():
        return False, "not prepared yet"
    metadata = read_metadata(directory)
    if not isinstance(metadata, dict):  # missing, unreadable, or JSON of another shape
        return False, "metadata missing or unreadable (partial entry)"
    if metadata.get("name") != name or metadata.get("recipe_version") != RECIPE_VERSION:
        return False, "made by another version of the recipe"
    if bool(metadata.get("quick")) != quick:
        return False, "a quick test build" if not quick else "a full build, not a quick one"
    missing = [f for f in REQUIRED_FILES if not (directory / f).is_file()]
    if missing:
        return False, f"missing {', '.join(missing)}"
    return True, ""
