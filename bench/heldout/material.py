"""The rest of what an agent's session holds: routine requests, small talk, the assistant's
prose in its many shapes, tool calls with real-looking ids and arguments, and tool output of
many kinds and lengths. Nothing here states a user fact."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable

SERVICES = (
    "checkout-api",
    "ingest-worker",
    "search-indexer",
    "notif-gateway",
    "auth-proxy",
    "report-builder",
    "media-resizer",
    "quota-service",
)
JOBS = ("nightly-export", "etl-orders", "backup-verify", "lint-all", "reindex-catalog", "gc-blobs")
TABLES = ("orders", "invoices", "sessions_audit", "payouts", "events_raw", "user_prefs", "refunds")
PACKAGES = ("requests", "pydantic", "sqlalchemy", "numpy", "urllib3", "boto3", "celery", "redis")
MODULES = (
    "api/handlers",
    "core/pricing",
    "workers/ingest",
    "lib/retry",
    "db/models",
    "auth/tokens",
)
HOSTS = ("api.internal.example", "status.example.net", "registry.example.org", "cdn.example.com")
WORDS = (
    "alpha",
    "amber",
    "basalt",
    "cobalt",
    "delta",
    "ember",
    "fjord",
    "granite",
    "harbor",
    "indigo",
    "juniper",
    "kelp",
    "lumen",
    "mosaic",
    "nectar",
    "onyx",
    "quartz",
    "rivet",
    "saffron",
    "tundra",
    "umber",
    "vortex",
    "willow",
    "zephyr",
)
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
LOG_EVENTS = (
    "request completed status={status} duration_ms={ms} path=/v2/{word}/{n}",
    "retrying upstream call attempt={n} backoff_ms={ms}",
    "cache miss key={word}:{hex}",
    "connection pool exhausted waiting={n} max=20",
    "job {job} finished rows={n} elapsed={ms}ms",
    "healthcheck ok latency_ms={ms}",
    "slow query detected table={table} ms={ms}",
    "published event topic={word}.updated partition={n} offset={big}",
    "token refresh scheduled in {n}s for client {hex}",
    "worker heartbeat pid={big} rss_mb={n}",
)
TOOLS: list[dict[str, object]] = [
    {
        "type": "function",
        "function": {
            "name": "run_shell",
            "description": "Run a shell command in the project's sandbox and return its output.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line."},
                    "timeout_s": {"type": "integer", "description": "Seconds before it is killed."},
                },
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path from the repository root."},
                    "start_line": {"type": "integer", "description": "First line to read."},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_logs",
            "description": "Search a service's logs.",
            "parameters": {
                "type": "object",
                "properties": {
                    "service": {"type": "string", "description": "The service name."},
                    "query": {"type": "string", "description": "Words or a trace id."},
                    "since": {"type": "string", "description": "How far back, e.g. 2h."},
                },
                "required": ["service", "query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "http_get",
            "description": "Fetch a URL and return status, headers and body.",
            "parameters": {
                "type": "object",
                "properties": {"url": {"type": "string", "description": "The URL."}},
                "required": ["url"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "query_db",
            "description": "Run a read-only SQL query on the replica.",
            "parameters": {
                "type": "object",
                "properties": {"sql": {"type": "string", "description": "One SELECT statement."}},
                "required": ["sql"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_tests",
            "description": "Run part of the test suite.",
            "parameters": {
                "type": "object",
                "properties": {
                    "target": {"type": "string", "description": "A test path or -k expression."},
                    "verbose": {"type": "boolean", "description": "Show every test."},
                },
                "required": ["target"],
            },
        },
    },
]


def call_id(rng: random.Random) -> str:
    return "call_" + "".join(rng.choices(string.ascii_letters + string.digits, k=24))


def code(rng: random.Random, size: int = 6) -> str:
    """A reference of capitals and digits ("7QX2KD")."""
    return "".join(rng.choices(string.ascii_uppercase + string.digits, k=size))


def hex_id(rng: random.Random, size: int = 16) -> str:
    return "".join(rng.choices("0123456789abcdef", k=size))


def _lines(rng: random.Random) -> int:
    # Most outputs are short, some are long: a heavy tail, as real tool output has.
    return max(2, min(220, int(rng.lognormvariate(2.6, 1.0))))


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        status=rng.choice((200, 200, 201, 204, 404, 500, 502)),
        ms=rng.randint(2, 4000),
        word=rng.choice(WORDS),
        n=rng.randint(1, 99),
        hex=hex_id(rng, 12),
        big=rng.randint(10_000, 9_999_999),
        job=rng.choice(JOBS),
        table=rng.choice(TABLES),
    )


def log_output(rng: random.Random) -> str:
    service = rng.choice(SERVICES)
    hour, minute = rng.randint(0, 23), rng.randint(0, 59)
    rows = []
    for i in range(_lines(rng)):
        second = (minute * 60 + i * rng.randint(1, 9)) % 3600
        stamp = f"2025-06-{rng.randint(1, 28):02d}T{hour:02d}:{second // 60:02d}:{second % 60:02d}"
        rows.append(
            f"{stamp}.{rng.randint(0, 999):03d}Z {rng.choice(LEVELS):5} {service} "
            f"[{hex_id(rng, 8)}] {_fill(rng, rng.choice(LOG_EVENTS))}"
        )
    return "\n".join(rows)


def json_output(rng: random.Random) -> str:
    def value(depth: int) -> object:
        kind = rng.random()
        if depth < 3 and kind < 0.25:
            return {rng.choice(WORDS): value(depth + 1) for _ in range(rng.randint(1, 5))}
        if depth < 3 and kind < 0.4:
            return [value(depth + 1) for _ in range(rng.randint(1, 6))]
        if kind < 0.6:
            return rng.randint(0, 100_000)
        if kind < 0.7:
            return rng.random() < 0.5
        if kind < 0.75:
            return None
        return f"{rng.choice(WORDS)}-{hex_id(rng, 6)}"

    document = {
        "id": hex_id(rng, 24),
        "service": rng.choice(SERVICES),
        "items": [value(1) for _ in range(_lines(rng) // 3 + 1)],
        "meta": {"page": rng.randint(1, 9), "next": rng.random() < 0.5},
    }
    indent = rng.choice((None, 2))
    return json.dumps(document, indent=indent)


def table_output(rng: random.Random) -> str:
    table = rng.choice(TABLES)
    columns = ["id", "status", "amount_cents", "created_at", "region"]
    rows = [" | ".join(f"{c:^14}" for c in columns), "-+-".join("-" * 14 for _ in columns)]
    count = _lines(rng)
    for _ in range(count):
        rows.append(
            " | ".join(
                (
                    f"{rng.randint(1000, 999_999):>14}",
                    f"{rng.choice(('paid', 'failed', 'pending', 'void')):<14}",
                    f"{rng.randint(50, 250_000):>14}",
                    f"2025-05-{rng.randint(1, 28):02d} "
                    f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
                    f"{rng.choice(('eu-west-1', 'us-east-2', 'ap-south-1')):<14}",
                )
            )
        )
    return f"-- {table}\n" + "\n".join(rows) + f"\n({count} rows)"


def stack_trace(rng: random.Random) -> str:
    if rng.random() < 0.5:
        frames = [
            f'  File "/srv/app/{rng.choice(MODULES)}.py", line {rng.randint(10, 900)}, in '
            f"{rng.choice(WORDS)}_{rng.choice(('handler', 'load', 'apply', 'commit'))}\n"
            f"    {rng.choice(('result = await', 'return', 'row =', 'self._state ='))} "
            f"{rng.choice(WORDS)}({rng.choice(('payload', 'session', 'key', 'rows'))})"
            for _ in range(rng.randint(3, 14))
        ]
        error = rng.choice(
            (
                "KeyError: 'currency'",
                "sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint",
                "TimeoutError: upstream did not answer in 30.0s",
                "ValueError: invalid literal for int() with base 10: 'N/A'",
            )
        )
        return "Traceback (most recent call last):\n" + "\n".join(frames) + "\n" + error
    frames = [
        f"\tat com.example.{rng.choice(WORDS)}.{rng.choice(WORDS).title()}Service."
        f"{rng.choice(('process', 'handle', 'run', 'call'))}({rng.choice(WORDS).title()}"
        f"Service.java:{rng.randint(20, 700)})"
        for _ in range(rng.randint(4, 20))
    ]
    return (
        "java.lang.IllegalStateException: Connection is closed\n"
        + "\n".join(frames)
        + f"\nCaused by: java.net.SocketException: Broken pipe\n\t... {rng.randint(3, 40)} more"
    )


def html_output(rng: random.Random) -> str:
    items = "\n".join(
        f'    <li class="item"><a href="/{rng.choice(WORDS)}/{rng.randint(1, 999)}">'
        f"{rng.choice(WORDS).title()} {rng.choice(WORDS)}</a></li>"
        for _ in range(_lines(rng) // 2 + 1)
    )
    return (
        f"HTTP/1.1 {rng.choice((200, 200, 503))}\ncontent-type: text/html; charset=utf-8\n\n"
        '<!doctype html>\n<html lang="en">\n<head><title>Status</title>'
        '<meta name="viewport" content="width=device-width"></head>\n<body>\n'
        f'  <div id="banner">All systems {rng.choice(("operational", "degraded"))}</div>\n'
        f"  <ul>\n{items}\n  </ul>\n</body>\n</html>"
    )


def csv_output(rng: random.Random) -> str:
    rows = ["date,service,requests,errors,p95_ms"]
    for _ in range(_lines(rng)):
        rows.append(
            f"2025-04-{rng.randint(1, 30):02d},{rng.choice(SERVICES)},{rng.randint(100, 90_000)},"
            f"{rng.randint(0, 400)},{rng.randint(20, 3000)}"
        )
    return "\n".join(rows)


def test_output(rng: random.Random) -> str:
    module = rng.choice(MODULES)
    total = rng.randint(5, 300)
    failed = rng.choice((0, 0, 1, 2))
    lines = [
        "============================= test session starts ==============================",
        f"collected {total} items",
        "",
    ]
    for _ in range(min(total, _lines(rng))):
        lines.append(
            f"tests/{module}/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)}_"
            f"{rng.choice(WORDS)} {rng.choice(('PASSED', 'PASSED', 'PASSED', 'SKIPPED'))}"
        )
    seconds = rng.uniform(0.5, 90)
    lines.append(
        f"========== {total - failed} passed, {failed} failed in {seconds:.2f}s =========="
    )
    return "\n".join(lines)


def listing_output(rng: random.Random) -> str:
    return "\n".join(
        f"{rng.choice(('-rw-r--r--', 'drwxr-xr-x', '-rwxr-xr-x'))}  1 app app "
        f"{rng.randint(0, 2_000_000):>9} Jun {rng.randint(1, 28):2d} {rng.randint(0, 23):02d}:"
        f"{rng.randint(0, 59):02d} {rng.choice(WORDS)}"
        f"{rng.choice(('.py', '.yaml', '', '.log', '.md'))}"
        for _ in range(_lines(rng))
    )


def source_output(rng: random.Random) -> str:
    body = "\n".join(
        f"    {rng.choice(('if', 'for', 'return', 'x =', 'await'))} {rng.choice(WORDS)}_"
        f"{rng.choice(WORDS)}({rng.choice(('self', 'row', 'payload', ''))})"
        for _ in range(_lines(rng))
    )
    return f"class {rng.choice(WORDS).title()}Handler:\n    def run(self, payload):\n{body}\n"


OUTPUTS: tuple[Callable[[random.Random], str], ...] = (
    log_output,
    json_output,
    table_output,
    stack_trace,
    html_output,
    csv_output,
    test_output,
    listing_output,
    source_output,
)


Output = Callable[[random.Random], str]


def tool_call(rng: random.Random) -> tuple[str, dict[str, object], Output]:
    """A call as a model makes it: a name, arguments, and the kind of output it gets."""
    service = rng.choice(SERVICES)
    choice = rng.randrange(6)
    if choice == 0:
        command = rng.choice(
            (
                f"kubectl -n prod logs deploy/{service} --since=1h | tail -n 200",
                f"git log --oneline -n 30 -- {rng.choice(MODULES)}",
                f"ls -la /var/lib/{service}/",
                f"docker compose ps {service}",
            )
        )
        output = log_output if "logs" in command else rng.choice((listing_output, log_output))
        return "run_shell", {"command": command, "timeout_s": rng.choice((30, 60, 120))}, output
    if choice == 1:
        path = f"{rng.choice(MODULES)}/{rng.choice(WORDS)}.py"
        return "read_file", {"path": path, "start_line": rng.randint(1, 300)}, source_output
    if choice == 2:
        query = rng.choice((f"trace_id={hex_id(rng)}", "timeout", "5xx", "OOMKilled", "deadlock"))
        args: dict[str, object] = {
            "service": service,
            "query": query,
            "since": rng.choice(("30m", "2h", "24h")),
        }
        return "search_logs", args, rng.choice((log_output, stack_trace))
    if choice == 3:
        url = (
            f"https://{rng.choice(HOSTS)}/v{rng.randint(1, 3)}/{rng.choice(WORDS)}"
            f"?limit={rng.randint(10, 100)}"
        )
        return "http_get", {"url": url}, rng.choice((json_output, html_output))
    if choice == 4:
        table = rng.choice(TABLES)
        sql = (
            f"SELECT id, status, amount_cents, created_at, region FROM {table} "
            f"WHERE status = '{rng.choice(('failed', 'pending'))}' ORDER BY created_at DESC "
            f"LIMIT {rng.randint(5, 200)}"
        )
        return "query_db", {"sql": sql}, rng.choice((table_output, csv_output))
    target = f"tests/{rng.choice(MODULES)}"
    return "run_tests", {"target": target, "verbose": rng.random() < 0.3}, test_output


ROUTINE: tuple[str, ...] = (
    "grep the {service} logs for trace id {hex}",
    "rerun the {job} job, it flaked again",
    "can you check why {service} is returning 502s",
    "Why is the p95 latency on {service} so high since this morning?",
    "run the tests for {module} please",
    "show me the last rows of {table} that failed",
    "bump {package} to {version} and see if anything breaks",
    "Can you look at the {job} output from last night?",
    "check the status page, something feels off",
    "kannst du kurz die Logs von {service} prüfen?",
    "peux-tu relancer le job {job} ?",
    "¿puedes revisar el despliegue de {service}?",
    "what changed in {module} this week",
    "Is {service} healthy right now?",
    "pull the error rate per service for the last few days",
)
CHAT: tuple[tuple[str, str], ...] = (
    ("thanks!", "You're welcome!"),
    ("haha fair", "😄"),
    ("brb coffee", "Enjoy — I'll be here."),
    ("ok cool", "👍"),
    ("good morning", "Good morning! What are we looking at today?"),
    ("merci !", "Avec plaisir !"),
    ("danke dir", "Gern geschehen!"),
    ("gracias", "¡De nada!"),
    ("long day today...", "Sounds like it. Want me to take the next item off your plate?"),
    ("that's wild", "Right? Systems are strange sometimes."),
    ("you're a lifesaver", "Happy to help."),
    ("lol", "🙂"),
    ("ok let me think about it", "Sure, take your time."),
    ("nice, that worked", "Great — glad it's sorted."),
)
TOPICS: tuple[str, ...] = (
    "optimistic locking",
    "exponential backoff",
    "idempotency keys",
    "connection pooling",
    "blue-green deploys",
    "consistent hashing",
    "write-ahead logging",
    "rate limiting",
    "circuit breakers",
    "database indexes",
    "CORS preflight requests",
    "JWT expiry",
)
PROSE_ASKS: tuple[str, ...] = (
    "explain how {topic} works, briefly",
    "what's the difference between {topic} and {other}?",
    "Write a small Python function for {topic}.",
    "Can you give me a checklist for {topic}?",
    "summarise the tradeoffs of {topic} in a table",
    "how would you test {topic}?",
)
SENTENCES: tuple[str, ...] = (
    "The main idea is to make the operation safe to repeat.",
    "It trades a bit of latency for a lot of predictability.",
    "Most failures here come from timeouts that are shorter than the slowest dependency.",
    "You want the check and the write to happen in one transaction.",
    "Measure before and after; the difference is usually smaller than expected.",
    "Keep the retry count low and add jitter so clients do not synchronise.",
    "The logs point at the upstream, not at our code.",
    "A partial rollout lets you compare error rates side by side.",
    "This is cheap to add and hard to get wrong.",
    "The catch is that the cache can serve stale data for a short window.",
    "Prefer a single source of truth and derive the rest.",
    "If the queue backs up, the workers are the bottleneck, not the database.",
    "Alerts should fire on symptoms users see, not on every internal blip.",
    "That pattern shows up whenever two writers race on the same row.",
)
CODE: tuple[str, ...] = (
    "```python\ndef with_retries(call, attempts=3, base=0.2):\n"
    "    for attempt in range(attempts):\n"
    "        try:\n            return call()\n        except TimeoutError:\n"
    "            time.sleep(base * 2 ** attempt + random.random() * base)\n    return call()\n```",
    "```sql\nSELECT status, count(*)\nFROM orders\nWHERE created_at > now() - interval '1 day'\n"
    "GROUP BY status\nORDER BY count(*) DESC;\n```",
    "```bash\nkubectl rollout restart deploy/checkout-api -n prod\nkubectl rollout status "
    "deploy/checkout-api -n prod --timeout=120s\n```",
    "```yaml\nreadinessProbe:\n  httpGet:\n    path: /healthz\n    port: 8080\n"
    "  periodSeconds: 5\n  failureThreshold: 3\n```",
    "```ts\nexport async function fetchJson<T>(url: string): Promise<T> {\n"
    "  const res = await fetch(url, { headers: { accept: 'application/json' } });\n"
    "  if (!res.ok) throw new Error(`HTTP ${res.status}`);\n"
    "  return res.json() as Promise<T>;\n}\n```",
)


def routine_request(rng: random.Random) -> str:
    return rng.choice(ROUTINE).format(
        service=rng.choice(SERVICES),
        hex=hex_id(rng),
        job=rng.choice(JOBS),
        module=rng.choice(MODULES),
        table=rng.choice(TABLES),
        package=rng.choice(PACKAGES),
        version=f"{rng.randint(1, 4)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
    )


def prose_request(rng: random.Random) -> str:
    topic, other = rng.sample(TOPICS, 2)
    return rng.choice(PROSE_ASKS).format(topic=topic, other=other)


def prose(rng: random.Random) -> str:
    """An assistant answer in one of the shapes real ones take."""
    shape = rng.randrange(6)

    def pick(count: int) -> list[str]:
        return rng.sample(SENTENCES, count)

    if shape == 0:
        return " ".join(pick(rng.randint(1, 2)))
    if shape == 1:
        return "Here's what I found:\n\n" + "\n".join(f"- {s}" for s in pick(rng.randint(3, 6)))
    if shape == 2:
        steps = pick(rng.randint(3, 5))
        return "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) + "\n\nWant me to go ahead?"
    if shape == 3:
        return f"{' '.join(pick(2))}\n\n{rng.choice(CODE)}\n\n{' '.join(pick(1))}"
    if shape == 4:
        rows = "\n".join(
            f"| {rng.choice(TOPICS)} | {rng.choice(('low', 'medium', 'high'))} | {s} |"
            for s in pick(rng.randint(2, 4))
        )
        return f"| option | cost | note |\n|---|---|---|\n{rows}"
    paragraphs = [" ".join(pick(rng.randint(2, 4))) for _ in range(rng.randint(2, 4))]
    return "\n\n".join(paragraphs)


def step_text(rng: random.Random) -> str | None:
    if rng.random() < 0.6:
        return None
    return rng.choice(
        (
            "Let me check the logs first.",
            "I'll look at the data before changing anything.",
            "Running that now.",
            "Checking a couple of things in parallel.",
        )
    )


ACKS: tuple[str, ...] = (
    "Noted.",
    "Got it, I'll keep that in mind.",
    "Thanks for the context.",
    "Understood — I'll factor that in.",
    "OK!",
    "Makes sense, thanks.",
)
QUESTION_ANSWERS: tuple[str, ...] = (
    "Let me look back at what we have on that.",
    "Checking our earlier notes.",
    "One moment, going back through the conversation.",
)
CLOSING = "ok that's it for today, thanks for all the help"
