"""prompts.get: an in-memory cache per (name, reference). Fresh: served with no request. Stale
(past its TTL): served at once while one background thread refreshes that key, never more (no
stampede). Missing: one request per key, shared by every concurrent caller. When the service is
unreachable or answers 5xx: the cached version (however old), else the fallback given, else a
TraceloomPromptUnavailableError saying so. A 4xx is a TraceloomApiError: a fallback does not hide
a mistake."""
from __future__ import annotations

import threading
import urllib.parse
from concurrent.futures import Future
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ._config import Options
from ._http import Http
from .compile import Template
from .errors import TraceloomPromptUnavailableError, TraceloomUnavailableError
from .prompt import Prompt, fallback_prompt

#: After a failed background refresh, the next one waits this long (the stale copy keeps serving).
REFRESH_RETRY_SECONDS = 1.0


class _Entry:
    __slots__ = ("prompt", "expires_at", "refreshing")

    def __init__(self, prompt: Prompt, expires_at: float) -> None:
        self.prompt = prompt
        self.expires_at = expires_at
        self.refreshing = False


class PromptClient:
    def __init__(self, http: Http, options: Options) -> None:
        self._http = http
        self._o = options
        self._lock = threading.Lock()
        self._cache: Dict[Tuple[str, str], _Entry] = {}
        self._loading: Dict[Tuple[str, str], "Future[Prompt]"] = {}
        self._refreshes: List[threading.Thread] = []

    def get(
        self,
        name: str,
        label: Optional[str] = None,
        version: Optional[int] = None,
        cache_ttl_seconds: Optional[float] = None,
        fallback: Optional[Template] = None,
        fallback_config: Optional[Mapping[str, Any]] = None,
    ) -> Prompt:
        ref = str(version) if version is not None else (label or "latest")
        key = (name, ref)
        ttl = self._o.cache_ttl_seconds if cache_ttl_seconds is None else cache_ttl_seconds
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                if self._o.now() >= hit.expires_at and not hit.refreshing:
                    hit.refreshing = True
                    t = threading.Thread(target=self._refresh, args=(key, ttl, hit), daemon=True, name=f"traceloom-refresh-{name}")
                    self._refreshes.append(t)
                    t.start()
                return hit.prompt
            future = self._loading.get(key)
            owner = future is None
            if owner:
                future = Future()
                self._loading[key] = future
        assert future is not None
        if owner:
            try:
                prompt = self._fetch(key)
                with self._lock:
                    self._cache[key] = _Entry(prompt, self._o.now() + ttl)
                future.set_result(prompt)
            except BaseException as e:  # handed to the waiters, then raised here
                future.set_exception(e)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
        try:
            return future.result()
        except TraceloomUnavailableError as e:
            with self._lock:
                late = self._cache.get(key)
            if late is not None:
                return late.prompt
            if fallback is not None:
                return fallback_prompt(name, fallback, fallback_config)
            raise TraceloomPromptUnavailableError(name, ref, e) from e

    def invalidate(self, name: Optional[str] = None) -> None:
        """Drops every cached prompt (or one name's): the next get asks the service."""
        with self._lock:
            for key in [k for k in self._cache if name is None or k[0] == name]:
                del self._cache[key]

    def settled(self, timeout: Optional[float] = None) -> None:
        """Returns when the background refreshes started so far are done (for tests and shutdown)."""
        with self._lock:
            threads, self._refreshes = self._refreshes, []
        for t in threads:
            t.join(timeout)

    def _refresh(self, key: Tuple[str, str], ttl: float, entry: _Entry) -> None:
        try:
            prompt = self._fetch(key)
            with self._lock:
                self._cache[key] = _Entry(prompt, self._o.now() + ttl)
        except BaseException as e:
            with self._lock:
                entry.expires_at = self._o.now() + min(REFRESH_RETRY_SECONDS, ttl)
                entry.refreshing = False
            self._o.on_background_error(e)

    def _fetch(self, key: Tuple[str, str]) -> Prompt:
        name, ref = key
        path = f"/prompts/{urllib.parse.quote(name, safe='')}/versions/{urllib.parse.quote(ref, safe='')}"
        return Prompt(self._http.project("GET", path))
