"""Bad input to `agentlab selfinstruct`: one clear line each, non-zero exit, no traceback."""

from __future__ import annotations

import pytest

from agentlab.cli import main


def _run(argv: list[str], capsys) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err.strip()
    return int(exc.value.code or 0), err


def test_unknown_agent(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, err = _run(["selfinstruct", "--agents", "SheetAgnet", "--out", str(tmp_path)], capsys)
    assert code == 1 and err.splitlines() == [err]
    assert err.startswith("error: unknown agent 'SheetAgnet'; did you mean SheetAgent")
    assert not any(tmp_path.iterdir())


def test_inverted_thresholds(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    th = tmp_path / "th.json"
    th.write_text('{"scorer": "x", "num_layers": 6, "tau1": 0.9, "tau2": 0.8, "leakage_tau": 0.7}')
    code, err = _run(["selfinstruct", "--thresholds", str(th), "--out", str(tmp_path / "o")], capsys)
    assert code == 1 and err == f"error: {th}: tau1=0.9 is greater than tau2=0.8; the band would be empty"


def test_missing_scoring_model(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"agents: [ClockAgent]\nscorer_model: {tmp_path / 'no-such-model'}\nout_dir: {tmp_path / 'o'}\n")
    code, err = _run(["selfinstruct", "--config", str(cfg)], capsys)
    assert code == 1 and len(err.splitlines()) == 1
    assert err.startswith(f"error: BERTScore model not found at {tmp_path / 'no-such-model'}")


def test_bad_generator_spec_and_config_field(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, err = _run(["selfinstruct", "--generator", "openai:nourl", "--out", str(tmp_path)], capsys)
    assert code == 1 and "expected openai:<base_url>:<model>" in err
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("per_agent: 0\n")
    code, err = _run(["selfinstruct", "--config", str(cfg)], capsys)
    assert code == 1 and err.startswith(f"error: {cfg}:1: per_agent:")  # file:line: field


def test_generator_spec_parsing() -> None:
    from agentlab.selfinstruct.config import parse_generator

    g = parse_generator("openai:http://127.0.0.1:8000/v1:my-model")
    assert (g.kind, g.base_url, g.model) == ("openai", "http://127.0.0.1:8000/v1", "my-model")
    assert parse_generator(None).model == parse_generator("embedded").model == "embedded:smollm2-135m-instruct"
    assert parse_generator("/models/foo.gguf").model == "/models/foo.gguf"


def test_a_bad_option_value_is_one_line(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, err = _run(["selfinstruct", "--per-agent", "0", "--out", str(tmp_path)], capsys)
    assert code == 1 and err.splitlines() == [err]
    assert err.startswith("error: options: per_agent: Input should be greater than or equal to 1")
