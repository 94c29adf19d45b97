"""The client: one per process, sharing its caches. Options from the constructor or the environment."""
from __future__ import annotations

from typing import Any

from ._config import resolve_options
from ._http import Http
from .budget import BudgetClient
from .datasets import DatasetClient
from .prompts import PromptClient
from .scores import ScoreClient


class Traceloom:
    """Traceloom(base_url=None, api_key=None, project_id=None, timeout_seconds=2.0, retries=2, ...)."""

    def __init__(self, **options: Any) -> None:
        o = resolve_options(**options)
        http = Http(o)
        self.prompts = PromptClient(http, o)
        self.budget = BudgetClient(http, o)
        self.scores = ScoreClient(http)
        self.datasets = DatasetClient(http)
