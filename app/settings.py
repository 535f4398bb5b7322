"""The one settings object. Nothing else in the service reads the environment."""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.budget.policy import BudgetSettings


class Settings(BaseSettings):
    """Every knob of contextd, read from `CONTEXTD_*` variables or a `.env` file."""

    model_config = SettingsConfigDict(env_prefix="CONTEXTD_", env_file=".env", extra="ignore")

    database_url: str = Field(
        default="sqlite+aiosqlite:///./contextd.db",
        description="SQLAlchemy async URL: sqlite+aiosqlite:///file.db or postgresql+asyncpg://…",
    )
    auto_migrate: bool | None = Field(
        default=None,
        description=(
            "Apply pending migrations at start-up instead of refusing to start. Unset: yes for "
            "the embedded SQLite file (nothing to set up on a laptop), no for Postgres (schema "
            "changes there are an operator's decision: `contextd migrate`)."
        ),
    )
    database_connect_timeout: float = Field(
        default=5.0, gt=0, description="Seconds to wait for a database connection."
    )
    host: str = "127.0.0.1"
    port: int = 8080
    log_level: str = "info"

    # Trust (README "Security and reliability").
    allow_unauthenticated: bool = Field(
        default=False,
        description=(
            "Serve without API keys on a non-loopback bind. Without keys contextd otherwise "
            "runs open only on 127.0.0.1 / ::1 / localhost, and refuses to start elsewhere."
        ),
    )
    max_body_bytes: int = Field(
        default=8 * 1024 * 1024, gt=0, description="Largest request body accepted (413 above)."
    )
    idempotency_ttl_seconds: int = Field(
        default=24 * 3600,
        gt=0,
        description="How long a request's first answer is replayed for its Idempotency-Key.",
    )

    # Budget policy (seed 003 §4-§5, PRODUCT.md "The policy").
    max_output_tokens: int = Field(default=2048, gt=0)
    default_context_limit: int = Field(default=8192, gt=0)
    output_reserve_ratio: float = Field(default=0.20, gt=0, lt=1)
    overhead_reserve_ratio: float = Field(default=0.05, ge=0, lt=1)
    overhead_reserve_min: int = Field(default=1024, ge=0)
    summary_trigger_ratio: float = Field(default=0.70, gt=0, le=1)
    prune_trigger_ratio: float = Field(default=0.90, gt=0, le=1)
    mandatory_summary_turns: int = Field(
        default=8, ge=0, description="Summarise after this many turns without one; 0 turns it off."
    )
    protected_window_turns: int = Field(
        default=4, ge=1, description="The newest turns (the current one included) kept raw."
    )
    summary_target_ratio: float = Field(
        default=0.15, gt=0, lt=1, description="A summary's token target, as a share of the budget."
    )

    summarizer: Literal["extractive"] = "extractive"

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> Settings:
        if self.prune_trigger_ratio < self.summary_trigger_ratio:
            raise ValueError("prune_trigger_ratio must be at least summary_trigger_ratio")
        return self

    @property
    def binds_loopback(self) -> bool:
        """Whether only this machine can reach the service."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def migrates_at_startup(self) -> bool:
        return self.is_sqlite if self.auto_migrate is None else self.auto_migrate

    def budget_settings(self) -> BudgetSettings:
        return BudgetSettings(
            output_reserve_ratio=self.output_reserve_ratio,
            overhead_reserve_ratio=self.overhead_reserve_ratio,
            overhead_reserve_min=self.overhead_reserve_min,
            summary_trigger_ratio=self.summary_trigger_ratio,
            prune_trigger_ratio=self.prune_trigger_ratio,
            mandatory_summary_turns=self.mandatory_summary_turns,
            protected_window_turns=self.protected_window_turns,
        )


@lru_cache
def get_settings() -> Settings:
    return Settings()
