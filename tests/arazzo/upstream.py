"""The scripted upstream of the Arazzo differential suite (tests/arazzo/run.sh).

One FastAPI app with a catch-all route for every method and path. It plays a *script*: a list
of rules, each

    {method: GET, path: /pet/findByTags, responses: [{status, headers, body, json}, ...]}

where `path` is an exact path (the query is not part of it) or, starting with `^`, a regular
expression the whole path must match; an optional `query: {name: value}` must be a subset of
the request's query. The first rule that matches answers, with its responses in sequence: the
first request gets the first response, the next one the second, and the last one repeats.
A response has a `status` (default 200), `headers`, and a `json` value (sent as
application/json unless the headers name another type) or a `body` text (sent as text/plain
unless they do). A request no rule matches gets 404 `{"error": "no rule"}` and is logged with
`unmatched: true`.

Every request is written to the access log (the witness both executors are judged by), in
memory and as JSONL to $ARAZZO_ACCESS_LOG when set: method, path (as sent, percent-encoding
kept), query (decoded name/value pairs, sorted; a value that is a JSON object or array
rewritten with sorted keys, no spaces), the headers of interest (authorization,
cookie, accept, and every x-* header), content type (the media type, lower case, no
parameters), the body canonicalized (JSON parsed, a form body as sorted pairs, anything
else as text), and `t`, the upstream's monotonic clock when it arrived (for retry gaps).

Control endpoints, under /__arazzo (no description in the corpus has that prefix):
    POST /__arazzo/script   the body is the script (a JSON list of rules); resets the log and
                            every rule's position
    GET  /__arazzo/log      the log since the last reset, as a JSON list

Run: python -m uvicorn upstream:app --app-dir tests/arazzo --host 127.0.0.1 --port N
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

app = FastAPI(title="restmcp arazzo scripted upstream", version="1.0.0", openapi_url=None, docs_url=None, redoc_url=None)

CONTROL = "/__arazzo"
LOCK = threading.Lock()
SCRIPT: list[dict[str, Any]] = []
PLAYED: list[int] = []  # per rule, how many of its responses were played
LOG: list[dict[str, Any]] = []
LOG_FILE = os.environ.get("ARAZZO_ACCESS_LOG")

INTERESTING = {"authorization", "cookie", "accept"}


def canonical_body(content_type: str, raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            return {"json": json.loads(text)}
        except ValueError:
            return {"text": text}
    if content_type == "application/x-www-form-urlencoded":
        return {"form": sorted([k, v] for k, v in parse_qsl(text, keep_blank_values=True))}
    return {"text": text}


def canonical_value(value: str) -> str:
    """A query value that is JSON text of an object or array (a parameter with `content`),
    written again with sorted keys and no spaces; any other value as it came."""
    if value[:1] in ("{", "["):
        try:
            return json.dumps(json.loads(value), sort_keys=True, separators=(",", ":"))
        except ValueError:
            pass
    return value


def matches(rule: dict[str, Any], method: str, path: str, query: list[list[str]]) -> bool:
    if str(rule.get("method", "")).upper() not in ("", "*", method):
        return False
    want = str(rule.get("path", ""))
    if want.startswith("^"):
        if not re.fullmatch(want, path):
            return False
    elif want != path:
        return False
    for name, value in (rule.get("query") or {}).items():
        if [name, str(value)] not in query:
            return False
    return True


@app.post(CONTROL + "/script")
async def load_script(request: Request) -> dict[str, Any]:
    script = await request.json()
    if not isinstance(script, list):
        return JSONResponse({"error": "a script is a list of rules"}, status_code=400)
    with LOCK:
        SCRIPT[:] = script
        PLAYED[:] = [0] * len(script)
        LOG.clear()
        if LOG_FILE:
            with open(LOG_FILE, "a", encoding="utf-8") as f:
                f.write(json.dumps({"reset": len(script)}) + "\n")
    return {"rules": len(script)}


@app.get(CONTROL + "/log")
def read_log() -> list[dict[str, Any]]:
    with LOCK:
        return list(LOG)


@app.api_route("/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"])
async def play(request: Request, rest: str) -> Response:
    method = request.method.upper()
    path = request.scope.get("raw_path", b"").decode("latin-1").split("?", 1)[0] or request.url.path
    query = sorted([k, canonical_value(v)] for k, v in parse_qsl(request.url.query, keep_blank_values=True))
    raw_type = request.headers.get("content-type", "")
    content_type = raw_type.split(";", 1)[0].strip().lower()
    raw = await request.body()
    headers = {k.lower(): v for k, v in request.headers.items() if k.lower() in INTERESTING or k.lower().startswith("x-")}
    entry: dict[str, Any] = {
        "method": method,
        "path": path,
        "query": query,
        "headers": dict(sorted(headers.items())),
        "content_type": content_type or None,
        "body": canonical_body(content_type, raw),
        "t": time.monotonic(),
    }
    answer: dict[str, Any] | None = None
    with LOCK:
        for i, rule in enumerate(SCRIPT):
            if matches(rule, method, path, query):
                responses = rule.get("responses") or [{}]
                answer = responses[min(PLAYED[i], len(responses) - 1)]
                PLAYED[i] += 1
                entry["rule"] = i
                break
        else:
            entry["unmatched"] = True
        LOG.append(entry)
        if LOG_FILE:
            with open(LOG_FILE, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, sort_keys=True) + "\n")
    if answer is None:
        return JSONResponse({"error": "no rule", "method": method, "path": path}, status_code=404)
    status = int(answer.get("status", 200))
    out_headers = {str(k): str(v) for k, v in (answer.get("headers") or {}).items()}
    has_type = any(k.lower() == "content-type" for k in out_headers)
    if "json" in answer:
        if not has_type:
            out_headers["content-type"] = "application/json"
        return Response(json.dumps(answer["json"]), status_code=status, headers=out_headers)
    if "body" in answer:
        if not has_type:
            out_headers["content-type"] = "text/plain; charset=utf-8"
        return Response(str(answer["body"]), status_code=status, headers=out_headers)
    return Response(b"", status_code=status, headers=out_headers)
