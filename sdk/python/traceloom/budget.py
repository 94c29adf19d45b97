"""budget.check: the pre-flight check before an LLM call, cached briefly per question. When the
service is unavailable the last answer to the same question is returned if there is one;
otherwise the TraceloomUnavailableError is raised and the caller decides whether to proceed."""
from __future__ import annotations

import json
import threading
from typing import Any, Dict, Optional, Sequence, Tuple

from ._config import Options
from ._http import Http
from .errors import TraceloomUnavailableError


class BudgetClient:
    def __init__(self, http: Http, options: Options) -> None:
        self._http = http
        self._o = options
        self._lock = threading.Lock()
        self._cache: Dict[str, Tuple[Dict[str, Any], float]] = {}

    def check(
        self,
        agent_id: Optional[str] = None,
        user_id: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        api_key_id: Optional[str] = None,
    ) -> Dict[str, Any]:
        """The answer of GET .../budget/check (allowed, status, remaining_usd, budgets...)."""
        query = {"agent_id": agent_id, "user_id": user_id, "api_key_id": api_key_id, "tag": sorted(tags) if tags else None}
        key = json.dumps(query, sort_keys=True)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and self._o.now() < hit[1]:
            return hit[0]
        try:
            answer = self._http.project("GET", "/budget/check", query=query)
        except TraceloomUnavailableError:
            if hit is not None:
                return hit[0]
            raise
        with self._lock:
            self._cache[key] = (answer, self._o.now() + self._o.budget_cache_ttl_seconds)
        return answer
