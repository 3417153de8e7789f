"""The upstream of tests/surface: a few notes whose ETag changes when they change.

  GET  /notes                 every note, a JSON array
  GET  /notes/{id}            one note {"id", "text", "version", "priority"}, with
                              `ETag: "<id>-v<version>"` and `Cache-Control: max-age=30`;
                              `If-None-Match` naming the current ETag answers 304 (no body);
                              an unknown id is a 404
  PUT  /notes/{id}            {"text": ...}: sets the note's text (creating it), its version + 1
  GET  /notes/{id}/badge      a PNG (8x8, one colour per version), image/png; 404 when unknown
  GET  /priorities/{p}        the notes of priority p (low, normal, high, urgent; else 422)

`GET /_log` (not in surface-api.yaml) answers every request to the above, in order:
`[{"method": "GET", "path": "/notes/a", "if_none_match": "\\"a-v1\\"", "status": 304}, ...]`;
the test reads it to see that a subscription's polls after the first were conditional.

    uvicorn app:app --host 127.0.0.1 --port PORT     (fastapi==0.165.0, uvicorn==0.54.0)
"""

from __future__ import annotations

import struct
import zlib
from typing import Any, Literal

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel

NOTES: dict[str, dict[str, Any]] = {
    "alpha": {"id": "alpha", "text": "Buy milk.", "version": 1, "priority": "low"},
    "bravo": {"id": "bravo", "text": "Call the plumber.", "version": 1, "priority": "urgent"},
    "charlie": {"id": "charlie", "text": "Water the plants.", "version": 1, "priority": "normal"},
}
LOG: list[dict[str, Any]] = []

app = FastAPI(title="surface test upstream", openapi_url=None, docs_url=None, redoc_url=None)


@app.middleware("http")
async def log_requests(request: Request, call_next: Any) -> Response:
    response = await call_next(request)
    if request.url.path != "/_log":
        LOG.append({"method": request.method, "path": request.url.path,
                    "if_none_match": request.headers.get("if-none-match"),
                    "tenant": request.headers.get("x-tenant"), "status": response.status_code})
    return response


@app.get("/_log")
def log() -> list[dict[str, Any]]:
    return LOG


def etag(note: dict[str, Any]) -> str:
    return f'"{note["id"]}-v{note["version"]}"'


@app.get("/notes")
def list_notes() -> list[dict[str, Any]]:
    return list(NOTES.values())


@app.get("/notes/{note_id}")
def get_note(note_id: str, request: Request) -> Response:
    note = NOTES.get(note_id)
    if note is None:
        return JSONResponse({"detail": f"no note {note_id}"}, status_code=404)
    tag = etag(note)
    headers = {"ETag": tag, "Cache-Control": "max-age=30"}
    if request.headers.get("if-none-match") == tag:
        return Response(status_code=304, headers=headers)
    return JSONResponse(note, headers=headers)


class Change(BaseModel):
    text: str


@app.put("/notes/{note_id}")
def put_note(note_id: str, change: Change) -> dict[str, Any]:
    note = NOTES.setdefault(note_id, {"id": note_id, "text": "", "version": 0, "priority": "normal"})
    note["text"] = change.text
    note["version"] += 1
    return note


def png(rgb: tuple[int, int, int], size: int = 8) -> bytes:
    """A size x size PNG of one colour."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@app.get("/notes/{note_id}/badge")
def get_badge(note_id: str) -> Response:
    note = NOTES.get(note_id)
    if note is None:
        return JSONResponse({"detail": f"no note {note_id}"}, status_code=404)
    return Response(png((200, 40 * note["version"] % 256, 40)), media_type="image/png")


@app.get("/priorities/{priority}")
def by_priority(priority: Literal["low", "normal", "high", "urgent"]) -> list[dict[str, Any]]:
    return [n for n in NOTES.values() if n["priority"] == priority]
