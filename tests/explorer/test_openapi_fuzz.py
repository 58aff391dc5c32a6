"""schemathesis over the generated OpenAPI description, against a live server on loopback.

Every operation, one per experiment among them, is called with parameters built
from the schema (valid ones and, in the negative phase, invalid ones); every
answer must be documented for its operation and match its schema, and no
answer may be a 500. The 5xx answers the server gives by design -- 503 busy,
504 over the time limit, 507 over the memory limit -- are documented and
allowed; schemathesis's own ``not_a_server_error`` check (which refuses every
5xx) is replaced by that rule.
"""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from whylab.explorer.web.openapi import param_schema

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def fuzzed_server(module_live_server):
    # Rate limit off (every case comes from 127.0.0.1); a short queue wait keeps 503s quick.
    return module_live_server(workers=2, rate_burst=0, queue_wait_s=5)


@pytest.fixture(scope="module")
def api_schema(fuzzed_server):
    return schemathesis.openapi.from_url(f"{fuzzed_server.base}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schemathesis.check
def no_undocumented_server_error(ctx, response, case):
    """A 5xx is allowed only when the operation documents it; a 500 never is."""
    status = response.status_code
    if status >= 500:
        documented = case.operation.definition.raw.get("responses", {})
        assert status != 500, f"500 from {case.operation.label}: {response.text[:300]}"
        assert str(status) in documented, f"undocumented {status} from {case.operation.label}"


@schema.parametrize()
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
def test_every_answer_is_documented_and_never_a_500(case):
    case.call_and_validate(
        excluded_checks=[not_a_server_error],
        additional_checks=[no_undocumented_server_error],
        timeout=60,
    )


def test_every_experiment_parameter_is_in_the_description(fuzzed_server, fixture_registry):
    described = httpx.get(f"{fuzzed_server.base}/openapi.json", timeout=30).json()["paths"]
    for topic in fixture_registry:
        for experiment in topic.experiments.values():
            operation = described[f"/api/topics/{topic.slug}/experiments/{experiment.name}"]["get"]
            listed = {p["name"]: p["schema"] for p in operation["parameters"]}
            assert listed == {p.name: param_schema(p) for p in experiment.params}
            assert {"200", "404", "414", "422", "429", "503", "504", "507"} <= set(
                operation["responses"]
            )
            for status, response in operation["responses"].items():
                assert response["content"]["application/json"]["schema"], status
