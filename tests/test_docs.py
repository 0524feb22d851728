"""The docs say what the code has: the library layout comes from schema.py, the layout of the
code names files that exist, and the README's links resolve."""

from __future__ import annotations

import re
from pathlib import Path

from contrastcat.library.schema import PROSE_MARK, layout_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_library_file_doc_is_generated_from_the_schema():
    text = (ROOT / "docs" / "library-file.md").read_text(encoding="utf-8")
    prose = text.split(PROSE_MARK + "\n", 1)[1]
    assert text == layout_markdown(prose), "docs/library-file.md is stale: run make docs"


def test_every_file_named_in_the_code_layout_exists():
    """Each entry of docs/development.md's tree exists, and so does every module its description names."""
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    block = text.split("```", 2)[1]
    top, entry = "", ""
    named: list[str] = []
    modules: list[tuple[str, str]] = []  # (folder the description is about, a module it names)
    for line in block.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" " * 8):  # an entry, not a description's continuation line
            head = re.split(r"\s{2,}", line.strip())[0]
            indented = line.startswith("  ")
            names = [n for n in re.split(r",\s*", head) if re.fullmatch(r"[\w./]+", n)]
            for name in names:
                if name.endswith("/") and not indented:
                    top = name
                named.append((top if indented else "") + name)
            entry = (top if indented else "") + (names[0] if names and names[0].endswith("/") else "")
        for module in re.findall(r"\b(\w+\.py)\b", line):
            if line.startswith(module):  # a top-level file is an entry of its own (setup.py), not a module named
                continue
            modules.append((entry or top, module))
    assert "contrastcat/models/" in named and "contrastcat/attribution/" in named
    missing = [name for name in named if not (ROOT / name).exists()]
    missing += [f"{folder}{module}" for folder, module in modules if not list((ROOT / folder).rglob(module))]
    assert missing == [], missing


def test_readme_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert "docs/models.md" in links
    assert [link for link in links if not link.startswith("http") and not (ROOT / link).exists()] == []
