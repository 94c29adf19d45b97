"""What the tests share: the service under test (TRACELOOM_BASE_URL / TRACELOOM_API_KEY, started by
test/sdk/python.test.ts), its REST API, and loopback servers that stand between the SDK and it:
a forwarding proxy that counts requests and can be stopped (the service, as the SDK sees it, goes
away), and a server answering every request with one status (or never)."""
from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, List, Optional, Tuple

BASE_URL = os.environ.get("TRACELOOM_BASE_URL", "")
API_KEY = os.environ.get("TRACELOOM_API_KEY", "")
FIXTURES = json.loads((Path(__file__).resolve().parents[3] / "test" / "fixtures" / "prompt-compile.json").read_text("utf8"))


def api(method: str, path: str, body: Any = None) -> Tuple[int, Any]:
    """A call to the project's API with the test's key: (status, parsed body)."""
    headers = {"X-API-Key": API_KEY, "Accept": "application/json"}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    req = urllib.request.Request(f"{BASE_URL}/api/projects/{project_id()}{path}", data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            text = res.read().decode()
            return res.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        return e.code, json.loads(text) if text else None


_project: List[str] = []


def project_id() -> str:
    if not _project:
        req = urllib.request.Request(f"{BASE_URL}/api/me/context", headers={"X-API-Key": API_KEY})
        with urllib.request.urlopen(req, timeout=30) as res:
            _project.append(json.loads(res.read())["project_id"])
    return _project[0]


class _Server:
    def __init__(self, handler: type) -> None:
        self.requests: List[str] = []
        handler.owner = self  # type: ignore[attr-defined]
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Proxy(_Server):
    """Forwards every request to the service and records its path; hold() keeps requests waiting
    until release(); stop() makes the service unreachable."""

    def __init__(self) -> None:
        gate = threading.Event()
        gate.set()
        self.hold, self.release = gate.clear, gate.set

        class Forward(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                self.owner.requests.append(self.path)  # type: ignore[attr-defined]
                gate.wait(30)
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("x-api-key", "content-type", "accept")}
                req = urllib.request.Request(BASE_URL + self.path, data=data, headers=headers, method=self.command)
                try:
                    with urllib.request.urlopen(req, timeout=30) as res:
                        status, body, ctype = res.status, res.read(), res.headers.get("Content-Type", "")
                except urllib.error.HTTPError as e:
                    status, body, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = _forward

        super().__init__(Forward)

    def stop(self) -> None:
        self.release()
        super().stop()


class Answering(_Server):
    """Answers every request with `status` and a JSON detail, or never (status None)."""

    def __init__(self, status: Optional[int]) -> None:
        release = threading.Event()
        self._release = release

        class Fixed(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.owner.requests.append(self.path)  # type: ignore[attr-defined]
                if status is None:
                    release.wait(30)
                    return
                body = b'{"detail":"down for maintenance"}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Fixed)

    def stop(self) -> None:
        self._release.set()
        super().stop()


class Clock:
    """A clock the test moves, to expire caches without waiting."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds
