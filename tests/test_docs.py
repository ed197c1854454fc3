"""The README and docs/: short README, two set-up commands, working links, well-formed generated blocks.

* every ``<!-- gen:NAME -->`` block in README.md and docs/*.md has a generator in
  ``tools.regen_docs`` and a closing marker, and every generator has a block;
* the blocks generated from code alone (no measurement) are what the code renders now;
* every relative link of README.md and docs/*.md points to a file that exists
  (and to a heading that exists, for ``#anchor`` links into Markdown files);
* README.md has at most 300 lines and exactly two commands in its set-up block;
* no Markdown file of the repository links outside it (no ``../shared``);
* CHANGELOG.md is in Keep a Changelog's form: version headings (``[Unreleased]``, then
  ``[X.Y.Z] - YYYY-MM-DD``, newest first), its six kinds of change as the headings under them,
  entries of one to three lines, no line over 400 characters, each entry linking the docs page
  of its detail, every link to a file and heading that exist.
"""

from __future__ import annotations

import datetime
import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tools/ is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))

from tools import regen_docs as rd  # noqa: E402

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
#: Folders that are not the repository's own Markdown (environments, caches, build output).
SKIP_DIRS = {".git", ".venv", ".venv-rllib", "build", "_build", "_generated", "dist", "node_modules", ".mypy_cache",
             ".pytest_cache", ".hypothesis", "runs", "__pycache__"}
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def repo_markdown() -> list[Path]:
    out = []
    for p in ROOT.rglob("*.md"):
        rel = p.relative_to(ROOT).parts
        if any(part in SKIP_DIRS or part.startswith(".venv") or part.endswith(".egg-info") for part in rel[:-1]):
            continue
        out.append(p)
    return sorted(out)


def prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code (links there are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    return LINK.findall(prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading counts by its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path, max_level: int = 6) -> set[str]:
    """The ``#anchor`` of every heading of ``path`` down to ``max_level`` (``####``: 4)."""
    seen: dict[str, int] = {}
    out = set()
    for m in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        s = slug(m.group(2))
        n = seen.get(s, 0)
        seen[s] = n + 1
        if len(m.group(1)) <= max_level:
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target))


# --------------------------------------------------------------------------- generated blocks
def test_gen_blocks_are_closed_and_known():
    found: set[str] = set()
    for path in DOCS:
        blocks = rd.find_blocks(path.read_text(encoding="utf-8"), _name(path))  # raises on unclosed markers
        for b in blocks:
            assert b.name in rd.GENERATORS, f"{_name(path)}:{b.line}: no generator for gen:{b.name}"
            found.add(b.name)
    assert set(rd.GENERATORS) <= found, f"generators without a block: {sorted(set(rd.GENERATORS) - found)}"


@pytest.mark.parametrize("text, message", [
    ("a\n<!-- gen:x -->\nb\n", "never closed"),
    ("<!-- /gen:x -->\n", "closes no block"),
    ("<!-- gen:x -->\n<!-- /gen:y -->\n", "closes gen:x"),
    ("<!-- gen:x -->\n<!-- gen:y -->\n<!-- /gen:y -->\n<!-- /gen:x -->\n", "inside the block"),
])
def test_malformed_markers_are_refused(text, message):
    with pytest.raises(rd.BlockError, match=message):
        rd.find_blocks(text)


def test_replace_block_keeps_the_markers_and_the_rest():
    text = "head\n<!-- gen:x -->\nold\n<!-- /gen:x -->\nmid\n<!-- gen:x -->\nold\n<!-- /gen:x -->\ntail\n"
    new = rd.replace_block(text, "x", "\nnew\n")
    assert new == text.replace("old", "new")
    assert [b.name for b in rd.find_blocks(new)] == ["x", "x"]


@pytest.mark.parametrize("name", [g.name for g in rd.GENERATORS.values() if g.exact and not g.commands])
def test_blocks_generated_from_code_are_current(name):
    """Blocks rendered from the code (or a committed JSON) alone, without a measurement, are up to date."""
    want = rd.generate(rd.GENERATORS[name], machine="-", date="-")
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for b in rd.find_blocks(text):
            if b.name == name:
                assert text[b.start:b.end] == want, \
                    f"{_name(path)}:{b.line}: stale; run python -m tools.regen_docs --only {name}"


def test_list_runs_without_running_anything():
    proc = subprocess.run([sys.executable, "-m", "tools.regen_docs", "--list"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for name, g in rd.GENERATORS.items():
        assert name in proc.stdout
        for args in g.commands:
            assert rd.shown([a.replace("{tmp}", "TMP") for a in args]) in proc.stdout
    assert all(a[0] == "-m" for g in rd.GENERATORS.values() for a in g.commands)  # sys.executable -m ..., no PATH


# --------------------------------------------------------------------------- links
@pytest.mark.parametrize("path", DOCS, ids=_name)
def test_relative_links_point_to_existing_files(path):
    problems = []
    for target in links(path.read_text(encoding="utf-8")):
        if is_external(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{target}: no heading #{anchor} in {_name(dest)}")
    assert not problems, f"{_name(path)}: " + "; ".join(problems)


def test_no_markdown_links_outside_the_repository():
    problems = []
    files = repo_markdown()
    assert README in files and ROOT / "docs" / "RULES.md" in files
    for path in files:
        text = path.read_text(encoding="utf-8")
        if "../shared" in text:
            problems.append(f"{_name(path)}: mentions ../shared")
        for target in links(text):
            if is_external(target) or target.startswith("#"):
                continue
            dest = (path.parent / target.partition("#")[0]).resolve()
            if not dest.is_relative_to(ROOT):
                problems.append(f"{_name(path)}: {target} is outside the repository")
    assert not problems, "; ".join(problems)


# --------------------------------------------------------------------------- the README
def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_set_up_block_has_exactly_the_two_commands():
    text = README.read_text(encoding="utf-8")
    m = re.search(r"^## Set-up.*?$(.*?)^## ", text, re.S | re.M)
    assert m, "README.md has no '## Set-up' section"
    block = re.search(r"^```(?:bash|sh|shell)?\n(.*?)^```", m.group(1), re.S | re.M)
    assert block, "the set-up section has no code block"
    commands = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    assert [c for c in commands if c] == ["make train", "make test"]


def test_readme_links_every_docs_page():
    targets = {t.partition("#")[0] for t in links(README.read_text(encoding="utf-8"))}
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert _name(page) in targets, f"README.md does not link {_name(page)}"


# --------------------------------------------------------------------------- the documentation site
def test_the_site_has_every_docs_page_and_the_api_packages():
    """docs/index.md's toctrees list every page of docs/ (make docs fails on an orphan); the API covers the four."""
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    trees = re.findall(r"^```\{toctree\}\n(.*?)^```", index, re.S | re.M)
    entries = {line.strip() for tree in trees for line in tree.splitlines() if line.strip() and ":" not in line}
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")} - {"index"}
    assert pages - entries == set(), f"pages missing from docs/index.md's toctree: {sorted(pages - entries)}"
    assert {"api/index", "site/changelog", "site/readme"} <= entries
    api = (ROOT / "docs" / "api" / "index.md").read_text(encoding="utf-8")
    for package in ("lama_env", "lama_dice.agents", "lama_dice.evaluation", "lama_dice.train"):
        assert re.search(rf"^   {re.escape(package)}$", api, re.M), f"the API reference lacks {package}"
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    assert "sphinx.ext.intersphinx" not in conf  # offline: nothing fetched at build time


# --------------------------------------------------------------------------- the changelog
CHANGELOG = ROOT / "CHANGELOG.md"
#: Keep a Changelog's kinds of change, in its order: the only headings under a version.
CHANGE_KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
VERSION = re.compile(r"\[Unreleased\]|\[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})")
MAX_CHANGELOG_LINE = 400
MAX_ENTRY_LINES = 3
#: The documentation site (docs/conf.py) gives anchors to headings down to this level only.
SITE_ANCHOR_LEVELS = 4


def changelog_problems(text: str) -> list[str]:
    """Where ``text``, a CHANGELOG.md at the repository's top, breaks the changelog's form; [] if nowhere."""
    lines = text.splitlines()
    problems = [] if lines[:1] == ["# Changelog"] else ["line 1: the title must be '# Changelog'"]
    problems += [f"line {n}: {len(line)} characters (at most {MAX_CHANGELOG_LINE})"
                 for n, line in enumerate(lines, 1) if len(line) > MAX_CHANGELOG_LINE]
    versions, entries, structure = _changelog_structure(lines)
    problems += structure
    problems += [p for entry in entries for p in _entry_problems(entry)]
    problems += _version_problems(versions)
    problems += _changelog_link_problems(text)
    return problems


def _changelog_structure(lines: list[str]) -> tuple[list[tuple[int, str]], list[list[tuple[int, str]]], list[str]]:
    """The version headings (line, title), the entries (their numbered lines) and what is out of place."""
    problems: list[str] = []
    versions: list[tuple[int, str]] = []
    entries: list[list[tuple[int, str]]] = [[]]  # the last one is open
    kinds: list[str] = []  # the kinds of change so far under the current version
    for number, line in enumerate(lines[1:], 2):
        heading = HEADING.match(line)
        if heading:
            level, title = len(heading.group(1)), heading.group(2)
            if level == 2:
                versions.append((number, title))
                kinds = []
            problems += _heading_problems(number, line, level, title, bool(versions), kinds)
            if level == 3:
                kinds.append(title)
            entries.append([])
        elif not versions or not line.strip():  # the title's introduction; the blank lines between entries
            entries.append([])
        elif not kinds:
            problems.append(f"line {number}: text under a version heading but not under a kind of change")
        elif line.startswith(("- ", "* ")):
            entries.append([(number, line)])
        elif line.startswith(" ") and entries[-1]:
            entries[-1].append((number, line))
        else:
            problems.append(f"line {number}: not part of an entry ('- ' then lines indented under it)")
    return versions, [e for e in entries if e], problems


def _heading_problems(number: int, line: str, level: int, title: str, in_version: bool, kinds: list[str]) -> list[str]:
    if level == 2:
        return [] if VERSION.fullmatch(title) else [
            f"line {number}: '{line}' is not a version heading ('## [Unreleased]' or '## [X.Y.Z] - YYYY-MM-DD')"]
    if level != 3 or not in_version:
        return [f"line {number}: '{line}': only version (##) and kind-of-change (###) headings"]
    if title not in CHANGE_KINDS:
        return [f"line {number}: '{line}' is not one of Keep a Changelog's headings ({', '.join(CHANGE_KINDS)})"]
    if title in kinds:
        return [f"line {number}: a second '### {title}' under one version"]
    before = [k for k in kinds if k in CHANGE_KINDS]
    if before and CHANGE_KINDS.index(title) < CHANGE_KINDS.index(before[-1]):
        return [f"line {number}: '### {title}' after '### {before[-1]}' (the order is {', '.join(CHANGE_KINDS)})"]
    return []


def _entry_problems(entry: list[tuple[int, str]]) -> list[str]:
    first, problems = entry[0][0], []
    if len(entry) > MAX_ENTRY_LINES:
        problems.append(f"line {first}: an entry of {len(entry)} lines (at most {MAX_ENTRY_LINES}); "
                        "move the detail into docs/")
    targets = links("\n".join(line for _, line in entry))
    if not any(t.startswith("docs/") and t.partition("#")[0].endswith(".md") for t in targets):
        problems.append(f"line {first}: an entry without a link to the docs page of its detail (docs/*.md)")
    return problems


def _version_problems(versions: list[tuple[int, str]]) -> list[str]:
    problems = []
    if versions and versions[0][1] != "[Unreleased]":
        problems.append(f"line {versions[0][0]}: the first version must be '## [Unreleased]'")
    if [title for _, title in versions].count("[Unreleased]") > 1:
        problems.append("a second '## [Unreleased]'")
    released = [(n, m) for n, title in versions if (m := VERSION.fullmatch(title)) and m.group(1)]
    for (_, newer), (n, older) in itertools.pairwise(released):
        if tuple(map(int, older.groups()[:3])) >= tuple(map(int, newer.groups()[:3])):
            problems.append(f"line {n}: versions must go from the newest down")
    for n, m in released:
        try:
            datetime.date.fromisoformat(m.group(4))
        except ValueError:
            problems.append(f"line {n}: {m.group(4)} is not a date")
    return problems


def _changelog_link_problems(text: str) -> list[str]:
    """Every relative link names a file, and a heading the site anchors too (docs/conf.py: levels 1 to 4)."""
    problems = []
    for target in links(text):
        if is_external(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (ROOT / file_part).resolve() if file_part else CHANGELOG
        if not dest.exists():
            problems.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest, SITE_ANCHOR_LEVELS):
            problems.append(f"{target}: no heading #{anchor} (of levels 1 to {SITE_ANCHOR_LEVELS}) in {_name(dest)}")
    return problems


def test_changelog_is_in_keep_a_changelog_form():
    problems = changelog_problems(CHANGELOG.read_text(encoding="utf-8"))
    assert not problems, "CHANGELOG.md: " + "; ".join(problems)


def test_changelog_keeps_an_unreleased_section_on_top():
    text = CHANGELOG.read_text(encoding="utf-8")
    assert re.search(r"^## ", text, re.M).start() == text.index("## [Unreleased]")


GOOD_ENTRY = "- A thing ([docs/RULES.md](docs/RULES.md#game-records)).\n"
GOOD_CHANGELOG = "# Changelog\n\nIntro.\n\n## [Unreleased]\n\n### Added\n\n" + GOOD_ENTRY + \
    "\n## [0.2.0] - 2026-12-09\n\n### Changed\n\n" + GOOD_ENTRY + "  more\n  and more\n\n### Fixed\n\n" + GOOD_ENTRY


@pytest.mark.parametrize("old, new, message", [
    ("", "", None),
    ("A thing", "A" + "x" * 400, "characters (at most 400)"),
    ("  and more\n", "  and more\n  and a fourth line\n", "an entry of 4 lines"),
    ("### Fixed", "### Bug fixes", "is not one of Keep a Changelog's headings"),
    ("### Fixed", "### Added", "'### Added' after '### Changed'"),
    ("## [0.2.0] - 2026-12-09", "## 0.2.0", "is not a version heading"),
    ("## [0.2.0] - 2026-12-09", "## [0.2.0] - 2026-13-09", "is not a date"),
    ("## [Unreleased]", "## [0.3.0] - 2026-12-10", "the first version must be"),
    ("Intro.\n\n## [Unreleased]", "Intro.\n\n## [Unreleased]\n\n#### Notes", "only version (##) and kind"),
    ("### Added\n\n", "### Added\n\nSome prose.\n", "not part of an entry"),
    ("## [Unreleased]\n\n", "## [Unreleased]\n\nSome prose.\n\n", "not under a kind of change"),
    ("docs/RULES.md](docs/RULES.md#game-records)", "x](https://example.org/)", "without a link to the docs"),
    ("(docs/RULES.md#game-records)", "(docs/NO_SUCH_PAGE.md)", "no such file"),
    ("(docs/RULES.md#game-records)", "(docs/RULES.md#no-such-heading)", "no heading #no-such-heading"),
])
def test_changelog_checks_find_each_fault(old, new, message):
    text = GOOD_CHANGELOG.replace(old, new, 1)
    problems = changelog_problems(text)
    if message is None:
        assert problems == []
    else:
        assert any(message in p for p in problems), problems


# --------------------------------------------------------------------------- the built site's links and markup
def _conf():
    import importlib.util

    spec = importlib.util.spec_from_file_location("lama_docs_conf", ROOT / "docs" / "conf.py")
    assert spec is not None and spec.loader is not None
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_the_site_check_finds_missing_files_anchors_and_raw_markdown(tmp_path):
    """The docs build fails on what tools.site_check.broken finds (docs/conf.py runs it when the build finishes)."""
    from tools.site_check import broken

    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "there.png").write_bytes(b"")
    (tmp_path / "api").mkdir()
    (tmp_path / "web.html").write_text(
        '<img src="images/there.png"><img src="images/web-phone.png"><a href="https://x.org/a.png">x</a>'
        '<a href="api/mod.html#mod.f">f</a><a href="api/mod.html#mod.gone">g</a><a href="#top" id="top">t</a>',
        encoding="utf-8")
    (tmp_path / "api" / "mod.html").write_text(
        '<dt id="mod.f">f</dt><p>| a | b |</p><pre>x = 1  # a comment\n</pre><a href="../web.html">back</a>',
        encoding="utf-8")
    (tmp_path / "api" / "raw.html").write_text("<pre>### Arguments\n|------|------|\n</pre>", encoding="utf-8")
    (tmp_path / "api" / "heading.html").write_text("<p>\n### Arguments\n</p>", encoding="utf-8")
    found = broken(tmp_path)
    assert found == ["api/heading.html: '### A' (a docstring's Markdown shown raw)",
                     "api/raw.html: '|------|' (a docstring's Markdown shown raw)",
                     "web.html: images/web-phone.png (a picture to a file the site lacks)",
                     "web.html: api/mod.html#mod.gone (no #mod.gone on that page)"], found


def test_the_docs_build_copies_raw_html_pictures_and_checks_the_site():
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    for hook in ('"source-read", _raw_pictures', '"build-finished", _finish', '"doctree-read", _viewcode_ids'):
        assert hook in conf
    assert _conf().RAW_IMG.findall('<img src="images/web-phone.png" alt="x" width="300">') == ["images/web-phone.png"]


def test_markdown_in_docstrings_becomes_rest():
    """The PettingZoo card (a Markdown module docstring) and a pipe table anywhere render on the API pages."""
    conf = _conf()
    card = ["# Title", "", "| Import | `x` |", "|---|---|", "| Agents | 1 to 6 |", "", "### Arguments", "",
            "``` python", "env(a=1,", "    b=2)", "```", "", "A `reset()`s call, `a", "b` and [RULES](RULES.md)."]
    assert conf.markdown_to_rest(card, whole=True) == [
        "", ".. rubric:: Title", "",
        "",
        ".. list-table::", "   :header-rows: 1", "", "   * - Import", "     - ``x``", "   * - Agents", "     - 1 to 6",
        "",
        "", "", ".. rubric:: Arguments", "",
        "", ".. code-block:: python", "", "   env(a=1,", "       b=2)", "",
        "", "A ``reset()``\\ s call, ``a", "b`` and `RULES <RULES.md>`_."]
    rest = ["Some ``reST`` and `Markdown`-looking text:", "", "| a | b |", "| --- | --- |", "| `x` | 1 |"]
    assert conf.markdown_to_rest(rest, whole=False) == [
        "Some ``reST`` and `Markdown`-looking text:", "", ".. list-table::", "   :header-rows: 1", "",
        "   * - a", "     - b", "   * - ``x``", "     - 1", ""]


def test_the_configs_table_lists_every_shipped_config():
    """docs/training.md's Configs table has a row for every configs/*.yaml, and names no other."""
    text = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    section = re.search(r"^## Configs\n(.*?)^## ", text, re.S | re.M)
    assert section, "docs/training.md has no '## Configs' section"
    listed = set(re.findall(r"\[(\w+)\.yaml\]\(\.\./configs/\1\.yaml\)", section.group(1)))
    shipped = {p.stem for p in (ROOT / "configs").glob("*.yaml")}
    assert listed == shipped, f"missing from the table: {sorted(shipped - listed)}; not shipped: " \
                              f"{sorted(listed - shipped)}"
