"""Run one page of the viewer under Streamlit's AppTest and read what it shows."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def run(monkeypatch, workspace, page: str, **params) -> AppTest:
    monkeypatch.setenv("AMG_VIEW_WORKSPACE", str(workspace))
    at = AppTest.from_string(
        f"from agentmemgate.view.app import main\nmain({page!r})", default_timeout=60
    )
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> list[str]:
    """Every string the page shows: text, Markdown sources, alerts, headings, table cells."""
    out: list[str] = []
    for kind in (
        "title",
        "header",
        "subheader",
        "markdown",
        "caption",
        "text",
        "info",
        "warning",
        "error",
        "success",
        "code",
    ):
        out += [str(e.value) for e in getattr(at, kind)]
    for df in at.dataframe:
        out.append(df.value.to_csv())
    return out


def shown(at: AppTest) -> str:
    return "\n".join(texts(at))
