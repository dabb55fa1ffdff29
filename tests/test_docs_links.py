"""Every relative markdown link in the README, ``docs/**/*.md`` and ``dev/notes/*.md`` resolves:
the file (or folder) exists, and a ``#anchor`` names a heading of the target page by GitHub's
slug rule. Links inside code (fenced blocks, inline spans) are not links and are skipped; web
addresses are not fetched (everything here runs offline).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT

PAGES = sorted({REPO_ROOT / "README.md", *(REPO_ROOT / "docs").rglob("*.md"),
                *(REPO_ROOT / "dev" / "notes").glob("*.md")})

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", flags=re.S | re.M)
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", flags=re.S)
# [text](target) and ![alt](target); the target may hold one level of balanced parentheses.
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", flags=re.M)


def _strip_code(text: str) -> str:
    """The page without fenced blocks and inline code spans (their brackets are not links)."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation but ``-``/``_``
    removed, each space a ``-``.

    >>> github_slug("Why `--small` (and the issue's runs) pointed the wrong way")
    'why---small-and-the-issues-runs-pointed-the-wrong-way'
    """
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link in a heading keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("\\", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set:
    """Every heading anchor of a page, with GitHub's ``-1``, ``-2`` suffixes for repeats."""
    found, seen = set(), {}
    body = _FENCE.sub("", page.read_text(encoding="utf-8"))
    for _, title in _HEADING.findall(body):
        slug = github_slug(title)
        count = seen.get(slug, 0)
        found.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return found


def broken_links(page: Path) -> list:
    """The relative links of ``page`` that do not resolve, as ``"target: why"`` strings."""
    broken = []
    for target in _LINK.findall(_strip_code(page.read_text(encoding="utf-8"))):
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.I):   # http:, mailto:, ...
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.exists():
            broken.append(f"{target}: {resolved} does not exist")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with the anchor #{anchor} in {resolved.name}")
    return broken


def test_the_pages_are_found():
    names = {p.relative_to(REPO_ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/benchmarks.md", "docs/reproductions.md", "dev/notes/README.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_relative_link_resolves(page: Path):
    assert broken_links(page) == [], f"{page.relative_to(REPO_ROOT)}: broken links"


def test_the_checker_finds_broken_links(tmp_path: Path):
    (tmp_path / "other.md").write_text("# Other page\n\n## Why `--x` (really)?\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n"
                    "[ok](other.md) [ok](other.md#why---x-really) [ok](other.md#twice-1) [ok](#top)\n"
                    "[bad file](missing.md) [bad anchor](other.md#nowhere) [bad self](#nowhere)\n"
                    "[web](https://example.org/x.md) `[code](missing.md)`\n\n"
                    "```\n[fenced](missing.md)\n```\n")
    assert broken_links(page) == [
        f"missing.md: {tmp_path / 'missing.md'} does not exist",
        "other.md#nowhere: no heading with the anchor #nowhere in other.md",
        "#nowhere: no heading with the anchor #nowhere in page.md",
    ]


def test_github_slugs():
    assert github_slug("SCAN and SCAN\\*") == "scan-and-scan"
    assert github_slug("Shin et al. — Karel, Table 1") == "shin-et-al--karel-table-1"
    assert github_slug("Finding mislabelled rows: the label-free recipe") == "finding-mislabelled-rows-the-label-free-recipe"
    assert github_slug("Beyond cartography: margins, forgetting, EL2N, loss; noise finding; an interactive map") == \
        "beyond-cartography-margins-forgetting-el2n-loss-noise-finding-an-interactive-map"
