"""Experiments over a dataset: a run links every item exactly once to the execution its task
produced, never runs more items at once than the bound, reports a raising task as a failed item
while the others complete, and the run's answer shows the items done and failed."""
from __future__ import annotations

import contextlib
import json
import os
import threading
import unittest
from typing import Any, Dict, List

from traceloom import DATASET_ITEM_ID_ATTRIBUTE, DATASET_RUN_ID_ATTRIBUTE, Dataset, Traceloom, TraceloomApiError, TraceloomError

from .support import api
from .test_link_budget_scores import send_span, until


def make_dataset(name: str, inputs: List[Any]) -> str:
    status, d = api("POST", "/datasets", {"name": name})
    assert status == 201, d
    status, body = api("POST", f"/datasets/{d['dataset_id']}/items", [{"input": i} for i in inputs])
    assert status == 201, body
    return d["dataset_id"]


def run_answer(dataset_id: str, run_id: str) -> Dict[str, Any]:
    status, body = api("GET", f"/datasets/{dataset_id}/runs/{run_id}?limit=1000")
    assert status == 200, body
    return body


class Gauge:
    """Counts the tasks running at once."""

    def __init__(self) -> None:
        self.active = self.max = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def running(self):
        with self._lock:
            self.active += 1
            self.max = max(self.max, self.active)
        try:
            yield
        finally:
            with self._lock:
                self.active -= 1


def chat_span(question: str, answer: str) -> str:
    """What the agent under test does for one item: one GenAI call, exported over OTLP; its trace id."""
    trace_id = os.urandom(16).hex()
    send_span(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 2,
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]),
        },
        trace_id,
    )
    return trace_id


class ExperimentTests(unittest.TestCase):
    def test_every_item_linked_once_to_its_execution_within_the_bound_and_a_raising_task_is_a_failed_item(self) -> None:
        questions = [f"question {i}" for i in range(12)]
        dataset_id = make_dataset("py-qa", questions)
        c = Traceloom()
        ds = c.datasets.get("py-qa")
        self.assertEqual((ds.id, ds.name, ds.description), (dataset_id, "py-qa", None))
        self.assertEqual([i["input"] for i in ds.items], questions)

        gauge = Gauge()
        # The first three items meet here: they can only if three run at once (else they fail).
        first = threading.Barrier(3, timeout=20)

        def task(item: Dict[str, Any], ctx) -> str:
            with gauge.running():
                if ctx.index < 3:
                    first.wait()
                if ctx.index == 4:
                    raise ValueError("model refused")
                answer = f"answer to {item['input']}"
                ctx.trace_id = chat_span(item["input"], answer)
                return answer

        summary = c.datasets.run_experiment(
            ds, "gpt-4o baseline", task, model="gpt-4o", metadata={"by": "py-sdk"}, concurrency=3, link_batch_size=5
        )
        self.assertEqual(gauge.max, 3)
        self.assertEqual(
            (summary.total, summary.done, summary.failed, summary.unlinked, summary.run["name"], summary.run["model"]),
            (12, 11, 1, 0, "gpt-4o baseline", "gpt-4o"),
        )
        self.assertEqual([r.item_id for r in summary.items], [i["item_id"] for i in ds.items])
        failed = summary.items[4]
        self.assertEqual((failed.status, failed.trace_id, failed.link_error), ("failed", None, None))
        self.assertIsInstance(failed.error, ValueError)
        self.assertEqual((summary.items[0].status, summary.items[0].output, summary.items[0].item_version), ("done", "answer to question 0", 1))

        def assembled():
            r = run_answer(dataset_id, summary.run_id)
            return r if r["totals"]["items"]["awaiting_execution"] == 0 else None

        answer = until(assembled, "every execution of the run assembled")
        self.assertEqual({k: answer["totals"]["items"][k] for k in ("linked", "done", "failed")}, {"linked": 12, "done": 11, "failed": 1})
        self.assertEqual([i["item_id"] for i in answer["items"]], [i["item_id"] for i in ds.items])
        for i, link in enumerate(answer["items"]):
            self.assertEqual(link["trace_id"], summary.items[i].trace_id)
            if i == 4:
                self.assertEqual((link["status"], link["error"], link["execution"]), ("failed", "ValueError: model refused", None))
            else:
                self.assertEqual((link["status"], link["item_version"], link["linked_by"]), ("done", 1, "api"))
                self.assertEqual(link["execution"]["output"], f"answer to question {i}")

    def test_an_item_without_a_trace_id_or_with_a_refused_link_says_why_and_costs_only_itself(self) -> None:
        dataset_id = make_dataset("py-unlinked", [{"i": i} for i in range(8)])
        c = Traceloom()
        ds = c.datasets.get("py-unlinked")
        stranger = {**ds.items[0], "item_id": "00000000-0000-4000-8000-000000000000"}
        gauge = Gauge()

        def task(item: Dict[str, Any], ctx) -> Any:
            with gauge.running():
                if item["input"]["i"] == 7:
                    return "no trace"
                ctx.trace_id = f"py-task-trace-{ctx.index}"
                return item["input"]["i"] * 2

        with_stranger = Dataset(ds.id, ds.name, None, {}, [*ds.items[:3], stranger, *ds.items[3:]])
        summary = c.datasets.run_experiment(with_stranger, "unlinked", task, concurrency=1)
        self.assertEqual(gauge.max, 1)
        self.assertEqual((summary.total, summary.done, summary.failed, summary.unlinked), (9, 9, 0, 2))
        self.assertIn("is not an item of this dataset", summary.items[3].link_error or "")
        self.assertTrue((summary.items[8].link_error or "").startswith("no trace id"))
        self.assertEqual(summary.items[8].output, "no trace")
        links = run_answer(dataset_id, summary.run_id)["items"]
        self.assertEqual([l["item_id"] for l in links], [i["item_id"] for i in ds.items[:7]])
        self.assertEqual([l["trace_id"] for l in links], [r.trace_id for r in summary.items if r.link_error is None])

    def test_with_a_tracer_each_item_runs_in_its_span_and_only_a_succeeding_one_carries_the_link(self) -> None:
        # A stand-in for an OpenTelemetry tracer (OpenTelemetry for Python is not installed here):
        # the shape run_experiment uses, recording what it is given.
        class Span:
            def __init__(self) -> None:
                self.trace_id = int.from_bytes(os.urandom(16), "big")
                self.attributes: Dict[str, Any] = {}
                self.exceptions: List[BaseException] = []

            def get_span_context(self):
                return type("SpanContext", (), {"trace_id": self.trace_id, "is_valid": True})()

            def set_attributes(self, attributes: Dict[str, Any]) -> None:
                self.attributes.update(attributes)

            def record_exception(self, e: BaseException) -> None:
                self.exceptions.append(e)

        spans: List[Span] = []

        class Tracer:
            @contextlib.contextmanager
            def start_as_current_span(self, name: str, **options: Any):
                assert name == "traceloom.dataset.item" and options == {"record_exception": False, "set_status_on_exception": False}
                span = Span()
                spans.append(span)
                yield span

        dataset_id = make_dataset("py-traced", ["ok", "fail"])
        c = Traceloom()

        def task(item: Dict[str, Any], ctx) -> str:
            if item["input"] == "fail":
                raise RuntimeError("boom")
            return "fine"

        summary = c.datasets.run_experiment("py-traced", "traced", task, tracer=Tracer(), concurrency=1)
        self.assertEqual((summary.done, summary.failed, summary.unlinked), (1, 1, 0))
        self.assertEqual([r.trace_id for r in summary.items], [f"{s.trace_id:032x}" for s in spans])
        self.assertEqual(
            spans[0].attributes, {DATASET_RUN_ID_ATTRIBUTE: summary.run_id, DATASET_ITEM_ID_ATTRIBUTE: summary.items[0].item_id}
        )
        self.assertEqual((spans[1].attributes, [str(e) for e in spans[1].exceptions]), ({}, ["boom"]))
        links = run_answer(dataset_id, summary.run_id)["items"]
        self.assertEqual([(l["status"], l["trace_id"]) for l in links], [(r.status, r.trace_id) for r in summary.items])

    def test_the_run_is_created_first_a_taken_name_or_unknown_dataset_raises_before_any_task(self) -> None:
        make_dataset("py-conflict", [1])
        c = Traceloom()
        ran: List[int] = []
        c.datasets.run_experiment("py-conflict", "taken", lambda item, ctx: ran.append(1))
        with self.assertRaises(TraceloomApiError) as taken:
            c.datasets.run_experiment("py-conflict", "taken", lambda item, ctx: ran.append(1))
        self.assertEqual(taken.exception.status, 409)
        with self.assertRaises(TraceloomApiError) as missing:
            c.datasets.get("py-no-such-dataset")
        self.assertEqual((missing.exception.status, missing.exception.detail), (404, 'no dataset named "py-no-such-dataset" in this project'))
        with self.assertRaisesRegex(TraceloomError, r"^concurrency: must be an integer >= 1, got 0$"):
            c.datasets.run_experiment("py-conflict", "other", lambda item, ctx: None, concurrency=0)
        self.assertEqual(ran, [1])


if __name__ == "__main__":
    unittest.main()
