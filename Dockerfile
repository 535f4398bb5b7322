FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    TIKTOKEN_CACHE_DIR=/opt/tiktoken-cache \
    CONTEXTD_HOST=0.0.0.0 \
    CONTEXTD_PORT=8080 \
    CONTEXTD_DATABASE_URL=sqlite+aiosqlite:////data/contextd.db

WORKDIR /srv/contextd
COPY pyproject.toml setup.py README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
RUN pip install --no-cache-dir ".[otel]" \
    # Bake the BPE files in, so the container counts exactly without internet at run time.
    && python -c "import tiktoken; [tiktoken.get_encoding(e) for e in ('o200k_base', 'cl100k_base')]" \
    && useradd --system --home /data contextd \
    && mkdir -p /data && chown contextd /data

USER contextd
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/readyz')"
CMD ["contextd", "serve"]
