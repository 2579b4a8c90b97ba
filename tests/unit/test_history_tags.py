"""vsperf.history.tags: --tag KEY=VALUE and the CI variables of GitLab and Jenkins."""

from __future__ import annotations

import pytest

from vsperf.errors import UserError
from vsperf.history.tags import ci_tags, parse_tags, without_credentials


def test_tags_from_options() -> None:
    assert parse_tags(["lab=rack3", "purpose = nightly ", "empty="]) == {"lab": "rack3", "purpose": "nightly",
                                                                         "empty": ""}


@pytest.mark.parametrize("option", ["novalue", "=x", "bad key=1", "k" * 129 + "=1"])
def test_malformed_tags_are_refused(option: str) -> None:
    with pytest.raises(UserError, match="write KEY=VALUE"):
        parse_tags([option])


def test_gitlab_variables() -> None:
    env = {"CI_PIPELINE_ID": "812", "CI_JOB_ID": "4411", "CI_COMMIT_SHA": "a" * 40, "HOME": "/root"}
    assert ci_tags(env) == {"ci.pipeline": "812", "ci.job": "4411", "ci.commit": "a" * 40}


def test_jenkins_variables_lose_credentials_in_urls() -> None:
    env = {"BUILD_NUMBER": "77", "BUILD_URL": "https://bot:t0ken@jenkins.example/job/vsperf/77/", "GIT_COMMIT": "b1"}
    assert ci_tags(env) == {"ci.build": "77", "ci.url": "https://jenkins.example/job/vsperf/77/", "ci.commit": "b1"}
    assert ci_tags({}) == {}
    assert without_credentials("not a url") == "not a url"
