"""What ``pip install contextd`` and ``pip install contextd-client`` put into site-packages:
one top-level package each, neither a name an agent's own code is likely to use besides
``app`` (kept for the server), and the migrations inside the server's package."""

from __future__ import annotations

import configparser
import tomllib
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


def find_packages(root: Path, include: list[str] | None = None) -> list[str]:
    """The packages under ``root`` (directories with an ``__init__.py``), as setuptools'
    ``packages.find`` lists them."""
    names = [
        ".".join(init.parent.relative_to(root).parts)
        for init in root.rglob("__init__.py")
        if ".venv" not in init.parts and "site-packages" not in init.parts
    ]
    return sorted(n for n in names if include is None or any(fnmatch(n, p) for p in include))


def _pyproject(path: Path) -> dict[str, object]:
    with path.open("rb") as file:
        return tomllib.load(file)


def test_the_server_installs_only_the_app_package_with_its_migrations() -> None:
    setuptools = _pyproject(REPO / "pyproject.toml")["tool"]["setuptools"]  # type: ignore[index]
    packages = find_packages(REPO, include=setuptools["packages"]["find"]["include"])

    assert {name.split(".")[0] for name in packages} == {"app"}
    assert "app.migrations" in packages
    assert "app.migrations.versions" in packages
    assert setuptools["package-data"]["app.migrations"] == ["script.py.mako"]
    assert (REPO / "app" / "migrations" / "script.py.mako").is_file()


def test_alembic_ini_points_at_the_migrations_in_the_app_package() -> None:
    config = configparser.RawConfigParser()
    config.read(REPO / "alembic.ini")
    location = config["alembic"]["script_location"].replace("%(here)s", str(REPO))

    assert Path(location) == REPO / "app" / "migrations"


def test_the_client_installs_contextd_client_and_needs_only_httpx() -> None:
    project = _pyproject(REPO / "clients" / "python" / "pyproject.toml")
    packages = find_packages(REPO / "clients" / "python" / "src")

    assert {name.split(".")[0] for name in packages} == {"contextd_client"}
    assert project["project"]["dependencies"] == ["httpx>=0.27"]  # type: ignore[index]
