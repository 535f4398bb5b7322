"""Summary jobs: listing them, and the worker that runs them.

A worker claims a job (a short transaction), runs the summariser outside any transaction while
a heartbeat renews its lease, then writes the summary under the session's lock, but only if it
still holds the claim and no other summary was written for the session meanwhile. A worker that
dies leaves a lease that expires; any worker then claims the job again. Nothing is ever lost:
the messages stay active until an assembly applies the finished summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.budget.decision import NewSummary, SourceText, SummaryWork, accept_summary
from app.budget.summary import SummaryContent
from app.budget.tokens import content_text
from app.models import SummaryJobRecord, SummaryJobStatus
from app.models.base import utcnow
from app.runtime import Runtime
from app.sessions.repository import SessionRepository
from app.sessions.service import session_not_found
from app.summarize.running import run_summarizer
from app.summary_jobs.repository import SummaryJobRepository
from app.summary_jobs.schemas import SummaryJobList, SummaryJobOut
from app.tokens.budgets import session_budget
from app.turns.repository import TurnRepository, summary_content, summary_values

logger = logging.getLogger(__name__)


class SummaryJobService:
    """One tenant's view of its summary jobs."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.db = db
        self.runtime = runtime
        self.tenant_id = tenant_id
        self.jobs = SummaryJobRepository(db)

    async def list_jobs(self, session_id: str, *, limit: int) -> SummaryJobList:
        """A session's summary jobs, newest first."""
        if await SessionRepository(self.db, tenant_id=self.tenant_id).get(session_id) is None:
            raise session_not_found(session_id)
        rows = await self.jobs.list_for_session(self.tenant_id, session_id, limit=limit)
        return SummaryJobList(
            jobs=[SummaryJobOut.model_validate(row, from_attributes=True) for row in rows]
        )


class SummaryJobWorker:
    """Runs summary jobs until stopped. Any number may run, in any number of processes."""

    def __init__(self, *, sessionmaker: async_sessionmaker[AsyncSession], runtime: Runtime) -> None:
        self.sessionmaker = sessionmaker
        self.runtime = runtime
        self.settings = runtime.settings
        self.metrics = runtime.metrics

    async def run_forever(self) -> None:
        while True:
            try:
                worked = await self.run_once()
            except Exception:
                logger.exception("summary worker: unexpected error; retrying")
                worked = False
            if not worked:
                await asyncio.sleep(self.settings.summary_job_poll_seconds)

    async def claim(self, *, token: str, lease_seconds: float) -> SummaryJobRecord | None:
        """Claim the next job, in a transaction of its own."""
        async with self.sessionmaker() as db:
            jobs = SummaryJobRepository(db)
            depth, oldest = await jobs.pending_stats()
            self.metrics.summary_queue_depth.set(depth)
            self.metrics.summary_job_age.set(
                (utcnow() - oldest).total_seconds() if oldest is not None else 0
            )
            job = await jobs.claim(token=token, lease_seconds=lease_seconds)
            await db.commit()
        if job is not None and job.attempts == 1:
            self.metrics.summary_job_wait.observe((utcnow() - job.created_at).total_seconds())
        return job

    async def run_once(self) -> bool:
        """Claim and run one job; False when there was none."""
        token = uuid.uuid4().hex
        lease = self.settings.summary_job_lease_seconds
        job = await self.claim(token=token, lease_seconds=lease)
        if job is None:
            return False
        if job.attempts > self.settings.summary_job_max_attempts:
            # Claimed again and again: each worker that took it died. Stop the cycle.
            await self._finish(job, token, status=SummaryJobStatus.FAILED, failure="max_attempts")
            return True
        heartbeat = asyncio.create_task(self._heartbeat(job.id, token, lease))
        try:
            await self.run_claimed(job, token)
        except asyncio.CancelledError:
            # Shutting down: hand the job back now rather than when its lease expires.
            await asyncio.shield(self._release(job.id, token))
            raise
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        return True

    async def run_claimed(self, job: SummaryJobRecord, token: str) -> None:
        """Summarise a claimed job and write the result (or the failure)."""
        async with self.sessionmaker() as db:
            session = await SessionRepository(db, tenant_id=job.tenant_id).get(job.session_id)
            turns = TurnRepository(db, tenant_id=job.tenant_id)
            latest = await turns.latest_summary(job.session_id)
            sources = list(
                await turns.unsummarised_messages_between(
                    job.session_id, after_seq=latest.to_seq if latest else 0, to_seq=job.to_seq
                )
            )
            await db.commit()
        if session is None:
            return  # deleted: its jobs went with it
        if not sources:
            await self._finish(job, token, status=SummaryJobStatus.DONE, failure="nothing_left")
            return
        resolved = session_budget(
            session, settings=self.settings, tokenizers=self.runtime.tokenizers
        )
        work = SummaryWork(
            previous=summary_content(latest) if latest else None,
            sources=tuple(SourceText(m.id, m.role, content_text(m.content)) for m in sources),
            target_tokens=int(self.settings.summary_target_ratio * resolved.budget.input_budget),
            bounded=False,
        )
        outcome = await run_summarizer(
            self.runtime.summarizer, work, counter=resolved.counter, metrics=self.metrics
        )
        summarised = (
            accept_summary(
                outcome,
                counter=resolved.counter,
                target_tokens=work.target_tokens,
                sources=work.sources,
                source_seqs=[m.seq for m in sources],
            )
            if isinstance(outcome, SummaryContent)
            else None
        )
        if summarised is None:
            failure = outcome if isinstance(outcome, str) else "contract"
            logger.warning(
                "summary job %s for session %s failed (%s); the next turn truncates instead",
                job.id,
                job.session_id,
                failure,
            )
            await self._finish(job, token, status=SummaryJobStatus.FAILED, failure=failure)
            return
        await self._write(
            job,
            token,
            summarised,
            latest_id=latest.id if latest else None,
            encoding=resolved.counter.name,
        )

    async def _write(
        self,
        job: SummaryJobRecord,
        token: str,
        summarised: NewSummary,
        *,
        latest_id: int | None,
        encoding: str,
    ) -> None:
        async with self.sessionmaker() as db:
            session = await SessionRepository(db, tenant_id=job.tenant_id).get(
                job.session_id, lock=True
            )
            turns = TurnRepository(db, tenant_id=job.tenant_id)
            jobs = SummaryJobRepository(db)
            latest = await turns.latest_summary(job.session_id)
            if session is None:
                return
            if (latest.id if latest else None) != latest_id:
                # A turn that could not wait summarised meanwhile: this result folds a summary
                # that is no longer the newest, so it is dropped.
                await jobs.finish(
                    job.id, token=token, status=SummaryJobStatus.DONE, failure="superseded"
                )
                await db.commit()
                return
            summary_id = await turns.insert_summary(
                summary_values(
                    summarised.content,
                    session_id=job.session_id,
                    turn_id=job.turn_id,
                    turn_seq=job.turn_seq,
                    # A new summary covers the previous one's range and its sources.
                    from_message_id=latest.from_message_id if latest else summarised.source_ids[0],
                    to_message_id=summarised.source_ids[-1],
                    from_seq=latest.from_seq if latest else summarised.source_seqs[0],
                    to_seq=summarised.source_seqs[-1],
                    rendered=summarised.rendered,
                    tokens=summarised.tokens,
                    encoding=encoding,
                    summarizer=self.runtime.summarizer.name,
                )
            )
            if not await jobs.finish(
                job.id, token=token, status=SummaryJobStatus.DONE, summary_id=summary_id
            ):
                await db.rollback()  # the claim was lost: whoever holds it now writes
                return
            await db.commit()
        self.metrics.summary_count.labels(job.reason).inc()

    async def _finish(self, job: SummaryJobRecord, token: str, **values: object) -> None:
        async with self.sessionmaker() as db:
            await SummaryJobRepository(db).finish(job.id, token=token, **values)
            await db.commit()

    async def _release(self, job_id: int, token: str) -> None:
        async with self.sessionmaker() as db:
            await SummaryJobRepository(db).release(job_id, token=token)
            await db.commit()

    async def _heartbeat(self, job_id: int, token: str, lease: float) -> None:
        while True:
            await asyncio.sleep(lease / 3)
            async with self.sessionmaker() as db:
                held = await SummaryJobRepository(db).renew(
                    job_id, token=token, lease_seconds=lease
                )
                await db.commit()
            if not held:
                return
