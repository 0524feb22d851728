"""The package layout follows the data flow: no import cycles, function-level imports included.

Models load checkpoints, zoo trains the embedded ones on top of models, and
``resolve`` (names -> classifiers) sits above both; nothing below imports up.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "contrastcat"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every contrastcat module ``name`` imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            for alias in node.names:
                submodule = f"{stem}.{alias.name}"
                targets.add(submodule if submodule in modules else stem)
        elif isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
    resolved = set()
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target.startswith("contrastcat") and target != name:
            resolved.add(target)
    return resolved


def _unit(module: str) -> str:
    """A subpackage (contrastcat.models) or a top-level module (contrastcat.pipeline)."""
    return ".".join(module.split(".")[:2])


def test_no_import_cycle_between_parts_of_the_package():
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        for target in _imports(name, path, modules):
            if _unit(name) != _unit(target) and "contrastcat" not in (_unit(name), _unit(target)):
                graph.setdefault(_unit(name), set()).add(_unit(target))
    assert graph["contrastcat.resolve"] >= {"contrastcat.models", "contrastcat.zoo", "contrastcat.aliases"}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for step in graph.get(start, ()):
            if step == goal or (step not in seen and not seen.add(step) and reaches(step, goal, seen)):
                return True
        return False

    cycles = sorted(unit for unit in graph if reaches(unit, unit, set()))
    assert cycles == [], f"import cycles through {cycles}"
    assert not reaches("contrastcat.models", "contrastcat.zoo", set())
