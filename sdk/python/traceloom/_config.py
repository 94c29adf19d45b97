"""Client options, from the constructor or the environment (TRACELOOM_BASE_URL, TRACELOOM_API_KEY,
TRACELOOM_PROJECT_ID), with their defaults."""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from .errors import TraceloomError


def _non_negative(name: str, value: float) -> float:
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise TraceloomError(f"{name}: must be a finite number >= 0, got {value!r}")
    return float(value)


@dataclass
class Options:
    base_url: str
    api_key: Optional[str] = None
    project_id: Optional[str] = None
    #: The whole call's deadline in seconds, every attempt and the waits between them included.
    timeout_seconds: float = 2.0
    #: Attempts after the first on a network error, timeout, 429 or 5xx.
    retries: int = 2
    #: First retry delay before jitter, doubled each retry up to max_backoff_seconds.
    backoff_seconds: float = 0.1
    max_backoff_seconds: float = 2.0
    cache_ttl_seconds: float = 60.0
    budget_cache_ttl_seconds: float = 5.0
    #: The clock in seconds (tests move it to expire caches).
    now: Callable[[], float] = field(default=time.monotonic)
    #: Called with errors of background work (cache refreshes), which never reach the caller.
    on_background_error: Callable[[BaseException], None] = field(default=lambda e: None)


def resolve_options(
    base_url: Optional[str] = None,
    api_key: Optional[str] = None,
    project_id: Optional[str] = None,
    timeout_seconds: float = 2.0,
    retries: int = 2,
    backoff_seconds: float = 0.1,
    max_backoff_seconds: float = 2.0,
    cache_ttl_seconds: float = 60.0,
    budget_cache_ttl_seconds: float = 5.0,
    now: Optional[Callable[[], float]] = None,
    on_background_error: Optional[Callable[[BaseException], None]] = None,
) -> Options:
    url = base_url or os.environ.get("TRACELOOM_BASE_URL") or ""
    if not url:
        raise TraceloomError("base_url: pass it to Traceloom() or set TRACELOOM_BASE_URL")
    return Options(
        base_url=url.rstrip("/"),
        api_key=api_key or os.environ.get("TRACELOOM_API_KEY") or None,
        project_id=project_id or os.environ.get("TRACELOOM_PROJECT_ID") or None,
        timeout_seconds=_non_negative("timeout_seconds", timeout_seconds),
        retries=int(_non_negative("retries", retries)),
        backoff_seconds=_non_negative("backoff_seconds", backoff_seconds),
        max_backoff_seconds=_non_negative("max_backoff_seconds", max_backoff_seconds),
        cache_ttl_seconds=_non_negative("cache_ttl_seconds", cache_ttl_seconds),
        budget_cache_ttl_seconds=_non_negative("budget_cache_ttl_seconds", budget_cache_ttl_seconds),
        now=now or time.monotonic,
        on_background_error=on_background_error or (lambda e: None),
    )
