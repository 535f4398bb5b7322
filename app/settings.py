"""The one settings object. Nothing else in the service reads the environment."""

from __future__ import annotations

import ipaddress
import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.budget.calibration import CalibrationSettings
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
    database_pool_size: int = Field(
        default=20,
        ge=1,
        le=1000,
        description=(
            "Postgres connections each worker keeps open. Set it to the number of requests a "
            "worker serves at once: connections beyond it (up to 10 more) are opened and "
            "closed per request, which costs more than the request."
        ),
    )
    host: str = Field(
        default="127.0.0.1",
        description="The address `contextd serve` binds; off loopback it needs API keys.",
    )
    port: int = Field(default=8080, description="The port `contextd serve` listens on.")
    workers: int = Field(
        default=1,
        ge=1,
        description=(
            "Worker processes of `contextd serve`. Several share their metrics through "
            "PROMETHEUS_MULTIPROC_DIR (a temporary directory is made when it is unset)."
        ),
    )
    log_level: str = Field(
        default="info", description="debug, info, warning or error; debug adds budget telemetry."
    )
    log_format: Literal["json", "text"] = Field(
        default="json",
        description="json: one JSON object per line, for log pipelines; text: for people.",
    )

    # Audit retention: off by default, since the audit trail is what explains past turns.
    audit_retention_days: int | None = Field(
        default=None,
        ge=1,
        description="Purge audit rows older than this many days; unset keeps them all.",
    )
    audit_purge_interval_seconds: float = Field(
        default=3600,
        ge=0,
        description=(
            "With a retention set, the service purges this often (and at start-up); 0 leaves "
            "it to `contextd purge-audit`."
        ),
    )
    audit_purge_batch_size: int = Field(
        default=5000, gt=0, description="Rows per purge transaction (a short id range)."
    )

    # Trust (docs/operations.md, "Security and reliability").
    allow_unauthenticated: bool = Field(
        default=False,
        description=(
            "Serve without API keys on a non-loopback bind. Without keys contextd otherwise "
            "runs open only on 127.0.0.1 / ::1 / localhost, and refuses to start elsewhere."
        ),
    )
    api_key_cache_seconds: float = Field(
        default=1.0,
        ge=0,
        description=(
            "How long a process trusts what it read about an API key (and whether any key "
            "exists) before reading the database again: a key created or revoked by another "
            "process takes effect within this time; 0 reads the database on every request."
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
    max_output_tokens: int = Field(
        default=2048, gt=0, description="The output reserve (capped at output_reserve_ratio)."
    )
    default_context_limit: int = Field(
        default=8192, gt=0, description="The context limit of a model the table does not know."
    )
    output_reserve_ratio: float = Field(
        default=0.20, gt=0, lt=1, description="The output reserve's cap, as a share of the limit."
    )
    overhead_reserve_ratio: float = Field(
        default=0.05, ge=0, lt=1, description="The overhead reserve, as a share of the limit."
    )
    overhead_reserve_min: int = Field(
        default=1024, ge=0, description="The overhead reserve's floor, in tokens."
    )
    summary_trigger_ratio: float = Field(
        default=0.70, gt=0, le=1, description="Summarise at this share of the input budget."
    )
    prune_trigger_ratio: float = Field(
        default=0.90, gt=0, le=1, description="Prune when still at this share after summarising."
    )
    mandatory_summary_turns: int = Field(
        default=8, ge=0, description="Summarise after this many turns without one; 0 turns it off."
    )
    protected_window_turns: int = Field(
        default=4, ge=1, description="The newest turns (the current one included) kept raw."
    )
    low_water_ratio: float = Field(
        default=0.50,
        gt=0,
        le=1,
        description=(
            "Where pruning brings usage down to once it fires, so that the next turns only "
            "append to the prompt (the provider's prefix cache keeps hitting)."
        ),
    )
    summary_target_ratio: float = Field(
        default=0.20,
        gt=0,
        lt=1,
        description=(
            "A summary's token target, as a share of the budget; up to three quarters of it "
            "hold the user's own statements (docs/summaries.md)."
        ),
    )
    tool_result_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description=(
            "One tool result's cap in the prompt, as a share of the input budget: a result "
            "over it shows its head and tail around a marker, and stays stored whole. A "
            "session's block_caps.tool_result_share overrides it."
        ),
    )
    tool_images_kept: int = Field(
        default=3,
        ge=0,
        description=(
            "How many of the newest images in completed turns' tool results stay in the "
            "prompt when room is needed: older ones give way to a placeholder that names the "
            "stored message, before anything is summarised."
        ),
    )

    dedupe_summary_against_memory: bool = Field(
        default=True,
        description="Leave out summary lines that repeat a line of the session's memory.",
    )

    summarizer: Literal["extractive", "llm"] = Field(
        default="extractive",
        description=(
            "extractive: built in, offline, inline. llm: an OpenAI-compatible chat API, run "
            "off the request path by summary jobs (see the summarizer_* and summary_* knobs)."
        ),
    )
    summarizer_base_url: str | None = Field(
        default=None, description="The chat API's base URL, e.g. http://127.0.0.1:11434/v1."
    )
    summarizer_model: str | None = Field(default=None, description="The model to summarise with.")
    summarizer_api_key: SecretStr | None = Field(
        default=None, description="Sent as `Authorization: Bearer …` to the summariser's API."
    )
    summarizer_timeout_seconds: float = Field(
        default=60.0, gt=0, description="Seconds per request to the summariser's chat API."
    )
    summarizer_max_attempts: int = Field(
        default=3, ge=1, description="HTTP attempts per request (transport errors and 5xx)."
    )
    summarizer_shorten_attempts: int = Field(
        default=2, ge=0, description="Re-asks for a shorter summary when one is over target."
    )
    fold_between_turns: bool = Field(
        default=True,
        description=(
            "With the extractive summariser: the turn-count fold is made in a worker thread "
            "after the completion of the turn before it, and the turn start that crosses the "
            "count takes it (the same summary on the same turn; only where its CPU goes moves). "
            "false: that turn start folds itself."
        ),
    )
    summary_wait_seconds: float = Field(
        default=15.0,
        ge=0,
        description=(
            "How long an assembly at or above the prune threshold (90%) waits for a summary "
            "before it truncates deterministically instead. Below it, no turn waits."
        ),
    )
    summary_workers: int = Field(
        default=1, ge=0, description="Summary job workers in this process (0: none here)."
    )
    summary_job_lease_seconds: float = Field(
        default=120.0,
        gt=0,
        description="A claim's lease; a worker that stops renewing it loses the job to another.",
    )
    summary_job_poll_seconds: float = Field(
        default=1.0, gt=0, description="A summary worker's pause when no job waits."
    )
    summary_job_max_attempts: int = Field(
        default=3, ge=1, description="Claims of one job before it is marked failed."
    )

    # The drop-in endpoints (docs/drop-in.md): where each request is forwarded. Configuration
    # only: a request never names its upstream.
    proxy_openai_base_url: str = Field(
        default="https://api.openai.com/v1",
        description="Where POST /v1/chat/completions forwards: {base}/chat/completions.",
    )
    proxy_anthropic_base_url: str = Field(
        default="https://api.anthropic.com",
        description="Where POST /v1/messages forwards: {base}/v1/messages.",
    )
    proxy_model_base_urls: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Per model, a base URL that replaces the provider's (vLLM, Ollama, LiteLLM, "
            'OpenRouter…), as JSON: {"llama-3.1-8b": "http://127.0.0.1:8000/v1"}.'
        ),
    )
    proxy_connect_timeout_seconds: float = Field(
        default=10.0, gt=0, description="How long connecting to the upstream may take."
    )
    proxy_read_timeout_seconds: float = Field(
        default=600.0,
        gt=0,
        description="Longest silence of the upstream (between two chunks of a stream).",
    )

    # Embeddings for search and recall (docs/recall.md). Off unless both the base
    # URL and the model are set: then full-text search alone, and no embedding work at all.
    embeddings_base_url: str | None = Field(
        default=None,
        description=(
            "An OpenAI-compatible API whose POST {base}/embeddings embeds messages and queries, "
            "e.g. http://127.0.0.1:11434/v1 (Ollama), a vLLM or TEI server, or OpenAI's."
        ),
    )
    embeddings_model: str | None = Field(default=None, description="The model to embed with.")
    embeddings_api_key: SecretStr | None = Field(
        default=None, description="Sent as `Authorization: Bearer …` to the embeddings API."
    )
    embeddings_dimensions: int | None = Field(
        default=None,
        ge=1,
        description="Asked of models that can shorten their vectors (the API's `dimensions`).",
    )
    embeddings_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        description=(
            "Per request. A search or recall that cannot embed its query in this time ranks by "
            "full text alone."
        ),
    )
    embeddings_query_timeout_seconds: float = Field(
        default=1.0,
        gt=0,
        description=(
            "How long a search or a turn with recall waits for its query's embedding in all "
            "(a turn waits with its session locked); past it, full-text ranking only."
        ),
    )
    embeddings_batch_size: int = Field(
        default=32, ge=1, le=2048, description="Messages embedded per request by the worker."
    )
    embeddings_poll_seconds: float = Field(
        default=1.0, gt=0, description="The worker's pause when no message waits for embedding."
    )
    embeddings_retry_seconds: float = Field(
        default=30.0,
        gt=0,
        description="The longest pause after the API fails; pauses double up to it from 1 s.",
    )
    embeddings_min_similarity: float = Field(
        default=0.3,
        ge=-1,
        le=1,
        description=(
            "A message is a semantic hit only when its cosine similarity to the query reaches "
            "this; below it, only its words can find it."
        ),
    )

    # Token counting (docs/counting.md).
    models_file: Path | None = Field(
        default=None,
        description=(
            "A JSON or TOML file of model entries that extend or override the built-in model "
            "table; a bad file stops start-up with the reason."
        ),
    )
    calibration: bool = Field(
        default=True,
        description=(
            "Learn, per tenant and model, how far the provider's usage.prompt_tokens run from "
            "contextd's count, and hold later prompts to the budget in the provider's tokens."
        ),
    )
    calibration_min_prompt_tokens: int = Field(
        default=100, ge=1, description="Usage reports for smaller prompts are not learnt from."
    )
    kept_rows_mib: float = Field(
        default=64,
        ge=0,
        description=(
            "MiB of active messages a worker keeps decoded between a session's assemblies, "
            "over all sessions (the least recently used sessions go first): the next step of "
            "a long open turn reads back only what was written since. A 1,000-call open turn "
            "of short tool results takes about 1.4 MiB. 0 keeps none."
        ),
    )
    calibration_cache_seconds: float = Field(
        default=1.0,
        ge=0,
        le=60,
        description=(
            "How long a worker reuses a calibration ratio it read instead of reading it again "
            "on every assembly (0: read every time). A ratio learnt in another worker process "
            "takes effect here within this time; one learnt here, at once."
        ),
    )
    tiktoken_cache_dir: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("TIKTOKEN_CACHE_DIR", "CONTEXTD_TIKTOKEN_CACHE_DIR"),
        description=(
            "Where tiktoken reads its encoding files (tiktoken's own variable; in `.env` too, "
            "see export_tiktoken_cache_dir)."
        ),
    )

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> Settings:
        if self.prune_trigger_ratio < self.summary_trigger_ratio:
            raise ValueError("prune_trigger_ratio must be at least summary_trigger_ratio")
        if self.low_water_ratio > self.summary_trigger_ratio:
            raise ValueError("low_water_ratio must be at most summary_trigger_ratio")
        if self.summarizer == "llm" and not (self.summarizer_base_url and self.summarizer_model):
            raise ValueError("summarizer=llm needs summarizer_base_url and summarizer_model")
        return self

    @property
    def embeds(self) -> bool:
        """Whether messages and queries are embedded (both the API and the model are set)."""
        return bool(self.embeddings_base_url and self.embeddings_model)

    @property
    def summarizes_in_background(self) -> bool:
        """A slow (model-backed) summariser runs in summary jobs, not on the turn."""
        return self.summarizer == "llm"

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
            low_water_ratio=self.low_water_ratio,
        )

    def calibration_settings(self) -> CalibrationSettings:
        return CalibrationSettings(min_prompt_tokens=self.calibration_min_prompt_tokens)


def export_tiktoken_cache_dir(settings: Settings) -> None:
    """Hand the cache folder the settings name to tiktoken, which reads only the process
    environment (and reads it on each load): so a folder written in `.env` counts too. A
    variable set in the real environment is left as it is. Call before any encoding loads."""
    if settings.tiktoken_cache_dir is not None and "TIKTOKEN_CACHE_DIR" not in os.environ:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(settings.tiktoken_cache_dir)


@lru_cache
def get_settings() -> Settings:
    return Settings()
