import pytest

from hopgraph.config import LLMSettings, Settings
from hopgraph.errors import UsageError


def test_arguments_win_over_environment_over_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("URI", "GRAPH", "TOKEN", "EMBEDDER", "MEMORY_LIMIT"):
        monkeypatch.delenv(f"HOPGRAPH_{name}", raising=False)
    assert Settings.load() == Settings()
    monkeypatch.setenv("HOPGRAPH_URI", "/tmp/x.db")
    monkeypatch.setenv("HOPGRAPH_GRAPH", "envgraph")
    monkeypatch.setenv("HOPGRAPH_MEMORY_LIMIT", "7")
    monkeypatch.setenv("HOPGRAPH_TOKEN", "")  # empty counts as unset
    settings = Settings.load(graph="arg", uri=None)
    assert (settings.uri, settings.graph, settings.memory_limit, settings.token) == (
        "/tmp/x.db", "arg", 7, None)


def test_bad_numbers_name_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPGRAPH_MEMORY_LIMIT", "lots")
    with pytest.raises(UsageError, match="HOPGRAPH_MEMORY_LIMIT"):
        Settings.load()
    monkeypatch.setenv("HOPGRAPH_LLM_TIMEOUT", "soon")
    with pytest.raises(UsageError, match="HOPGRAPH_LLM_TIMEOUT"):
        LLMSettings.from_env()


def test_an_empty_llm_cache_variable_turns_the_cache_off(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setenv("HOPGRAPH_LLM_CACHE", "")
    assert LLMSettings.from_env().cache_path is None
    monkeypatch.setenv("HOPGRAPH_LLM_MODEL", "")
    assert not LLMSettings.from_env().configured


def test_embedding_request_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (Settings().embed_timeout, Settings().embed_batch, Settings().embed_retries) == (
        60.0, 256, 3)
    monkeypatch.setenv("HOPGRAPH_EMBED_TIMEOUT", "90")
    monkeypatch.setenv("HOPGRAPH_EMBED_BATCH", "32")
    settings = Settings.load(embed_batch=8)
    assert (settings.embed_timeout, settings.embed_batch, settings.embed_retries) == (90.0, 8, 3)
    for name, value, message in (("TIMEOUT", "soon", "must be a number of seconds"),
                                 ("TIMEOUT", "inf", "must be finite and above 0"),
                                 ("BATCH", "2.5", "must be a whole number of texts"),
                                 ("RETRIES", "-1", r"\(--embed-retries\) must be 0 or more")):
        monkeypatch.setenv(f"HOPGRAPH_EMBED_{name}", value)
        with pytest.raises(UsageError, match=f"HOPGRAPH_EMBED_{name}.*{message}"):
            Settings.load()
        monkeypatch.delenv(f"HOPGRAPH_EMBED_{name}")


def test_graph_tuning_comes_from_the_environment_once_and_is_checked(monkeypatch) -> None:
    for name in ("HOPGRAPH_FANOUT", "HOPGRAPH_ANN_MIN_ROWS", "HOPGRAPH_LEASE_SECONDS",
                 "HOPGRAPH_LEASE_WAIT", "HOPGRAPH_NAMES"):
        monkeypatch.delenv(name, raising=False)
    default = Settings.load()
    assert (default.fanout, default.ann_min_rows, default.lease_seconds, default.lease_wait,
            default.names) == (2_000, 200_000, 30.0, 600.0, "rules")
    monkeypatch.setenv("HOPGRAPH_FANOUT", "50")
    monkeypatch.setenv("HOPGRAPH_ANN_MIN_ROWS", "-3")  # below 0 is off, as 0
    monkeypatch.setenv("HOPGRAPH_LEASE_SECONDS", "3")
    tuned = Settings.load(lease_wait=5)
    assert (tuned.fanout, tuned.ann_min_rows, tuned.lease_seconds, tuned.lease_wait) == (
        50, 0, 3.0, 5.0)
    for name, value, message in (
            ("HOPGRAPH_FANOUT", "many", "HOPGRAPH_FANOUT='many' is not a whole number"),
            ("HOPGRAPH_LEASE_SECONDS", "0.5", "HOPGRAPH_LEASE_SECONDS must be at least 1"),
            ("HOPGRAPH_LEASE_WAIT", "soon", "HOPGRAPH_LEASE_WAIT must be a number of seconds")):
        with monkeypatch.context() as env:
            env.setenv(name, value)
            with pytest.raises(UsageError, match=message):
                Settings.load()
