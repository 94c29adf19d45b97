"""Datasets and experiments (docs/datasets.md): ``get(name)`` reads a dataset with all its items;
``run_experiment()`` creates a run and runs a task on every item in a thread pool of
``concurrency`` threads, each item inside a span when OpenTelemetry is importable (the task's own
spans are its children; the span of an item that succeeded carries traceloom.dataset.run_id /
.item_id — not one that failed, whose link from spans, always "done", would replace the failure),
and links each item to the execution it produced by API, with the item version it ran, in
batches. A task that raises is a failed item; the run goes on."""
from __future__ import annotations

import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._http import Http
from .errors import TraceloomApiError, TraceloomError
from .prompt import Prompt

DATASET_RUN_ID_ATTRIBUTE = "traceloom.dataset.run_id"
DATASET_ITEM_ID_ATTRIBUTE = "traceloom.dataset.item_id"
_ITEM_SPAN = "traceloom.dataset.item"

try:  # pragma: no cover - depends on the environment
    from opentelemetry import trace as _otel_trace
    from opentelemetry.trace import Status as _Status
    from opentelemetry.trace import StatusCode as _StatusCode
except ImportError:  # no OpenTelemetry: items run without a span unless a tracer is given
    _otel_trace = None  # type: ignore[assignment]
    _Status = _StatusCode = None  # type: ignore[assignment,misc]


@dataclass
class Dataset:
    """A dataset with every live item (dicts as the API answers them), in the order they were added."""

    id: str
    name: str
    description: Optional[str]
    metadata: Dict[str, Any]
    items: List[Dict[str, Any]]


@dataclass
class ExperimentContext:
    run: Dict[str, Any]
    #: The item's position in the dataset (0-based).
    index: int
    #: The trace the item is linked to: the item span's when there is a tracer. Set it to the trace
    #: your task produced otherwise (e.g. the trace id your own instrumentation logged).
    trace_id: Optional[str]
    #: traceloom.dataset.run_id / .item_id: put them on a span of the item's trace to link it from there.
    span_attributes: Dict[str, str]


@dataclass
class ExperimentItemResult:
    item_id: str
    item_version: int
    index: int
    status: str  # "done" or "failed"
    output: Any = None
    #: What the task raised (a failed item).
    error: Optional[Exception] = None
    trace_id: Optional[str] = None
    #: Why the item could not be linked to the run (None when it was).
    link_error: Optional[str] = None


@dataclass
class ExperimentSummary:
    run: Dict[str, Any]
    run_id: str
    total: int
    done: int
    failed: int
    #: Items whose link could not be stored (see each item's link_error).
    unlinked: int
    #: In dataset order.
    items: List[ExperimentItemResult] = field(default_factory=list)


PromptRef = Union[Prompt, Tuple[str, int], Mapping[str, Any]]
Task = Callable[[Dict[str, Any], ExperimentContext], Any]


def _error_text(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 4000 else text[:3999] + "…"


def _positive_int(name: str, value: int, most: Optional[int] = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1 or (most is not None and value > most):
        bound = f"from 1 to {most}" if most is not None else ">= 1"
        raise TraceloomError(f"{name}: must be an integer {bound}, got {value!r}")
    return value


def _prompt_body(p: PromptRef, i: int) -> Dict[str, Any]:
    if isinstance(p, Prompt):
        if p.version is None:
            raise TraceloomError(f"prompts[{i}]: a fallback prompt is no stored version; a run cannot name it")
        return {"prompt_id": p.name, "version": p.version}
    if isinstance(p, tuple):
        return {"prompt_id": p[0], "version": p[1]}
    return {"prompt_id": p["prompt_id"], "version": p["version"]}


class DatasetClient:
    def __init__(self, http: Http) -> None:
        self._http = http

    def get(self, name: str) -> Dataset:
        """The dataset of that name with all its live items (read page by page); TraceloomApiError 404 when none."""
        found = self._find(name)
        items: List[Dict[str, Any]] = []
        cursor: Optional[str] = None
        while True:
            page = self._http.project(
                "GET", f"/datasets/{urllib.parse.quote(found['dataset_id'])}/items", {"limit": "1000", "cursor": cursor}
            )
            items.extend(page["items"])
            cursor = page.get("next_cursor")
            if not cursor:
                break
        return Dataset(found["dataset_id"], found["name"], found.get("description"), found.get("metadata") or {}, items)

    def _find(self, name: str) -> Dict[str, Any]:
        cursor: Optional[str] = None
        while True:
            page = self._http.project("GET", "/datasets", {"limit": "1000", "cursor": cursor})
            for d in page["items"]:
                if d["name"] == name:
                    return d
            cursor = page.get("next_cursor")
            if not cursor:
                raise TraceloomApiError(404, f'no dataset named "{name}" in this project', "GET /datasets")

    def run_experiment(
        self,
        dataset: Union[str, Dataset],
        run_name: str,
        task: Task,
        *,
        description: Optional[str] = None,
        prompts: Optional[Sequence[PromptRef]] = None,
        model: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        concurrency: int = 4,
        link_batch_size: int = 50,
        tracer: Any = None,
    ) -> ExperimentSummary:
        """Creates the run and calls ``task(item, ctx)`` on every item, ``concurrency`` at a time; returns when
        every item has run and every link was sent. Only creating the run (or reading the dataset) raises.
        ``tracer``: an OpenTelemetry Tracer (default: ``trace.get_tracer("traceloom")`` when importable)."""
        _positive_int("concurrency", concurrency)
        _positive_int("link_batch_size", link_batch_size, 1000)
        ds = self.get(dataset) if isinstance(dataset, str) else dataset
        if tracer is None and _otel_trace is not None:  # pragma: no cover - OpenTelemetry not installed on CI
            tracer = _otel_trace.get_tracer("traceloom")
        runs = f"/datasets/{urllib.parse.quote(ds.id)}/runs"
        body = {
            "name": run_name,
            "description": description,
            "prompts": [_prompt_body(p, i) for i, p in enumerate(prompts)] if prompts is not None else None,
            "model": model,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        run = self._http.project("POST", runs, body={k: v for k, v in body.items() if v is not None})
        links_path = f"{runs}/{urllib.parse.quote(run['run_id'])}/items"
        links = _LinkQueue(link_batch_size, lambda batch: self._http.project("POST", links_path, body=batch))

        def one(index: int) -> ExperimentItemResult:
            item = ds.items[index]
            r = _run_item(item, index, run, task, tracer)
            if r.status == "done" and r.trace_id is None:
                r.link_error = "no trace id: use OpenTelemetry (a tracer), or set ctx.trace_id to the trace the task produced"
                return r
            link: Dict[str, Any] = {"item_id": r.item_id, "item_version": r.item_version}
            if r.trace_id:
                link["trace_id"] = r.trace_id
            if r.status == "failed":
                link.update(status="failed", error=_error_text(r.error))  # type: ignore[arg-type]
            links.add(link, r)
            return r

        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="traceloom-experiment") as pool:
            results = list(pool.map(one, range(len(ds.items))))
        links.flush()
        return ExperimentSummary(
            run=run,
            run_id=run["run_id"],
            total=len(results),
            done=sum(1 for r in results if r.status == "done"),
            failed=sum(1 for r in results if r.status == "failed"),
            unlinked=sum(1 for r in results if r.link_error is not None),
            items=results,
        )


def _run_item(item: Dict[str, Any], index: int, run: Dict[str, Any], task: Task, tracer: Any) -> ExperimentItemResult:
    attributes = {DATASET_RUN_ID_ATTRIBUTE: run["run_id"], DATASET_ITEM_ID_ATTRIBUTE: item["item_id"]}
    ctx = ExperimentContext(run=run, index=index, trace_id=None, span_attributes=attributes)
    r = ExperimentItemResult(item_id=item["item_id"], item_version=item["version"], index=index, status="done")

    def attempt(span: Any) -> None:
        if span is not None:
            sc = span.get_span_context()
            if sc.is_valid:
                ctx.trace_id = f"{sc.trace_id:032x}"
        try:
            r.output = task(item, ctx)
            if span is not None:
                span.set_attributes(attributes)
        except Exception as e:  # the item failed; the run goes on
            r.status, r.error = "failed", e
            if span is not None:
                span.record_exception(e)
                if _Status is not None:  # pragma: no cover - OpenTelemetry not installed on CI
                    span.set_status(_Status(_StatusCode.ERROR, _error_text(e)))
        r.trace_id = ctx.trace_id

    if tracer is None:
        attempt(None)
    else:
        with tracer.start_as_current_span(_ITEM_SPAN, record_exception=False, set_status_on_exception=False) as span:
            attempt(span)
    return r


class _LinkQueue:
    """Links waiting to be sent, in batches: one request at a time, a full batch sent by the thread
    that filled it, the rest by flush(). A batch refused as a whole (422: all or none) is sent again
    link by link, so one bad link costs only itself; a link that still fails says why on its item."""

    def __init__(self, batch_size: int, send: Callable[[List[Dict[str, Any]]], Any]) -> None:
        self._batch_size = batch_size
        self._send = send
        self._waiting: List[Tuple[Dict[str, Any], ExperimentItemResult]] = []
        self._lock = threading.Lock()
        self._sending = threading.Lock()

    def add(self, link: Dict[str, Any], result: ExperimentItemResult) -> None:
        with self._lock:
            self._waiting.append((link, result))
            full = len(self._waiting) >= self._batch_size
        if full:
            self.flush()

    def flush(self) -> None:
        with self._sending:
            with self._lock:
                batch, self._waiting = self._waiting, []
            if batch:
                self._send_batch(batch)

    def _send_batch(self, batch: List[Tuple[Dict[str, Any], ExperimentItemResult]]) -> None:
        try:
            self._send([link for link, _ in batch])
        except TraceloomApiError as e:
            if len(batch) > 1 and e.status == 422:
                for one in batch:
                    self._send_batch([one])
                return
            for _, r in batch:
                r.link_error = str(e)
        except TraceloomError as e:
            for _, r in batch:
                r.link_error = str(e)
