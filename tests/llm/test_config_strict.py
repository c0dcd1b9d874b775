"""Model config files are strict (issue #37, case 8): a misspelt ``roles:`` is an error, not every
role silently on ``llm:``; anchors and aliases are refused in every YAML the CLI reads (LLM and roles
files, agent documents' front matter, ``-O`` values); an unset ``api_key_env`` variable is an error
for an endpoint off this machine and a warning on loopback, never a silent placeholder key."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentlab.agents.roles import known_roles
from agentlab.errors import ConfigError
from agentlab.llm import load_backend
from agentlab.llm.config import LLMConfig, is_loopback
from agentlab.llm.roles import load_models_file
from agentlab.tasks.spec import tasks_dir


def _write(tmp_path: Path, text: str, name: str = "models.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _cli(args: list[str]):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    _mount()
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize("typo", ["role", "Roles", "roels"])
def test_a_misspelt_roles_key_is_an_error_naming_it_and_the_known_ones(tmp_path, typo) -> None:
    path = _write(tmp_path, f"llm: {{model: x}}\n{typo}:\n  grounder: {{model: y}}\n")
    with pytest.raises(ConfigError) as info:
        load_models_file(path, known_roles())
    assert str(info.value) == f"{path}:2: {typo}: unknown top-level key (check its spelling); known: llm, roles"
    with pytest.raises(ConfigError, match=f"{typo}: unknown top-level key"):  # the same file as a plain LLM config
        LLMConfig.from_yaml(path)
    # spelt right, the role gets its own model
    good = _write(tmp_path, "llm: {model: x}\nroles:\n  grounder: {model: y}\n", "good.yaml")
    assert load_models_file(good, known_roles()).config("grounder").model == "y"


def test_exec_refuses_the_misspelt_file_before_any_task_runs(tmp_path) -> None:
    path = _write(tmp_path, "llm: {model: x}\nrole:\n  grounder: {model: y}\n")
    res = _cli(["exec", "--tasks", str(tasks_dir() / "csv-sales-summary.json"), "--out", str(tmp_path / "run"),
                "--llm-config", str(path)])
    assert res.exit_code != 0 and isinstance(res.exception, ConfigError)
    assert "role: unknown top-level key" in str(res.exception) and not (tmp_path / "run").exists()


def test_aliases_are_refused_in_models_files_documents_and_runner_options(tmp_path) -> None:
    from agentlab.cli.execute import parse_runner_options
    from agentlab.pool.document import parse_document

    path = _write(tmp_path, "llm: &base {model: x}\nroles:\n  grounder: *base\n")
    with pytest.raises(ConfigError, match=r"models.yaml:1: YAML anchor &base: anchors and aliases are not accepted"):
        load_models_file(path, known_roles())
    doc = tmp_path / "Agent.md"
    doc.write_text("---\nname: &n BombAgent\nplatform: desktop\n---\nbody\n")
    parsed, problems = parse_document(doc.read_text(), doc)
    assert parsed is None and problems == [f"{doc}:2: front matter is not valid YAML (YAML anchor &n: anchors and "
                                           "aliases are not accepted in configuration files; write the value out)"]
    with pytest.raises(ConfigError, match="anchors and aliases are not accepted"):
        parse_runner_options(["experts=[&a x, *a]"])


def test_loopback_is_what_it_says() -> None:
    for url in ("http://127.0.0.1:8000/v1", "http://127.9.9.9/v1", "http://[::1]:8000/v1", "http://localhost:1/v1",
                "http://LOCALHOST./v1", "http://api.localhost/v1"):
        assert is_loopback(url), url
    for url in ("https://api.openai.com/v1", "http://10.0.0.1/v1", "http://127.0.0.1.nip.io/v1", "http://[::2]/v1",
                "http://localhost.example.com/v1", None, ""):
        assert not is_loopback(url), url


def test_an_unset_key_variable_is_an_error_off_this_machine(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MY_PROVIDER_KEY", raising=False)
    path = _write(tmp_path, "llm:\n  kind: openai\n  base_url: https://api.example.com/v1\n  model: m\n"
                            "  api_key_env: MY_PROVIDER_KEY\n", "llm.yaml")
    with pytest.raises(ConfigError) as info:
        load_backend(LLMConfig.from_yaml(path))
    assert str(info.value) == (f"{path}: llm.api_key_env: the environment variable MY_PROVIDER_KEY is not set; the "
                               "endpoint https://api.example.com/v1 needs its API key there (export MY_PROVIDER_KEY=...)")
    roles = _write(tmp_path, "llm: {model: x}\nroles:\n  grounder: {kind: openai, base_url: 'http://10.1.2.3:8000/v1', "
                             "model: g, api_key_env: MY_PROVIDER_KEY}\n")
    with pytest.raises(ConfigError, match=rf"^{roles}: roles.grounder.api_key_env: the environment variable MY_PROVIDER_KEY"):
        load_models_file(roles, known_roles()).load_roles()
    # set, it is sent
    monkeypatch.setenv("MY_PROVIDER_KEY", "sk-test")
    assert load_backend(LLMConfig.from_yaml(path)).client.api_key == "sk-test"


def test_exec_with_an_unset_key_for_a_remote_endpoint_is_one_line(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = _write(tmp_path, "llm: {kind: openai, base_url: 'https://api.example.com/v1', model: m}\n", "llm.yaml")
    res = _cli(["exec", "--tasks", str(tasks_dir() / "csv-sales-summary.json"), "--out", str(tmp_path / "run"),
                "--llm-config", str(path)])
    assert res.exit_code != 0 and isinstance(res.exception, ConfigError)
    assert "the environment variable OPENAI_API_KEY is not set" in str(res.exception)


def test_an_unset_key_variable_on_loopback_is_a_warning(tmp_path, monkeypatch, caplog) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr("agentlab.llm.config._WARNED", set())
    path = _write(tmp_path, "llm: {kind: openai, base_url: 'http://127.0.0.1:8000/v1', model: m}\n", "llm.yaml")
    with caplog.at_level(logging.WARNING, logger="agentlab.llm.config"):
        backend = load_backend(LLMConfig.from_yaml(path))
        load_backend(LLMConfig.from_yaml(path))  # warned once per process, not per backend
    assert backend.client.api_key == "not-needed"
    (record,) = [r for r in caplog.records if "OPENAI_API_KEY" in r.getMessage()]
    assert record.getMessage().startswith(f"{path}: llm.api_key_env: the environment variable OPENAI_API_KEY is not set")
