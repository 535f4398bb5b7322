"""The wheel's packages: ``app`` and its subpackages, with the top-level ``migrations/``
folder shipped inside it as ``app/migrations`` (Alembic's scripts and its template), and the
console's page. Everything else about the project is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["app", "app.*"]),
        "app.migrations",
        "app.migrations.versions",
    ],
    package_dir={"app.migrations": "migrations"},
    package_data={"app.migrations": ["script.py.mako"], "app.console": ["*.html", "*.js", "*.css"]},
)
