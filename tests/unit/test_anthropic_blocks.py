"""How a PDF's pages are found, and what a document block costs."""

from __future__ import annotations

import base64

from app.budget.anthropic_blocks import (
    BYTES_PER_UNKNOWN_PAGE,
    MAX_PDF_PAGES,
    PDF_PAGE_TOKENS,
    URL_DOCUMENT_PAGES,
    document_tokens,
    pdf_pages,
)


def characters(text: str) -> int:
    return len(text)


def test_pages_are_the_pdfs_page_objects_not_its_page_tree() -> None:
    pdf = (
        b"%PDF-1.4\n1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >> endobj\n"
        b"2 0 obj << /Type /Page /Parent 1 0 R >> endobj\n"
        b"3 0 obj <</Type/Page/Parent 1 0 R>> endobj\n"
    )
    assert pdf_pages(pdf) == 2


def test_a_pdf_whose_pages_sit_in_object_streams_is_read_by_its_page_tree_count() -> None:
    pdf = b"%PDF-1.7\n5 0 obj << /Count 12 /Kids [6 0 R] /Type /Pages >> endobj\n"
    assert pdf_pages(pdf) == 12


def test_a_pdf_with_nothing_readable_counts_a_page_per_ten_kilobytes() -> None:
    pdf = b"%PDF-1.7\n" + b"\x00" * (3 * BYTES_PER_UNKNOWN_PAGE)
    assert pdf_pages(pdf) == 4


def test_a_pdf_at_a_url_counts_the_assumed_pages_and_a_huge_one_anthropics_limit() -> None:
    at_url = {"type": "document", "source": {"type": "url", "url": "https://a.example/x.pdf"}}
    assert document_tokens(at_url, characters) >= URL_DOCUMENT_PAGES * PDF_PAGE_TOKENS
    pages = b"".join(b"<< /Type /Page >>" for _ in range(MAX_PDF_PAGES + 40))
    data = base64.b64encode(b"%PDF-1.7\n" + pages).decode()
    huge = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": data},
    }
    assert document_tokens(huge, characters) < (MAX_PDF_PAGES + 1) * PDF_PAGE_TOKENS


def test_a_plain_text_document_costs_its_text_and_title() -> None:
    text = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "x" * 500},
        "title": "Notice",
    }
    assert 506 <= document_tokens(text, characters) < 506 + 20
