"""One server is one family, however its base URL is spelled (the cross-family rule)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.errors import SameFamilyJudge
from agentmemgate.llm import ModelRef, get_model
from agentmemgate.llm.servers import normalize_family, server_of
from agentmemgate.validate.judges import check_families, get_judge

SAME = [
    "http://localhost:8000/v1",
    "http://127.0.0.1:8000/v1/",
    "http://[::1]:8000/v1",
    "localhost:8000",
    "http://LOCALHOST:8000",
]


@pytest.mark.parametrize("url", SAME)
def test_loopback_names_and_trailing_slash_are_one_server(url):
    assert server_of(url) == "localhost:8000"
    assert get_model("openai:m", base_url=url).family == "openai-compatible:localhost:8000"


def test_other_servers_stay_other_families():
    assert server_of("http://localhost:8001/v1") != server_of("http://localhost:8000/v1")
    assert server_of("http://gpu-box:8000/v1") == "gpu-box:8000"
    assert server_of("https://api.example.com:443/v1") == server_of("https://api.example.com/v1/")
    # Families logged before normalization compare as the server they name.
    assert (
        normalize_family("openai-compatible:127.0.0.1:8000") == "openai-compatible:localhost:8000"
    )
    assert normalize_family("anthropic") == "anthropic"


@pytest.mark.parametrize("judge_url", SAME)
def test_a_judge_on_the_generators_server_is_refused(judge_url):
    judge = get_judge(ModelRef.parse("openai:judge", judge_url))
    with pytest.raises(SameFamilyJudge, match="openai-compatible:localhost:8000"):
        check_families([judge], {"openai-compatible:127.0.0.1:8000"}, allow_same_family=False)
    assert (
        check_families(
            [get_judge(ModelRef.parse("openai:judge", "http://localhost:9000/v1"))],
            {"openai-compatible:127.0.0.1:8000"},
            False,
        )
        == set()
    )


def test_build_refuses_before_any_work(tmp_path):
    res = CliRunner().invoke(
        app,
        [
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--generator",
            "openai:gen",
            "--base-url",
            "http://127.0.0.1:8000/v1",
            "--judge",
            "openai:judge",
            "--judge-base-url",
            "http://localhost:8000/",
            "--workspace",
            str(tmp_path / "ws"),
        ],
    )
    assert res.exit_code == 1
    assert "same family as the generator (openai-compatible:localhost:8000)" in res.output
    assert not (tmp_path / "ws").exists()
