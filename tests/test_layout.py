"""The package layout is the pipeline: every import points down the rank table, and nothing cycles.

Checked over ``contrastcat/`` and ``cli/`` (installed as ``contrastcat_cli``), with imports
inside functions and under ``TYPE_CHECKING`` counted like any other: a lazy import is
there to keep start-up fast, never to hide an upward dependency or a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lowest first. A module may import from its own part and from parts of a lower rank only.
RANKS = {
    "contrastcat.version": 0,  # the release number
    "contrastcat.errors": 0,  # the exception family
    "contrastcat.lazy": 0,  # a package's names imported on first use (PEP 562)
    "contrastcat.arguments": 1,  # argument checks every layer shares
    "contrastcat.spec": 1,  # command options, each defined once: flag, keyword, check
    "contrastcat.scaling": 1,  # min–max scaling, the one definition
    "contrastcat.io": 2,  # safe output files, strict JSON, input lines
    "contrastcat.records": 3,  # input rows, labelled data, attribution records
    "contrastcat.models": 4,  # name -> classifier, families, tokenising, forward passes, the zoo
    "contrastcat.capture": 5,  # one forward and backward, extra passes, LRP rules
    "contrastcat.deletion": 6,  # perturb -> predict -> drop
    "contrastcat.methods": 7,  # attribution methods: functions of what was captured
    "contrastcat.library": 8,  # reference selection, building, the HDF5 file
    "contrastcat.attribution": 9,  # the explain use case
    "contrastcat.output": 10,  # writing a run: checkpoint/resume, shards, torchrun
    "contrastcat.evaluation": 11,  # measures on arrays, statistics, reports, gates (see APART)
    "contrastcat.views": 12,  # spans, terminal, HTML, plots
    "contrastcat.testing": 13,  # toy and tiny models for tests and demos
    "contrastcat.usecases": 14,  # each command's options and its use case on files
    "contrastcat.api": 15,  # the public functions
    "contrastcat": 16,  # the package itself: the lazy public names
    "contrastcat_cli": 17,  # parses, calls the API, prints, exit codes
}
SOURCES = {"contrastcat": ROOT / "contrastcat", "contrastcat_cli": ROOT / "cli"}


def modules(sources: dict[str, Path]) -> dict[str, Path]:
    found = {}
    for package, folder in sources.items():
        for path in folder.rglob("*.py"):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every known module ``name`` imports, anywhere in its body."""
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
                targets.add(submodule if submodule in known else stem)
        elif isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif _is_lazy_table(node):  # a package's LAZY names: imports made on first use (contrastcat.lazy)
            for value in node.value.values:
                module = value.value
                dots = len(module) - len(module.lstrip(".")) or 1
                base = package.split(".")[: len(package.split(".")) - dots + 1]
                targets.add(".".join(base + [module.lstrip(".")]))
    resolved = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            resolved.add(target)
    return resolved


def _is_lazy_table(node: ast.AST) -> bool:
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "LAZY" and isinstance(node.value, ast.Dict)
            and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.value.values))


def part(module: str) -> str:
    """The row of the rank table a module belongs to (its longest prefix there)."""
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        if ".".join(parts[:cut]) in RANKS:
            return ".".join(parts[:cut])
    raise AssertionError(f"{module} has no row in the rank table")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for source, targets in graph.items():
        for target in targets:
            if part(source) != part(target) and RANKS[part(target)] >= RANKS[part(source)]:
                wrong.append(f"{source} imports {target} ({part(target)} is not below {part(source)})")
    return sorted(wrong)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Module-level cycles (Tarjan's strongly connected components larger than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for step in graph.get(node, ()):
            if step not in index:
                visit(step)
                low[node] = min(low[node], low[step])
            elif step in on_stack:
                low[node] = min(low[node], index[step])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_graph(sources: dict[str, Path]) -> dict[str, set[str]]:
    known = modules(sources)
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_import_points_down_the_rank_table():
    graph = import_graph(SOURCES)
    assert upward_imports(graph) == []


def test_no_module_imports_itself_back():
    assert cycles(import_graph(SOURCES)) == []


def test_every_part_of_the_tree_has_a_rank():
    for module in modules(SOURCES):
        part(module)
    folders = {p.name for p in (ROOT / "contrastcat").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert {f"contrastcat.{name}" for name in folders} <= RANKS.keys()


def small_tree(root: Path, files: dict[str, str]) -> dict[str, set[str]]:
    """The import graph of a package ``contrastcat`` made of ``files`` (path -> source)."""
    package = root / "contrastcat"
    for name, source in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in (path.parent, package):
            (folder / "__init__.py").touch()
        path.write_text(source)
    return import_graph({"contrastcat": package})


def test_the_check_sees_an_upward_import_a_hidden_one_and_a_cycle(tmp_path):
    """The rules above can fail: a small tree with each kind of mistake."""
    graph = small_tree(tmp_path, {
        "records/record.py": "def shown():\n    from ..models import forward\n",
        "models/forward.py": "from ..records import record\n",
        "models/a.py": "from . import b\n",
        "models/b.py": "from .a import x\n",
    })
    assert upward_imports(graph) == [
        "contrastcat.records.record imports contrastcat.models.forward "
        "(contrastcat.models is not below contrastcat.records)"
    ]
    assert sorted(cycles(graph)) == [
        ["contrastcat.models.a", "contrastcat.models.b"],
        ["contrastcat.models.forward", "contrastcat.records.record"],
    ]


# Parts a package may not import although they rank below it. The measures of evaluation/ take
# arrays and a function from token ids to probabilities (as Captum's metrics take tensors and a
# forward function); turning attribution records into those, and explaining again, is the use
# cases' work.
APART = {"contrastcat.evaluation": ("contrastcat.records", "contrastcat.attribution", "contrastcat.library")}


def imports_kept_apart(graph: dict[str, set[str]], apart: dict[str, tuple[str, ...]]) -> list[str]:
    wrong = []
    for source, targets in graph.items():
        for target in targets:
            if part(target) in apart.get(part(source), ()):
                wrong.append(f"{source} imports {target}")
    return sorted(wrong)


def test_the_measures_take_arrays_not_records():
    assert imports_kept_apart(import_graph(SOURCES), APART) == []


def test_the_kept_apart_check_can_fail(tmp_path):
    graph = small_tree(tmp_path, {
        "records/record.py": "x = 1\n",
        "evaluation/curves.py": "def f():\n    from ..records.record import x\n",
    })
    assert upward_imports(graph) == []
    assert imports_kept_apart(graph, APART) == ["contrastcat.evaluation.curves imports contrastcat.records.record"]


# What the CLI may import of the package: the public calls, the exceptions, the package itself.
PUBLIC = {"contrastcat", "contrastcat.api", "contrastcat.errors"}


def private_imports(cli: Path) -> list[str]:
    """``cli/x.py:12 imports contrastcat.models.zoo`` for every import of the package beyond PUBLIC."""
    found = []
    for path in sorted(cli.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[0] == "contrastcat" and name not in PUBLIC:
                    found.append(f"{path.name}:{node.lineno} imports {name}")
    return found


def long_commands(cli: Path, limit: int) -> list[str]:
    """Functions of ``cli/`` of ``limit`` lines or more, signature and docstring included."""
    found = []
    for path in sorted(cli.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if node.end_lineno - first + 1 >= limit:
                    found.append(f"{path.name}:{node.name} {node.end_lineno - first + 1} lines")
    return found


def test_the_cli_only_calls_the_public_api():
    assert private_imports(ROOT / "cli") == []


def test_no_cli_function_is_long():
    """cli/ parses, calls one public function, prints: nothing there needs 50 lines."""
    assert long_commands(ROOT / "cli", 50) == []


def test_the_cli_checks_can_fail(tmp_path):
    (tmp_path / "x.py").write_text(
        "import contrastcat.api\nfrom contrastcat.models.zoo import EMBEDDED\n\n"
        "def run():\n    from contrastcat.evaluation import metrics\n" + "    x = 1\n" * 48
    )
    assert private_imports(tmp_path) == ["x.py:2 imports contrastcat.models.zoo", "x.py:5 imports contrastcat.evaluation"]
    assert long_commands(tmp_path, 50) == ["x.py:run 50 lines"]


def cross_test_imports(tests: Path) -> list[str]:
    """Test files that import another test file or conftest (shared code lives in helpers.py)."""
    found = []
    for path in sorted(tests.rglob("test_*.py")) + sorted(tests.rglob("conftest.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + ([alias.name for alias in node.names] if not node.module else [])
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                last = name.rpartition(".")[2]
                if last.startswith("test_") or (last == "conftest" and path.name != "conftest.py"):
                    found.append(f"{path.name}:{node.lineno} imports {name}")
    return found


def test_no_test_file_imports_another():
    assert cross_test_imports(ROOT / "tests") == []


def test_the_test_import_check_can_fail(tmp_path):
    (tmp_path / "test_a.py").write_text("from .test_b import x\nfrom . import conftest\nfrom .helpers import y\n")
    assert cross_test_imports(tmp_path) == ["test_a.py:1 imports test_b", "test_a.py:2 imports conftest"]


def test_no_lazy_name_is_a_module_of_its_package():
    """Importing a package's module binds the module's name in the package: a public name spelled
    as one of its modules would then be that module, not the name (``contrastcat.lazy``)."""
    clashes = []
    for name, path in modules(SOURCES).items():
        if path.name != "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _is_lazy_table(node):
                for key in node.value.keys:
                    if (path.parent / f"{key.value}.py").exists() or (path.parent / key.value / "__init__.py").exists():
                        clashes.append(f"{name}.{key.value}")
    assert clashes == []
