"""The docs say what the code has: the library layout comes from schema.py, the layout of the
code names files that exist, the links of the README and of docs/ resolve, and the README stays a
front page whose input lines are ones `explain` reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

from contrastcat.library.schema import PROSE_MARK, layout_markdown
from contrastcat.records.inputs import InputFields, InputFile

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


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


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a Markdown file's headings (lower case, punctuation dropped,
    spaces as hyphens, -1, -2 … for repeats); headings inside fenced blocks are not headings."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(path: Path) -> list[tuple[str, str]]:
    """(path, anchor) of each relative Markdown link of a file; fenced blocks left out."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    return [tuple(link.partition("#")[::2]) for link in links if not re.match(r"[a-z]+:", link)]


def test_readme_links_resolve():
    """Every link of the README names a file that exists and, into Markdown, a heading it has."""
    links = _links(README)
    assert "docs/models.md" in [path for path, _ in links]
    missing = []
    for path, anchor in links:
        target = ROOT / (path or "README.md")
        if not target.exists() or anchor and target.suffix == ".md" and anchor not in _anchors(target):
            missing.append(f"{path}#{anchor}" if anchor else path)
    assert missing == [], f"README.md links to files or headings that do not exist: {missing}"


def test_docs_links_resolve():
    """Every link in docs/*.md names a file that exists, relative to docs/, and, into Markdown, a heading it has."""
    missing = []
    for doc in sorted((ROOT / "docs").glob("*.md")):
        for path, anchor in _links(doc):
            target = doc.parent / path if path else doc
            if not target.exists() or anchor and target.suffix == ".md" and anchor not in _anchors(target):
                missing.append(f"{doc.name}: {path}#{anchor}" if anchor else f"{doc.name}: {path}")
    assert missing == []


def test_readme_is_a_front_page():
    """The README is an introduction of at most 12,000 characters; results and timings live in docs/."""
    size = len(README.read_bytes())
    assert size <= 12_000, f"README.md has {size} bytes (wc -c), more than 12,000: move detail into docs/"


def _readme_json_lines() -> list[tuple[int, str]]:
    """(line number, text) of every line inside a ```json block of the README."""
    found = []
    lines = README.read_text(encoding="utf-8").splitlines()
    inside = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            inside = not inside and line.strip() == "```json"
        elif inside and line.strip():
            found.append((number, line))
    return found


def test_readme_input_lines_are_read_by_explain(tmp_path):
    """Each ```json line of the README is an input that explain's own reader takes, with the fields
    the README's commands name (--text-field, --pair-field); a single-text one comes in the first 60
    lines, so a newcomer sees what to feed the tool before anything else."""
    text = README.read_text(encoding="utf-8")
    text_fields = {"text", *re.findall(r"--text-field (\w+)", text)}
    pair_fields = set(re.findall(r"--pair-field (\w+)", text))
    found = _readme_json_lines()
    assert found, "the README shows no input line"
    singles = []
    for number, line in found:
        obj = json.loads(line)
        assert isinstance(obj, dict), f"README.md:{number}: not an object"
        text_field = next((f for f in ("text", *sorted(text_fields)) if f in obj), "text")
        pair_field = next((f for f in sorted(pair_fields) if f in obj), None)
        path = tmp_path / f"line{number}.jsonl"
        path.write_text(line + "\n", encoding="utf-8")
        source = InputFile(str(path), InputFields(text=text_field, pair=pair_field))
        try:
            rows = list(source.rows())  # raises BadInput on a line explain refuses
        finally:
            source.close()
        assert [(row.text, row.pair) for row in rows] == [(obj[text_field], obj.get(pair_field))], number
        if text_field == "text" and pair_field is None and "pair" not in obj:
            singles.append(number)
    assert singles and singles[0] <= 60, f"the first single-text input line is line {singles[:1]}, not in the first 60"
