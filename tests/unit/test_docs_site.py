"""The documentation site: its reference pages come from the code, it builds with --strict
(a broken link or anchor, or a page left out of the navigation, fails), it loads nothing from
another origin, and the README stays a page a newcomer reads in five minutes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from app.errors import ERROR_CODES
from app.reference import environment_names, error_codes_page, settings_page
from app.settings import Settings

REPO = Path(__file__).resolve().parent.parent.parent
#: What a page loads (not what it links to): scripts, stylesheets, images, fonts.
_LOADED = re.compile(
    r"""<(?:script|img|source|iframe)[^>]*\ssrc="([^"]+)"|<link[^>]*\shref="([^"]+)"|url\(([^)]+)\)"""
)


def test_the_error_codes_page_lists_every_code_with_its_status() -> None:
    page = error_codes_page()

    rows = re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", page, flags=re.MULTILINE)
    assert rows == [(error.code, str(error.status)) for error in ERROR_CODES]


def test_the_configuration_page_lists_every_setting_by_its_variables() -> None:
    page = settings_page()

    for name, field in Settings.model_fields.items():
        assert all(f"`{variable}`" in page for variable in environment_names(name, field)), name
    assert "`TIKTOKEN_CACHE_DIR` or `CONTEXTD_TIKTOKEN_CACHE_DIR`" in page


def test_every_page_under_docs_is_in_the_navigation() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())

    def pages(entries: list[object]) -> list[str]:
        found: list[str] = []
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            found += pages(value) if isinstance(value, list) else [str(value)]
        return found

    written = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    generated = {"errors.md", "configuration.md"}
    assert sorted(written | generated) == sorted(pages(config["nav"]))


def test_the_site_builds_strict_and_loads_nothing_from_elsewhere(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )

    assert built.returncode == 0, built.stderr
    foreign = {
        url
        for page in (tmp_path / "site").rglob("*.html")
        for match in _LOADED.findall(page.read_text())
        for url in match
        if url.strip("'\"").startswith(("http:", "https:", "//"))
    }
    assert foreign == set()
    assert "context_budget_exceeded" in (tmp_path / "site" / "errors" / "index.html").read_text()


def test_the_readme_keeps_the_two_commands_and_links_only_to_pages_that_exist() -> None:
    readme = (REPO / "README.md").read_text()

    assert "pip install -e . && contextd serve" in readme
    assert 'pip install -e ".[test]" && pytest' in readme
    assert len(readme.splitlines()) < 120
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links, "the README links to the site's pages"
    assert [link for link in links if not (REPO / link).is_file()] == []
