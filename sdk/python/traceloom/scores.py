"""scores.create: one score or a batch (stored whole or not at all). Each score gets an id here when
it has none, so a retry after a lost answer updates the same score instead of adding one."""
from __future__ import annotations

import uuid
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._http import Http

_FIELDS = {
    "id": "id",
    "trace_id": "trace_id",
    "span_id": "span_id",
    "session_id": "session_id",
    "name": "name",
    "value": "value",
    "data_type": "data_type",
    "comment": "comment",
    "source": "source",
}


def _body(score: Mapping[str, Any]) -> Dict[str, Any]:
    unknown = set(score) - set(_FIELDS)
    if unknown:
        raise ValueError(f"score: unknown field(s) {', '.join(sorted(unknown))}")
    body = {k: v for k, v in score.items() if v is not None}
    body.setdefault("id", str(uuid.uuid4()))
    return body


class ScoreClient:
    def __init__(self, http: Http) -> None:
        self._http = http

    def create(
        self,
        name: Optional[str] = None,
        value: Union[float, bool, str, None] = None,
        *,
        trace_id: Optional[str] = None,
        span_id: Optional[str] = None,
        session_id: Optional[str] = None,
        id: Optional[str] = None,
        data_type: Optional[str] = None,
        comment: Optional[str] = None,
        source: Optional[str] = None,
    ) -> Dict[str, Any]:
        """One score of an execution (trace_id), a span or a session; the stored score."""
        score = {
            "id": id,
            "trace_id": trace_id,
            "span_id": span_id,
            "session_id": session_id,
            "name": name,
            "value": value,
            "data_type": data_type,
            "comment": comment,
            "source": source,
        }
        return self._http.project("POST", "/scores", body=_body(score))

    def create_many(self, scores: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
        """A batch (dicts with the API's field names), stored whole or not at all; the scores in the order sent."""
        return self._http.project("POST", "/scores", body=[_body(s) for s in scores])["items"]
