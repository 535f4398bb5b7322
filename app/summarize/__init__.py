"""Summarisers: the interface and the built-in extractive one."""

from app.summarize.base import SourceMessage, Summarizer, SummaryRequest
from app.summarize.extractive import ExtractiveSummarizer

__all__ = ["ExtractiveSummarizer", "SourceMessage", "Summarizer", "SummaryRequest"]
