"""What ``pip install contextd`` and ``pip install contextd-client`` put into site-packages:
one top-level package each, neither a name an agent's own code is likely to use besides
``app`` (kept for the server); the top-level ``migrations/`` inside the server's package, and
the console's page, so that an installed server migrates and serves them without a checkout."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
import tomllib
import zipfile
from fnmatch import fnmatch
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
#: What a wheel is built from (a copy, so that the build leaves nothing in the checkout).
SOURCES = ("pyproject.toml", "setup.py", "README.md", "app", "migrations")
PIP = (sys.executable, "-m", "pip", "--quiet", "--no-input")


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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's wheel, built from a copy of the checkout."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            source.mkdir(exist_ok=True)
            shutil.copy(REPO / name, source / name)
    subprocess.run(
        [
            *PIP,
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    return next((tmp_path / "dist").glob("contextd-*.whl"))


def test_the_wheel_holds_the_app_package_with_the_migrations_and_the_console(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()

    code = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert code == {"app"}
    migrations = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "migrations").rglob("*"))
    shipped = [f"app/{name}" for name in migrations if "__pycache__" not in name]
    assert [name for name in shipped if Path(name).suffix and name not in names] == []
    assert "app/migrations/script.py.mako" in names
    assert {"app/console/index.html", "app/console/console.js", "app/console/console.css"} <= set(
        names
    )


def test_an_installed_wheel_migrates_from_its_own_migrations(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [*PIP, "install", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    probe = (
        "import asyncio, sys\n"
        "from app.db import MIGRATIONS_DIR, create_engine, migrate\n"
        "async def main():\n"
        f"    engine = create_engine('sqlite+aiosqlite:///{tmp_path / 'fresh.db'}')\n"
        "    await migrate(engine)\n"
        "    await engine.dispose()\n"
        "asyncio.run(main())\n"
        "print(MIGRATIONS_DIR)\n"
    )
    # Run elsewhere than the checkout, with the installed copy first on the path.
    ran = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )

    assert ran.returncode == 0, ran.stderr
    assert Path(ran.stdout.strip()) == site / "app" / "migrations"
    assert (tmp_path / "fresh.db").stat().st_size > 0


def test_alembic_ini_points_at_the_top_level_migrations() -> None:
    config = configparser.RawConfigParser()
    config.read(REPO / "alembic.ini")
    location = config["alembic"]["script_location"].replace("%(here)s", str(REPO))

    assert Path(location) == REPO / "migrations"
    assert (REPO / "migrations" / "env.py").is_file()
    assert not (REPO / "app" / "migrations").exists()


def test_the_client_installs_contextd_client_and_needs_only_httpx() -> None:
    project = _pyproject(REPO / "clients" / "python" / "pyproject.toml")
    packages = find_packages(REPO / "clients" / "python" / "src")

    assert {name.split(".")[0] for name in packages} == {"contextd_client"}
    assert project["project"]["dependencies"] == ["httpx>=0.27"]  # type: ignore[index]
