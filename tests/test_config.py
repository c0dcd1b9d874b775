"""The one YAML -> pydantic loader: every bad file is one line, ``file[:line]: field: what``."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from agentlab.config import load_config, parse_yaml
from agentlab.errors import ConfigError


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    epochs: int = 1


class Cfg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "x"
    size: int = 3
    inner: Inner = Inner()


def _write(tmp_path: Path, text: str | bytes, name: str = "c.yaml") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def _err(path: Path, **kw) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as info:
        load_config(Cfg, path, **kw)
    msg = str(info.value)
    assert "\n" not in msg and "pydantic.dev" not in msg
    return msg


def test_good_file_and_wrapper(tmp_path: Path) -> None:
    assert load_config(Cfg, _write(tmp_path, "size: 5\ninner: {epochs: 2}\n")).inner.epochs == 2
    wrapped = _write(tmp_path, "other: 1\nllm:\n  size: 7\n")
    assert load_config(Cfg, wrapped, wrapper="llm", siblings=("other",)).size == 7  # what another reader takes
    assert load_config(Cfg, _write(tmp_path, "", "empty.yaml"), allow_empty=True).size == 3


def test_missing_folder_not_utf8(tmp_path: Path) -> None:
    assert _err(tmp_path / "nope.yaml").endswith("nope.yaml: config file not found")
    assert "is a folder" in _err(tmp_path)
    msg = _err(_write(tmp_path, b"name: ok\nsize: \xff\n"))
    assert "c.yaml:2: not UTF-8" in msg


def test_empty_refused_when_content_is_needed(tmp_path: Path) -> None:
    assert "is empty" in _err(_write(tmp_path, "  \n"))  # named explicitly: a mistake


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    assert "top level must be a mapping" in _err(_write(tmp_path, "- a\n- b\n"))
    assert "llm: must be a mapping" in _err(_write(tmp_path, "a: 1\nllm: [1]\n"), wrapper="llm")


@pytest.mark.parametrize(
    "text, line",
    [
        ("a: 1\nb: [1, 2\nc: 3\n", 2),  # unclosed bracket: PyYAML notices on line 3
        ("a: 1\nb\nc: 3\n", 2),  # a key without ':'
        ("a: 1\nb: \"abc\nc: 3\n", 2),  # unclosed quote
        ("a:\n  x: 1\n y: 2\n", 3),  # bad indentation
        ("a: 1\n\tb: 2\n", 2),  # a tab
        ("a: 1\nb: c: d\n", 2),
    ],
)
def test_yaml_errors_point_at_the_line_to_fix(text: str, line: int) -> None:
    with pytest.raises(ConfigError, match=rf"^f.yaml:{line}: not valid YAML"):
        parse_yaml(text, "f.yaml")


def test_unknown_keys_and_wrong_types_name_field_line_and_value(tmp_path: Path) -> None:
    msg = _err(_write(tmp_path, "name: a\nsise: 4\n"))
    assert msg.startswith(f"{tmp_path / 'c.yaml'}:2: sise: unknown key")
    msg = _err(_write(tmp_path, "name: a\ninner:\n  epochs: many\n"))
    assert msg.startswith(f"{tmp_path / 'c.yaml'}:3: inner.epochs:") and "'many'" in msg
    msg = _err(_write(tmp_path, "llm:\n  size: big\n"), wrapper="llm")
    assert ":2: llm.size:" in msg and "'big'" in msg


def test_every_config_of_the_project_uses_it(tmp_path: Path) -> None:
    """LLM, self-instruct, AgentToken, AppAgent and notebook parameters: the same format."""
    from agentlab.agents.appagent.cli import _config
    from agentlab.llm.config import LLMConfig
    from agentlab.metaagent.agenttoken import AgentTokenConfig
    from agentlab.notebooks import RunParams
    from agentlab.selfinstruct.config import SelfInstructConfig

    bad = _write(tmp_path, "x: 1\nkind: local\ndtype: float8\n")
    for load in (LLMConfig.from_yaml, SelfInstructConfig.from_yaml, AgentTokenConfig.from_yaml, RunParams.from_yaml):
        with pytest.raises(ConfigError) as info:
            load(bad)
        assert str(info.value).startswith(f"{bad}:1: x: unknown key"), load
    with pytest.raises(ConfigError, match=r"c.yaml:3: dtype: .*'float8'"):
        LLMConfig.from_yaml(_write(tmp_path, "kind: local\n\ndtype: float8\n"))
    with pytest.raises(ConfigError, match=r"c.yaml:2: agent.max_rounds: .*'lots'"):
        _config(_write(tmp_path, "agent:\n  max_rounds: lots\n"), app="clock")
    for load in (LLMConfig.from_yaml, AgentTokenConfig.from_yaml, RunParams.from_yaml):
        with pytest.raises(ConfigError, match="not UTF-8"):
            load(_write(tmp_path, b"\xfe\xff", "u.yaml"))


# -- strict files (issue #37, case 8) ---------------------------------------------------------------

BOMB = "".join(
    f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9 if prev else ['"lol"'] * 9) + "]\n"
    for prev, name in zip([None, *"abcdefgh"], "abcdefghi", strict=True)
)


def test_unknown_keys_name_the_known_ones(tmp_path: Path) -> None:
    msg = _err(_write(tmp_path, "name: a\nsise: 4\n"))
    assert "sise: unknown key" in msg and "known: name, size, inner" in msg
    assert "known: epochs" in _err(_write(tmp_path, "inner:\n  epoch: 2\n"))
    # beside a wrapping section: a key no reader of the file takes is an error, not ignored
    msg = _err(_write(tmp_path, "llm:\n  size: 7\nrole: {}\n"), wrapper="llm", siblings=("roles",))
    assert msg.endswith("c.yaml:3: role: unknown top-level key (check its spelling); known: llm, roles")


@pytest.mark.parametrize("text, line, what", [
    ("a: &x 1\nb: 2\n", 1, "anchor &x"),
    ("a: [1]\nb:\n  - &y {c: 1}\n  - *y\n", 3, "anchor &y"),
    (BOMB + "name: *i\n", 1, "anchor &a"),
])
def test_anchors_and_aliases_are_refused_naming_file_and_line(text: str, line: int, what: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, "f.yaml")
    msg = str(info.value)
    assert msg.startswith(f"f.yaml:{line}: YAML {what}: anchors and aliases are not accepted") and "\n" not in msg


def test_an_alias_alone_is_refused_too() -> None:
    from agentlab.config import AliasRefused, safe_load

    with pytest.raises(AliasRefused, match=r"YAML alias \*x"):  # refused before PyYAML looks the anchor up
        safe_load("a: *x\n")


def test_an_alias_bomb_in_an_llm_config_is_one_line_at_once(tmp_path: Path) -> None:
    """Billion laughs as a value: before, 90 s at 2.8 GB until killed; now refused before any expansion
    (in a child with 1 GB of address space and a 60 s limit, so a regression cannot take the machine)."""
    import resource
    import subprocess
    import sys
    import time

    bomb = _write(tmp_path, BOMB + "llm:\n  kind: local\n  model: *i\n", "bomb.yaml")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    code = ("import sys\nfrom agentlab.llm.config import LLMConfig\nfrom agentlab.errors import ConfigError\n"
            "try:\n    LLMConfig.from_yaml(sys.argv[1])\nexcept ConfigError as e:\n    print(e)\n")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True, text=True, timeout=60,
                          preexec_fn=limit, cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.strip() == f"{bomb}:1: YAML anchor &a: anchors and aliases are not accepted in configuration " \
                                  "files; write the value out"
    assert time.monotonic() - t0 < 30


def test_overrides_that_were_given_win_and_are_checked_like_the_file() -> None:
    from agentlab.config import with_overrides

    base = Cfg(name="file", size=5)
    got = with_overrides(Cfg, base, {"name": None, "size": 7, "inner": Inner(epochs=2)})
    assert (got.name, got.size, got.inner.epochs) == ("file", 7, 2) and (base.size, base.inner.epochs) == (5, 1)
    with pytest.raises(ConfigError) as exc:
        with_overrides(Cfg, base, {"size": "many"})
    assert str(exc.value).startswith("options: size: ") and "(got 'many')" in str(exc.value)
    with pytest.raises(ConfigError, match="options: colour: unknown key"):
        with_overrides(Cfg, {}, {"colour": "red"})
