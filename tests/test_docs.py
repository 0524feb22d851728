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
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    block = text.split("```", 2)[1]
    folder = ""
    named = []
    for line in block.splitlines():
        head = re.split(r"\s{2,}", line.strip())[0] if line.strip() else ""
        if not head or line.startswith(" " * 8):  # a description's continuation line
            continue
        indented = line.startswith("  ")
        for name in re.split(r",\s*", head):
            if not re.fullmatch(r"[\w./]+", name):
                continue
            if name.endswith("/") and not indented:
                folder = name
                named.append(name)
            else:
                named.append((folder if indented else "") + name)
    assert "contrastcat/models/" in named and "contrastcat/pipeline.py" in named
    missing = [name for name in named if not (ROOT / name).exists()]
    assert missing == [], missing


def test_readme_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert "docs/models.md" in links
    assert [link for link in links if not link.startswith("http") and not (ROOT / link).exists()] == []
