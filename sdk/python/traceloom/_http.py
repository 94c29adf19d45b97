"""HTTP to the service with urllib: one deadline per call (timeout_seconds covers every attempt and
the waits between them), retries on network errors, timeouts, 429 and 5xx with exponential
backoff and full jitter, errors typed."""
from __future__ import annotations

import json
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ._config import Options
from .errors import TraceloomApiError, TraceloomError, TraceloomUnavailableError

Query = Mapping[str, Union[str, List[str], None]]


def _detail(body: Any, fallback: str) -> str:
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return body["detail"]
    return fallback


class Http:
    def __init__(self, options: Options) -> None:
        self.o = options
        self._project_id: Optional[str] = options.project_id
        self._project_lock = threading.Lock()

    def project(self, method: str, path: str, query: Optional[Query] = None, body: Any = None) -> Any:
        """A project-scoped call: ``path`` is relative to /api/projects/{project_id}."""
        deadline = self.o.now() + self.o.timeout_seconds
        project_id = self._resolve_project(deadline)
        return self.call(method, f"/api/projects/{urllib.parse.quote(project_id, safe='')}{path}", query, body, deadline)

    def _resolve_project(self, deadline: float) -> str:
        if self._project_id:
            return self._project_id
        with self._project_lock:
            if not self._project_id:
                me = self.call("GET", "/api/me/context", None, None, deadline)
                if not isinstance(me, dict) or not me.get("project_id"):
                    raise TraceloomError("project_id: the API key names no project; pass project_id")
                self._project_id = me["project_id"]
        return self._project_id  # type: ignore[return-value]

    def call(self, method: str, path: str, query: Optional[Query] = None, body: Any = None, deadline: Optional[float] = None) -> Any:
        if deadline is None:
            deadline = self.o.now() + self.o.timeout_seconds
        pairs: List[Tuple[str, str]] = []
        for k, v in (query or {}).items():
            for item in [] if v is None else (v if isinstance(v, list) else [v]):
                pairs.append((k, item))
        url = self.o.base_url + path + (("?" + urllib.parse.urlencode(pairs)) if pairs else "")
        last = "no attempt made"
        attempt = 0
        while True:
            left = deadline - self.o.now()
            if left <= 0:
                raise TraceloomUnavailableError(f"{method} {path} timed out after {self.o.timeout_seconds:g} s ({last})", attempt)
            ok, result, retry_after = self._attempt(method, url, body, left)
            if ok:
                return result
            last = result
            if attempt >= self.o.retries:
                raise TraceloomUnavailableError(f"{method} {path} failed after {attempt + 1} attempt(s): {result}", attempt + 1)
            ceiling = min(self.o.max_backoff_seconds, self.o.backoff_seconds * 2**attempt)
            wait = min(retry_after, self.o.max_backoff_seconds) if retry_after is not None else random.uniform(0, ceiling)
            if self.o.now() + wait >= deadline:
                raise TraceloomUnavailableError(
                    f"{method} {path} failed after {attempt + 1} attempt(s) within {self.o.timeout_seconds:g} s: {result}", attempt + 1
                )
            time.sleep(wait)
            attempt += 1

    def _attempt(self, method: str, url: str, body: Any, timeout: float) -> Tuple[bool, Any, Optional[float]]:
        headers: Dict[str, str] = {"Accept": "application/json"}
        if self.o.api_key:
            headers["X-API-Key"] = self.o.api_key
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                text = res.read().decode()
                return True, (json.loads(text) if text else None), None
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            try:
                parsed: Any = json.loads(text) if text else None
            except ValueError:
                parsed = text
            if e.code == 429 or e.code >= 500:
                retry_after: Optional[float] = None
                header = e.headers.get("Retry-After") if e.headers else None
                if header is not None:
                    try:
                        retry_after = max(0.0, float(header))
                    except ValueError:
                        retry_after = None
                return False, f"HTTP {e.code}: {_detail(parsed, e.reason or '')}", retry_after
            raise TraceloomApiError(e.code, _detail(parsed, e.reason or "no detail"), f"{method} {urllib.parse.urlsplit(url).path}") from None
        except (socket.timeout, TimeoutError):
            return False, "no answer by the deadline", None
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                return False, "no answer by the deadline", None
            return False, f"unreachable ({reason})", None
        except (ConnectionError, OSError) as e:
            return False, f"unreachable ({e})", None
