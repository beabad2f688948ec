"""The explorer's HTTP server: the page at `/` and JSON endpoints over one `Walk`, on loopback.

The standard library's ThreadingHTTPServer serves it: a handful of JSON endpoints for one
local user need no web framework. It binds 127.0.0.1 only, answers only requests addressed to
that host (a web page elsewhere cannot reach it by DNS rebinding), takes POSTs only as JSON from
its own origin, and reads no body over `MAX_BODY` bytes. Requests are served one at a time
on the walk (a lock): the page is one person's.

| endpoint | body | answer |
|---|---|---|
| GET `/api/view` | | the walk as the page shows it (`Walk.view`) |
| POST `/api/init`, `/api/goto` | `{"index": k}` | the view after starting from initial state k, or moving the cursor to step k |
| POST `/api/choose` | `{"instance": id}` | the view after taking that action instance |
| POST `/api/back`, `/api/forward` | `{}` | the view after moving the cursor |
| POST `/api/search` | `{"query": "field op value"}` | the matching states reached so far |
| POST `/api/jump` | `{"match": k}` | the view at a state the search found |
| POST `/api/load` | `{"name": file name, "text": ITF JSON}` | the view with the trace as the path |
| POST `/api/save` | `{}` | `{"saved": path}`: the walk written to `--save PATH` |
| GET `/api/walk.itf.json` | | the walk as an ITF trace (a download) |

Bad input is answered 400 with `{"error": one line}`; the walk is left as it was.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import urlsplit

from kmc.errors import BadInput
from kmc.explore.page import page
from kmc.explore.walk import Walk

HOST = "127.0.0.1"
MAX_BODY = 32 * 1024 * 1024  # bytes: a trace file sent by the page


class Explorer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, walk: Walk, port: int, save: Callable[[], str] | None = None):
        super().__init__((HOST, port), _Handler)
        self.walk = walk
        self.save = save
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"


def _int(body: dict[str, Any], key: str) -> int:
    value = body.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadInput(f"{key!r} must be an integer (got {json.dumps(value)})")
    return value


def _str(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise BadInput(f"{key!r} must be a string")
    return value


_MOVES: dict[str, Callable[[Walk, dict[str, Any]], None]] = {
    "/api/init": lambda w, b: w.choose_initial(_int(b, "index")),
    "/api/choose": lambda w, b: w.choose(_int(b, "instance")),
    "/api/goto": lambda w, b: w.goto(_int(b, "index")),
    "/api/back": lambda w, b: w.back(),
    "/api/forward": lambda w, b: w.forward(),
    "/api/jump": lambda w, b: w.jump(_int(b, "match")),
    "/api/load": lambda w, b: w.load_text(_str(b, "text"), _str(b, "name")),
}


class _Handler(BaseHTTPRequestHandler):
    server: Explorer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the URL and how to stop, not every request."""

    def do_GET(self) -> None:
        if not self._addressed_here():
            return
        path = urlsplit(self.path).path
        if path == "/":
            self._send(200, page().encode(), "text/html; charset=utf-8")
        elif path == "/api/view":
            with self.server.lock:
                self._json(200, self.server.walk.view())
        elif path == "/api/walk.itf.json":
            with self.server.lock:
                try:
                    text = self.server.walk.itf()
                except BadInput as e:
                    return self._json(400, {"error": str(e)})
                name = f"{self.server.walk.model.name}-walk.itf.json"
            self._send(200, text.encode(), "application/json",
                       {"Content-Disposition": f'attachment; filename="{name}"'})
        else:
            self._json(404, {"error": f"no page {path}"})

    def do_POST(self) -> None:
        if not self._addressed_here():
            return
        path = urlsplit(self.path).path
        try:
            body = self._body()
            with self.server.lock:
                walk = self.server.walk
                if path == "/api/search":
                    return self._json(200, walk.search(_str(body, "query")))
                if path == "/api/save":
                    if self.server.save is None:
                        raise BadInput("no file to save to: start kmc explore with --save PATH (or download the walk)")
                    return self._json(200, {"saved": self.server.save()})
                move = _MOVES.get(path)
                if move is None:
                    return self._json(404, {"error": f"no endpoint {path}"})
                move(walk, body)
                self._json(200, walk.view())
        except BadInput as e:
            self._json(400, {"error": " ".join(str(e).split())})
        except Exception as e:  # a bug in kmc or in the model's code: said on the page, the server goes on
            self._json(500, {"error": f"internal error (please report it): {type(e).__name__}: {e}"})

    def _addressed_here(self) -> bool:
        """Only requests to this server's own host and port, and POSTs from its own page."""
        own = {f"{HOST}:{self.server.port}", f"localhost:{self.server.port}"}
        origin = self.headers.get("Origin")
        if self.headers.get("Host") not in own or (origin is not None and urlsplit(origin).netloc not in own):
            self._json(403, {"error": "kmc explore answers only its own page on " + self.server.url})
            return False
        return True

    def _body(self) -> dict[str, Any]:
        if self.headers.get_content_type() != "application/json":
            raise BadInput("send JSON (Content-Type: application/json)")
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise BadInput("a Content-Length that is not a number")
        if not 0 <= length <= MAX_BODY:
            raise BadInput(f"a request of {length} bytes; at most {MAX_BODY}")
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, UnicodeDecodeError) as e:
            raise BadInput(f"the request is not JSON: {e}")
        if not isinstance(body, dict):
            raise BadInput("the request must be a JSON object")
        return body

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _send(self, status: int, data: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
