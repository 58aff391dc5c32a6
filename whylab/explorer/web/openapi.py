"""The JSON API's OpenAPI description, completed from the topics' own declarations.

FastAPI describes the routes it can see: one generic
``/api/topics/{slug}/experiments/{name}`` whose query parameters it cannot know.
:func:`describe_api` adds one operation per experiment, its query parameters
generated from the experiment's declared :class:`~whylab.explorer.experiment.Param`
list (type, bounds, choices, default), and gives every operation the answers
the server really gives -- 403, 404, 409, 414, 422, 429, 500, 503, 504, 507 --
each with the schema of its body and, where the server sends one, its
``Retry-After`` header. A timing experiment's run answers as any other run
does (it is admitted, charged and fails the same way), plus 409 when whoever
queued the measurement cancelled it. Each experiment with negative controls also
gets its control-run operation, the control named in the path from those it declares.
So a client generator or a fuzzer (schemathesis) can build valid runs of every
experiment and check each answer against the schema.
"""

from __future__ import annotations

import copy
from typing import Any

from whylab.explorer.content.topics import TopicRegistry
from whylab.explorer.experiment import Experiment, Param

ERROR_REF = {"$ref": "#/components/schemas/Error"}
RUN_REF = {"$ref": "#/components/schemas/RunRecord"}
TIMING_RUN_REF = {"$ref": "#/components/schemas/TimingRun"}
CONTROL_RUN_REF = {"$ref": "#/components/schemas/ControlRun"}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["detail"],
        "properties": {
            # a sentence from whylab; a list of problems from FastAPI's own validation
            "detail": {"anyOf": [{"type": "string"}, {"type": "array", "items": {}}]},
            "param": {"type": "string", "description": "the parameter that broke its rule"},
            "retry_after_s": {"type": "number", "minimum": 0},
        },
    },
    "Localised": {
        "type": "object",
        "required": ["en", "zh"],
        "properties": {"en": {"type": "string"}, "zh": {"type": "string"}},
    },
    "RunRecord": {
        "type": "object",
        "required": [
            "topic",
            "experiment",
            "params",
            "engine_version",
            "timing",
            "cached",
            "elapsed_s",
            "passed",
            "result",
        ],
        "properties": {
            "topic": {"type": "string"},
            "experiment": {"type": "string"},
            "params": {"type": "object", "description": "every parameter, defaults filled in"},
            "engine_version": {"type": "string"},
            "timing": {
                "type": "boolean",
                "description": "a live measurement, made for this request (never a cached one)",
            },
            "cached": {"type": "boolean"},
            "elapsed_s": {"type": "number", "minimum": 0},
            "passed": {"type": "boolean", "description": "every check held"},
            "result": {
                "type": "object",
                "required": ["checks", "figures", "tables", "metrics", "notes"],
                "properties": {
                    "checks": {"type": "array", "items": {"type": "object"}},
                    "figures": {"type": "array", "items": {"type": "object"}},
                    "tables": {"type": "array", "items": {"type": "object"}},
                    "metrics": {"type": "object"},
                    "notes": {"type": "array", "items": {"type": "object"}},
                },
            },
        },
    },
}

SCHEMAS["TimingRun"] = {
    "type": "object",
    "description": "a queued timing run's state, as the client asking sees it",
    "required": ["id", "topic", "experiment", "params", "state", "position", "elapsed_s",
                 "expected_s", "message", "status", "yours"],
    "properties": {
        "id": {"type": "string"},
        "topic": {"type": "string"},
        "experiment": {"type": "string"},
        "params": {"type": "object", "description": "every parameter, defaults filled in"},
        "state": {"type": "string", "enum": ["queued", "running", "done", "failed", "cancelled"]},
        "position": {"type": "integer", "minimum": 0, "description": "runs ahead of it"},
        "elapsed_s": {"type": "number", "minimum": 0},
        "expected_s": {"anyOf": [{"type": "number", "minimum": 0}, {"type": "null"}]},
        "message": {"type": "string", "description": "why it failed (empty otherwise)"},
        "status": {
            "anyOf": [{"type": "integer"}, {"type": "null"}],
            "description": "the HTTP status its failure maps to, as for an ordinary run",
        },
        "yours": {
            "type": "boolean",
            "description": "the client asking queued this run, so it alone may cancel it "
            "(DELETE answers any other client 403; the page shows the cancel button to it only)",
        },
    },
}  # fmt: skip

SCHEMAS["ControlRun"] = {
    "description": "a run under a negative control: never the experiment's result",
    "allOf": [
        RUN_REF,
        {
            "type": "object",
            "required": ["control", "declared_to_break", "broke", "failed"],
            "properties": {
                "control": {"type": "string", "description": "the control switched on"},
                "declared_to_break": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "ids of the checks the control must make fail",
                },
                "broke": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "those of them that failed in this run",
                },
                "failed": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "ids of every check that failed in this run",
                },
            },
        },
    ],
}

RETRY_AFTER = {
    "Retry-After": {
        "description": "whole seconds to wait before asking again",
        "schema": {"type": "string", "pattern": "^[1-9][0-9]*$"},
    }
}


def _error(description: str, retry: bool = False) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": ERROR_REF}},
    }
    if retry:
        response["headers"] = RETRY_AFTER
    return response


COMMON_ERRORS = {
    "414": _error("the URL is too long"),
    "422": _error("a parameter is unknown, given twice, or out of its bounds"),
}
RUN_ERRORS = {
    "404": _error("no such topic or experiment (an encoded / in the path is never one)"),
    "429": _error("this client has used its share of experiment CPU time", retry=True),
    "503": _error("the run queue is full or no worker is available", retry=True),
    "500": _error("the experiment raised an error (the detail names it)"),
    "504": _error("the experiment ran past its time limit"),
    "507": _error("the experiment ran past its memory limit"),
}
TIMING_QUEUE_ERRORS = {
    "429": RUN_ERRORS["429"],
    "503": _error("the line of timing runs is full", retry=True),
}
TIMING_CANCELLED = _error("the measurement was cancelled by the client who queued it")
NOT_YOURS = _error("only the client who queued a timing run may cancel it")


def param_schema(param: Param) -> dict[str, Any]:
    """The JSON schema of one query parameter, from its declaration."""
    default = param.parse(param.default)
    if param.kind == "bool":
        return {"type": "boolean", "default": default}
    if param.kind == "choice":
        return {"type": "string", "enum": list(param.choices), "default": default}
    schema: dict[str, Any] = {
        "type": "integer" if param.kind == "int" else "number",
        "minimum": param.minimum,
        "maximum": param.maximum,
        "default": default,
    }
    if param.kind == "int":
        schema["minimum"], schema["maximum"] = int(param.minimum), int(param.maximum)
    return schema


def experiment_operation(slug: str, experiment: Experiment) -> dict[str, Any]:
    parameters = [
        {
            "name": p.name,
            "in": "query",
            "required": False,
            "description": p.label.en + (f" ({p.unit})" if p.unit else ""),
            "schema": param_schema(p),
        }
        for p in experiment.params
    ]
    kind = "measured anew for each request" if experiment.timing else "cached once computed"
    return {
        "tags": ["experiments"],
        "summary": f"{slug}: {experiment.title.en}",
        "description": (
            f"{experiment.description.en} Time limit {experiment.time_limit_s:g} s; {kind}."
        ),
        "operationId": f"run_{slug}_{experiment.name}".replace("-", "_"),
        "parameters": parameters,
        "responses": {
            "200": {
                "description": "the run, with its checks",
                "content": {"application/json": {"schema": RUN_REF}},
            },
            **COMMON_ERRORS,
            **RUN_ERRORS,
            **({"409": TIMING_CANCELLED} if experiment.timing else {}),
        },
    }


def control_operation(slug: str, experiment: Experiment) -> dict[str, Any]:
    names = [c.name for c in experiment.controls if experiment.runnable_control(c.name)]
    return {
        "tags": ["experiments"],
        "summary": f"{slug}: {experiment.title.en}, under a negative control",
        "description": (
            "Runs the experiment with the named control switched on, at the parameters the "
            "control declares; takes no query parameters; never cached."
        ),
        "operationId": f"control_{slug}_{experiment.name}".replace("-", "_"),
        "parameters": [
            {"name": "control", "in": "path", "required": True,
             "schema": {"type": "string", "enum": names}}
        ],  # fmt: skip
        "responses": {
            "200": {
                "description": "the control run, with its checks",
                "content": {"application/json": {"schema": CONTROL_RUN_REF}},
            },
            **COMMON_ERRORS,
            **RUN_ERRORS,
            "422": _error("a control run takes no query parameters"),
        },
    }


def describe_api(base: dict[str, Any], registry: TopicRegistry) -> dict[str, Any]:
    """``base`` (FastAPI's own description) with the answers and every experiment added."""
    schema = copy.deepcopy(base)
    schema.setdefault("components", {}).setdefault("schemas", {}).update(SCHEMAS)
    for path, item in schema["paths"].items():
        for operation in item.values():
            responses = operation.setdefault("responses", {})
            for status, response in COMMON_ERRORS.items():
                responses.setdefault(status, response)
            responses["422"] = COMMON_ERRORS["422"]  # also FastAPI's own validation errors
            if "{" in path:
                responses.update({"404": RUN_ERRORS["404"]})
            if path.endswith("/experiments/{name}"):
                responses.update(RUN_ERRORS)
                responses["409"] = TIMING_CANCELLED
                responses["200"]["content"]["application/json"]["schema"] = RUN_REF
            if path.endswith("/controls/{control}"):
                responses.update(RUN_ERRORS)
                responses["200"]["content"]["application/json"]["schema"] = CONTROL_RUN_REF
            if path.endswith("/timing-runs"):
                responses.update(TIMING_QUEUE_ERRORS)
            if "/timing-runs" in path:
                for status in ("200", "202"):
                    if status in responses:
                        responses[status]["content"] = {
                            "application/json": {"schema": TIMING_RUN_REF}
                        }
        if path == "/api/timing-runs/{run_id}" and "delete" in item:
            item["delete"]["responses"]["403"] = NOT_YOURS
    for topic in registry:
        for experiment in topic.experiments.values():
            path = f"/api/topics/{topic.slug}/experiments/{experiment.name}"
            schema["paths"][path] = {"get": experiment_operation(topic.slug, experiment)}
            if any(experiment.runnable_control(c.name) for c in experiment.controls):
                operation = control_operation(topic.slug, experiment)
                schema["paths"][path + "/controls/{control}"] = {"get": operation}
    return schema
