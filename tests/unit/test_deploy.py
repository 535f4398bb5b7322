"""docker-compose.yml and the files it provisions, checked the way `docker compose config`
and Grafana would read them (no Docker here): services, their order, mounts, references."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent.parent
DASHBOARD = REPO / "deploy" / "grafana" / "dashboards" / "contextd.json"


def _yaml(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def _compose() -> dict[str, Any]:
    return _yaml(REPO / "docker-compose.yml")


def _bind_mounts(service: dict[str, Any]) -> dict[str, str]:
    """Container path → repository path, for every ./… volume of a service."""
    mounts = {}
    for volume in service.get("volumes", []):
        source, target, *_ = volume.split(":")
        if source.startswith("./"):
            mounts[target] = source
    return mounts


def test_compose_runs_postgres_then_migrations_then_contextd_prometheus_and_grafana() -> None:
    services = _compose()["services"]

    assert set(services) == {"postgres", "migrate", "contextd", "prometheus", "grafana"}
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services["contextd"]["depends_on"] == {
        "migrate": {"condition": "service_completed_successfully"}
    }
    assert services["migrate"]["command"] == ["contextd", "migrate"]
    assert "contextd" in services["prometheus"]["depends_on"]
    assert "prometheus" in services["grafana"]["depends_on"]


def test_every_named_volume_is_declared_and_every_mounted_file_exists() -> None:
    compose = _compose()

    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (REPO / source).exists(), f"{name} mounts {source}"
            else:
                assert source in compose["volumes"], f"{name} uses undeclared volume {source}"


def test_contextd_workers_share_a_fresh_metrics_directory() -> None:
    contextd = _compose()["services"]["contextd"]

    directory = contextd["environment"]["PROMETHEUS_MULTIPROC_DIR"]
    assert int(contextd["environment"]["CONTEXTD_WORKERS"]) > 1
    assert any(mount.split(":")[0] == directory for mount in contextd["tmpfs"])


def test_prometheus_scrapes_contextds_metrics_endpoint() -> None:
    compose = _compose()
    prometheus = compose["services"]["prometheus"]
    config_path = _bind_mounts(prometheus)["/etc/prometheus/prometheus.yml"]

    config = _yaml(REPO / config_path)

    assert "--config.file=/etc/prometheus/prometheus.yml" in prometheus["command"]
    (job,) = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    assert job["static_configs"] == [{"targets": ["contextd:8080"]}]
    # Published on the host's loopback only: the stack starts without API keys.
    assert "127.0.0.1:8080:8080" in compose["services"]["contextd"]["ports"]


def test_grafana_is_provisioned_with_the_datasource_and_the_dashboard() -> None:
    grafana = _compose()["services"]["grafana"]
    mounts = _bind_mounts(grafana)
    provisioning = REPO / mounts["/etc/grafana/provisioning"]

    (datasource,) = _yaml(provisioning / "datasources" / "prometheus.yml")["datasources"]
    (provider,) = _yaml(provisioning / "dashboards" / "contextd.yml")["providers"]

    assert datasource["url"] == "http://prometheus:9090"
    dashboards_in_container = provider["options"]["path"]
    assert REPO / mounts[dashboards_in_container] == DASHBOARD.parent
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home == f"{dashboards_in_container}/{DASHBOARD.name}"
    dashboard = json.loads(DASHBOARD.read_text())
    panels = dashboard["panels"]
    assert {p["datasource"]["uid"] for p in panels} == {datasource["uid"]}
    assert {t["datasource"]["uid"] for p in panels for t in p["targets"]} == {datasource["uid"]}


def test_dashboard_panels_have_unique_ids_and_fit_the_grid() -> None:
    panels = json.loads(DASHBOARD.read_text())["panels"]

    assert len({p["id"] for p in panels}) == len(panels)
    assert all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in panels)
    assert all(p["targets"] and all(t["expr"] for t in p["targets"]) for p in panels)
    cells = [
        (p["gridPos"]["y"] + dy, p["gridPos"]["x"] + dx)
        for p in panels
        for dy in range(p["gridPos"]["h"])
        for dx in range(p["gridPos"]["w"])
    ]
    assert len(cells) == len(set(cells)), "panels overlap"
