"""A small FastAPI upstream for the third-party suite (tests/world).

Nothing here is restmcp code: FastAPI, Starlette and python-multipart decide what a valid
request is, the way they do for every API built on them. Each route stands for something real
APIs do that restmcp got wrong from the outside; tests/world/app-openapi.yaml (OpenAPI 3.0.3)
and app-openapi-3.1.yaml describe them by hand, the way such APIs document themselves.

  POST /upload, /upload/avatar, /upload/encoded   multipart with a file part (UploadFile)
  GET  /compressed/{encoding}                     JSON always sent gzip/deflate/br-encoded
  GET  /bomb/{encoding}                           256 MiB of JSON-ish text in a tiny encoded body
  GET  /large?kib=N                               a JSON object of about N KiB (GZipMiddleware
                                                  compresses it when asked)
  GET  /scalar/{kind}, /array/...                 JSON string, number, integer, boolean, arrays
  GET  /pets/{petId}                              XML or JSON by Accept, XML by default (Petstore)
  GET  /stubborn/pets/{petId}                     documents XML and JSON, always answers XML
  GET  /report                                    XML only
  POST /orders                                    accepts only an XML body (application/xml)
  GET/POST/DELETE /tags/{arn}                     AWS REST-JSON routes (`#tagKeys` in the spec)
  GET/POST /?Action=...                           AWS query-protocol routes (`/#Action=...`)

`GET /_seen?path=P` returns the headers and query of the requests seen on path P (newest last),
so the driver can see what restmcp sent; it is not in the OpenAPI files.

Run: python -m uvicorn app:app --app-dir tests/world --host 127.0.0.1 --port N
"""

from __future__ import annotations

import gzip as gzip_module
import hashlib
import json
import threading
import zlib
from collections import defaultdict, deque
from typing import Annotated, Any
from xml.etree import ElementTree

import brotlicffi  # installed with httpbin; FastAPI itself has no brotli
from fastapi import FastAPI, File, Form, HTTPException, Query, Request, UploadFile
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import JSONResponse, Response

app = FastAPI(title="restmcp world app", version="1.0.0")
app.add_middleware(GZipMiddleware, minimum_size=1024)

SEEN: dict[str, deque[dict[str, Any]]] = defaultdict(lambda: deque(maxlen=20))


@app.middleware("http")
async def remember(request: Request, call_next: Any) -> Any:
    if request.url.path != "/_seen":
        SEEN[request.url.path].append(
            {
                "method": request.method,
                "headers": {k.lower(): v for k, v in request.headers.items()},
                "query": request.url.query,
                "query_items": [[k, v] for k, v in request.query_params.multi_items()],
            }
        )
    return await call_next(request)


@app.get("/_seen")
def seen(path: str) -> list[dict[str, Any]]:
    return list(SEEN.get(path, []))


# --- multipart uploads (defect 3) --------------------------------------------------------


async def describe_upload(file: UploadFile, note: str | None) -> dict[str, Any]:
    data = await file.read()
    return {
        "filename": file.filename,
        "content_type": file.content_type,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "note": note,
    }


@app.post("/upload")
async def upload(file: Annotated[UploadFile, File()], note: Annotated[str | None, Form()] = None) -> dict[str, Any]:
    return await describe_upload(file, note)


@app.post("/upload/avatar")
async def upload_avatar(avatar: Annotated[UploadFile, File()]) -> dict[str, Any]:
    return await describe_upload(avatar, None)


@app.post("/upload/encoded")
async def upload_encoded(
    file: Annotated[UploadFile, File()], note: Annotated[str | None, Form()] = None
) -> dict[str, Any]:
    return await describe_upload(file, note)


# --- compressed bodies (defect 5) --------------------------------------------------------

ENCODINGS = ("gzip", "deflate", "br")


def encode(data: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip_module.compress(data)
    if encoding == "deflate":  # HTTP's "deflate" is the zlib format (RFC 9110 8.4.1.2)
        return zlib.compress(data)
    return brotlicffi.compress(data)


def compressed_document(encoding: str) -> dict[str, Any]:
    return {
        "encoding": encoding,
        "items": [{"id": i, "name": f"item {i}", "tags": ["a", "b", "c"]} for i in range(500)],
    }


@app.get("/compressed/{encoding}")
def compressed(encoding: str) -> Response:
    """Encoded whatever Accept-Encoding said, as many servers and CDNs do."""
    if encoding not in ENCODINGS:
        raise HTTPException(404, f"unknown encoding {encoding}")
    body = json.dumps(compressed_document(encoding)).encode()
    return Response(
        encode(body, encoding),
        media_type="application/json",
        headers={"Content-Encoding": encoding, "Vary": "Accept-Encoding"},
    )


BOMB_DECODED = 256 * 1024 * 1024
BOMBS: dict[str, bytes] = {}
BOMBS_READY = threading.Event()


def build_bombs() -> None:
    chunk = b"0," * (512 * 1024)  # 1 MiB of a JSON array's insides
    for encoding in ENCODINGS:
        if encoding == "br":
            c: Any = brotlicffi.Compressor(quality=5)
            parts = [c.process(b"[")] + [c.process(chunk) for _ in range(BOMB_DECODED // len(chunk))]
            parts.append(c.finish())
        else:
            wbits = 31 if encoding == "gzip" else 15
            z = zlib.compressobj(9, zlib.DEFLATED, wbits)
            parts = [z.compress(b"[")] + [z.compress(chunk) for _ in range(BOMB_DECODED // len(chunk))]
            parts.append(z.flush())
        BOMBS[encoding] = b"".join(parts)
    BOMBS_READY.set()


threading.Thread(target=build_bombs, name="bombs", daemon=True).start()


@app.get("/bomb/{encoding}")
def bomb(encoding: str) -> Response:
    """A few hundred KiB on the wire, 256 MiB once decoded."""
    if encoding not in ENCODINGS:
        raise HTTPException(404, f"unknown encoding {encoding}")
    if not BOMBS_READY.wait(timeout=60):
        raise HTTPException(503, "bombs not built yet")
    return Response(BOMBS[encoding], media_type="application/json", headers={"Content-Encoding": encoding})


@app.get("/large")
def large(kib: Annotated[int, Query(ge=1, le=16384)] = 3072) -> Response:
    """A JSON object of about `kib` KiB: {"items": [{"id", "text"}...]}."""
    # Text that compresses as real data does (a few-fold), not 1000-fold like "xxx…":
    # restmcp refuses a body past its size cap that inflates more than 200-fold.
    count = max(1, kib * 1024 // 1024)
    items = []
    for i in range(count):
        digest = hashlib.sha256(str(i).encode()).hexdigest()
        items.append({"id": i, "text": (digest * 16)[:1000]})
    body = json.dumps({"items": items}).encode()
    return Response(body, media_type="application/json")


# --- scalar and array results (defect 2) -------------------------------------------------

SCALARS: dict[str, Any] = {"string": "hello, world", "number": 42.5, "integer": 7, "boolean": True}


@app.get("/scalar/{kind}")
def scalar(kind: str) -> JSONResponse:
    if kind not in SCALARS:
        raise HTTPException(404, f"unknown kind {kind}")
    return JSONResponse(SCALARS[kind])


@app.get("/array/strings")
def array_strings() -> list[str]:
    return ["alpha", "beta", "gamma"]


@app.get("/array/objects")
def array_objects() -> list[dict[str, Any]]:
    return [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]


# --- content negotiation (defect 1) ------------------------------------------------------

PET = {"id": 0, "name": "doggie", "status": "available", "tags": [{"id": 1, "name": "good"}]}


def pet(pet_id: int) -> dict[str, Any]:
    return {**PET, "id": pet_id}


def pet_xml(p: dict[str, Any]) -> str:
    tags = "".join(f"<tag><id>{t['id']}</id><name>{t['name']}</name></tag>" for t in p["tags"])
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f"<Pet><id>{p['id']}</id><name>{p['name']}</name><status>{p['status']}</status>"
        f"<tags>{tags}</tags></Pet>"
    )


def prefers_json(accept: str | None) -> bool:
    """True when Accept ranks application/json above application/xml (q-values honoured);
    no Accept or */* alone gets XML, Petstore's first documented type."""
    if not accept:
        return False
    best: dict[str, float] = {}
    for item in accept.split(","):
        fields = [f.strip() for f in item.split(";")]
        media = fields[0].lower()
        q = 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        best[media] = max(best.get(media, 0.0), q)
    json_q = best.get("application/json", 0.0)
    xml_q = max(best.get("application/xml", 0.0), best.get("text/xml", 0.0))
    return json_q > 0 and json_q > xml_q


@app.get("/pets/{petId}")
def get_pet(petId: int, request: Request) -> Response:  # noqa: N803 - the spec's name
    p = pet(petId)
    if prefers_json(request.headers.get("accept")):
        return JSONResponse(p)
    return Response(pet_xml(p), media_type="application/xml")


@app.get("/stubborn/pets/{petId}")
def get_pet_stubborn(petId: int) -> Response:  # noqa: N803
    return Response(pet_xml(pet(petId)), media_type="application/xml")


@app.get("/report")
def report() -> Response:
    return Response(
        '<?xml version="1.0"?><report><title>Quarterly</title><total>12</total></report>',
        media_type="application/xml",
    )


# --- XML request bodies (defect 9) -------------------------------------------------------


@app.post("/orders")
async def create_order(request: Request) -> JSONResponse:
    content_type = request.headers.get("content-type", "")
    media = content_type.split(";")[0].strip().lower()
    if media not in ("application/xml", "text/xml"):
        return JSONResponse({"detail": f"expected an XML body, got {content_type or 'none'}"}, status_code=415)
    raw = await request.body()
    try:
        root = ElementTree.fromstring(raw)
    except ElementTree.ParseError as exc:
        return JSONResponse({"detail": f"body is not XML: {exc}", "body": raw[:200].decode("utf-8", "replace")}, 400)
    fields = {child.tag: (child.text or "") for child in root}
    return JSONResponse({"content_type": media, "root": root.tag, "fields": fields}, status_code=201)


# --- AWS-style routes: `#` path suffixes (defect 7) ---------------------------------------


@app.get("/tags/{arn:path}")
def list_tags(arn: str) -> dict[str, Any]:
    return {"resourceArn": arn, "tags": {"team": "world", "env": "test"}}


@app.post("/tags/{arn:path}")
async def tag_resource(arn: str, request: Request) -> dict[str, Any]:
    body = await request.json()
    return {"resourceArn": arn, "added": sorted((body.get("tags") or {}).keys())}


@app.delete("/tags/{arn:path}")
def untag_resource(arn: str, tagKeys: Annotated[list[str], Query()]) -> dict[str, Any]:  # noqa: N803
    return {"resourceArn": arn, "removed": tagKeys}


@app.get("/")
def query_get(request: Request) -> JSONResponse:
    return query_action(request, None)


@app.post("/")
async def query_post(request: Request) -> JSONResponse:
    form = dict((await request.form()).multi_items())
    return query_action(request, form)


def query_action(request: Request, form: dict[str, Any] | None) -> JSONResponse:
    action = request.query_params.get("Action") or (form or {}).get("Action")
    if not action:
        return JSONResponse({"Error": {"Code": "MissingAction", "Message": "Action is required"}}, 400)
    return JSONResponse(
        {
            "Action": action,
            "query": dict(request.query_params.multi_items()),
            "form": {k: str(v) for k, v in (form or {}).items()},
        }
    )
