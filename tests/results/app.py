"""The upstream of tests/results: 1000 numbered items served four ways.

Every item is `{"id": "it_0001", "n": 1, "text": "<about 200 ASCII characters>"}` (ids and
texts fixed, so a test can compare what came back with `item(n)`). Default page size 100,
at most 500 (more is a 422, as FastAPI answers any invalid query):

  GET /offset/items?offset=0&limit=100      {"items": [...], "total": 1000}
  GET /paged/items?page=1&per_page=100      a bare JSON array (pages counted from 1)
  GET /cursor/items?starting_after=ID&limit=100
                                            {"object": "list", "data": [...], "has_more": bool}
                                            (Stripe's shape; an unknown id is a 400)
  GET /plain/items                          all 1000, a bare array, no paging parameters

`GET /_seen` (not in paging-api.yaml) answers every request to the four above, in order:
`[{"path": "/paged/items", "query": {"page": "1", "per_page": "50"}, "returned": 50}, ...]`
(the query string as received); `DELETE /_seen` forgets them.

    uvicorn app:app --host 127.0.0.1 --port PORT     (fastapi==0.165.0, uvicorn==0.54.0)
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request

COUNT = 1000
DEFAULT_SIZE = 100
MAX_SIZE = 500
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo")


def item(n: int) -> dict[str, Any]:
    """Item n (1..COUNT): its text is about 200 characters (190..209), different per item."""
    words = [f"Item {n} of {COUNT}:"]
    i = n
    while sum(len(w) + 1 for w in words) < 190 + n % 20:
        words.append(WORDS[i % len(WORDS)])
        i = i * 7 + 3
    text = " ".join(words)[: 190 + n % 20]
    return {"id": f"it_{n:04d}", "n": n, "text": text}


ITEMS = [item(n) for n in range(1, COUNT + 1)]
INDEX = {it["id"]: i for i, it in enumerate(ITEMS)}
SEEN: list[dict[str, Any]] = []

app = FastAPI(title="paging test upstream", openapi_url=None, docs_url=None, redoc_url=None)


def seen(request: Request, returned: int) -> None:
    SEEN.append({"path": request.url.path, "query": dict(request.query_params), "returned": returned})


@app.get("/offset/items")
def offset_items(request: Request, offset: int = Query(0, ge=0),
                 limit: int = Query(DEFAULT_SIZE, ge=1, le=MAX_SIZE)) -> dict[str, Any]:
    page = ITEMS[offset: offset + limit]
    seen(request, len(page))
    return {"items": page, "total": COUNT}


@app.get("/paged/items")
def paged_items(request: Request, page: int = Query(1, ge=1),
                per_page: int = Query(DEFAULT_SIZE, ge=1, le=MAX_SIZE)) -> list[dict[str, Any]]:
    start = (page - 1) * per_page
    out = ITEMS[start: start + per_page]
    seen(request, len(out))
    return out


@app.get("/cursor/items")
def cursor_items(request: Request, starting_after: str | None = Query(None),
                 limit: int = Query(DEFAULT_SIZE, ge=1, le=MAX_SIZE)) -> dict[str, Any]:
    if starting_after is None:
        start = 0
    elif starting_after in INDEX:
        start = INDEX[starting_after] + 1
    else:
        seen(request, 0)
        raise HTTPException(400, f"no such item: {starting_after}")
    data = ITEMS[start: start + limit]
    seen(request, len(data))
    return {"object": "list", "data": data, "has_more": start + len(data) < COUNT}


@app.get("/plain/items")
def plain_items(request: Request) -> list[dict[str, Any]]:
    seen(request, COUNT)
    return ITEMS


# --- a long-running operation (202 Accepted, then a status to poll) ---------------------
# POST /reports answers 202 with a status monitor (Location: /reports/{job}/status, or with
# via=operation-location the header Operation-Location: <absolute URL>); the status says
# "running" (with Retry-After: `retry_after`, default "1"; fractions allowed) for the first
# `polls` reads and until `seconds` seconds passed since the POST, then ends: "succeeded"
# with the report `{"title": title, "rows": 1000}` (the same for every job with that title:
# a test compares results of different jobs), or with fail=true "failed" and an error saying
# why. Every POST and poll is logged in SEEN (`/_seen`); the polls' path names the job.

JOBS: dict[str, dict[str, Any]] = {}
FAILURE = {"code": "QuotaExceeded", "message": "the report quota for this month is used up"}


@app.post("/reports", status_code=202)
def start_report(request: Request, polls: int = Query(2, ge=0, le=100),
                 seconds: float = Query(0, ge=0, le=600), retry_after: str = Query("1"),
                 fail: bool = Query(False), title: str = Query("report"),
                 via: str = Query("location", pattern="^(location|operation-location)$")) -> Any:
    import time

    from fastapi.responses import JSONResponse

    job = str(len(JOBS) + 1)
    JOBS[job] = {"left": polls, "polled": 0, "until": time.monotonic() + seconds, "retry_after": retry_after,
                 "fail": fail, "title": title}
    SEEN.append({"path": "/reports", "query": dict(request.query_params), "returned": 0})
    monitor = f"/reports/{job}/status"
    headers = {"Retry-After": "0"}
    if via == "operation-location":
        headers["Operation-Location"] = str(request.base_url).rstrip("/") + monitor
    else:
        headers["Location"] = monitor
    return JSONResponse({"status": "accepted"}, status_code=202, headers=headers)


@app.get("/reports/{job}/status")
def report_status(job: str, request: Request) -> Any:
    import time

    from fastapi.responses import JSONResponse

    state = JOBS.get(job)
    if state is None:
        raise HTTPException(404, "no such job")
    state["polled"] += 1
    SEEN.append({"path": request.url.path, "query": {}, "returned": 0})
    if state["left"] > 0 or time.monotonic() < state["until"]:
        state["left"] = max(0, state["left"] - 1)
        return JSONResponse({"status": "running", "polled": state["polled"]},
                            headers={"Retry-After": state["retry_after"]})
    if state["fail"]:
        return {"status": "failed", "error": FAILURE}
    return {"status": "succeeded", "report": {"title": state["title"], "rows": 1000}}


@app.get("/_seen")
def get_seen() -> list[dict[str, Any]]:
    return SEEN


@app.delete("/_seen")
def clear_seen() -> dict[str, int]:
    n = len(SEEN)
    SEEN.clear()
    return {"cleared": n}
