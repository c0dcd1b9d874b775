"""An LLM config file with a model per role (``roles:`` beside ``llm:``), ``vision``, and the
screenshots' way to a model: downscaled to the role's side and counted."""

from __future__ import annotations

import pytest
from PIL import Image

from agentlab.agents.context import Models
from agentlab.agents.roles import ROLES, known_roles
from agentlab.errors import ConfigError
from agentlab.llm import load_backend
from agentlab.llm.base import Capabilities, ChatMessage, LLMBackend, SamplingParams
from agentlab.llm.config import LLMConfig
from agentlab.llm.roles import Backends, load_models_file
from agentlab.llm.screens import ImageFit, ImageSides, TextOnly, fitted_size


# TEST DOUBLE
class Seeing(LLMBackend):
    """TEST DOUBLE, not a model: keeps the images it was sent and declares images."""

    model_id = "seeing-test-double"

    def __init__(self) -> None:
        self.sent: list[tuple[Image.Image, ...]] = []
        self.tokens_in = self.tokens_out = 0

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(images=True)

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        self.sent.append(messages[-1].images)
        self.tokens_in += 3
        self.tokens_out += 1
        return ["ok"]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        return ["ok"]


def _write(tmp_path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "models.yaml"
    path.write_text(text)
    return path


def test_a_roles_file_gives_each_named_role_its_model_and_the_rest_the_default(tmp_path) -> None:
    path = _write(tmp_path, """
llm: {kind: openai, base_url: "http://127.0.0.1:1/v1", model: planner-7b}
roles:
  worker: {kind: openai, base_url: "http://127.0.0.1:2/v1", model: vl-7b, vision: true, max_image_side: 1024}
  grounder: {kind: openai, base_url: "http://127.0.0.1:3/v1", model: grounder-7b, vision: true}
""")
    models = load_models_file(path, known_roles())
    assert models.config("worker").model == "vl-7b" and models.config("grounder").model == "grounder-7b"
    assert models.config("manager").model == "planner-7b"  # a role not named uses llm:
    assert models.image_sides().of("worker") == 1024 and models.image_sides().of("manager") == 1280
    assert LLMConfig.from_yaml(path).model == "planner-7b"  # the file is still an ordinary LLM config file
    assert load_models_file(_write(tmp_path, "llm: {model: x}\n")).roles == {}


def test_an_unknown_role_is_one_line_listing_the_known_ones(tmp_path) -> None:
    path = _write(tmp_path, "llm: {model: x}\nroles:\n  worker: {model: y}\n  grounding: {model: z}\n")
    with pytest.raises(ConfigError) as exc:
        load_models_file(path, known_roles())
    line = str(exc.value)
    assert "\n" not in line and f"{path}:4" in line and "roles.grounding: unknown role" in line
    assert "grounder" in line and "decision" in line and "router" in line and "planner" in line


@pytest.mark.parametrize("text, expected", [
    ("llm: {model: x}\nroles:\n  worker: {model: y, colour: blue}\n", ":3: roles.worker.colour: unknown key"),
    ("llm: {model: x}\nroles:\n  worker: qwen\n", "roles.worker: must be a mapping"),
    ("llm: {model: x}\nroles: [worker]\n", "roles: must map role names"),
    ("model: x\nroles:\n  worker: {model: y}\n", "keeps its default model under llm:"),
    ("llm: {model: x}\nroles:\n  worker: {model: y, max_image_side: 10}\n", "roles.worker.max_image_side"),
])
def test_bad_roles_files_are_one_line(tmp_path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=None) as exc:
        load_models_file(_write(tmp_path, text), known_roles())
    assert expected in str(exc.value) and "\n" not in str(exc.value)


def test_every_runner_asks_its_roles_by_the_documented_names() -> None:
    from agentlab.agents.pcagent.config import MODEL_ROLES as PC
    from agentlab.agents.s2.config import MODEL_ROLES as S2
    from agentlab.teams.cola.run import TEAM_ROLES

    names = {arch: sorted(r.name for r in roles) for arch, roles in ROLES.items()}
    assert names["s2"] == sorted(S2.values()) and names["pcagent"] == sorted(PC) and names["cola"] == sorted(TEAM_ROLES)
    assert set(known_roles()) >= {"agent", "manager", "worker", "grounder", "router"}


def test_vision_decides_whether_an_endpoint_takes_images(tmp_path) -> None:
    base = {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    assert load_backend(LLMConfig(**base, vision=True)).capabilities.images is True
    assert load_backend(LLMConfig(**base, images=True, vision=False)).capabilities.images is False
    assert load_backend(LLMConfig(**base, images=True)).capabilities.images is True  # vision unset: as before
    with pytest.raises(ConfigError, match="kind: local is a text model"):
        load_backend(LLMConfig(vision=True))
    assert TextOnly(Seeing()).capabilities.images is False  # a vision model kept on the text observation


def test_screenshots_are_downscaled_to_the_roles_side_and_counted() -> None:
    assert fitted_size((1920, 1080), 1280) == (1280, 720) and fitted_size((800, 600), 1280) == (800, 600)
    inner = Seeing()
    shot = Image.new("RGB", (1920, 1080), "white")
    models = Models(Backends(inner, sides=ImageSides(1280, {"grounder": 960})))
    models.get("grounder").chat([ChatMessage("user", "where?", images=(shot,))])
    models.get("worker").chat([ChatMessage("user", "act", images=(shot,))])
    models.get("manager").chat([ChatMessage("user", "plan")])
    assert [s[0].size for s in inner.sent if s] == [(960, 540), (1280, 720)] and shot.size == (1920, 1080)
    usage = models.usage_by_role()
    assert usage["grounder"]["images"] == 1 and usage["grounder"]["image_bytes"] > 0
    assert "images" not in usage["manager"] and models.image_side("grounder") == 960
    total = models.total()
    assert sum(u["llm_calls"] for u in usage.values()) == total.calls == 3
    assert sum(u["tokens_in"] for u in usage.values()) == total.tokens_in == 9
    fit = ImageFit(inner, 100)
    fit.chat([ChatMessage("user", "x", images=(shot,))])
    assert inner.sent[-1][0].size == (100, 56) and fit.images_sent == 1


def test_exec_takes_the_router_from_the_file_unless_the_router_flag_names_one(tmp_path) -> None:
    from agentlab.cli.execute import exec_models

    path = _write(tmp_path, "llm: {model: x}\nroles:\n  router: {kind: openai, base_url: 'http://h/v1', model: r}\n"
                            "  grounder: {kind: openai, base_url: 'http://h/v1', model: g}\n")
    models, router = exec_models(path, None)
    assert router.model == "r" and list(models.agent_roles()) == ["grounder"]
    other = tmp_path / "router.yaml"
    other.write_text("llm: {kind: openai, base_url: 'http://h/v1', model: flag}\n")
    assert exec_models(path, other)[1].model == "flag"


def test_exec_refuses_an_unknown_role_in_one_line(tmp_path) -> None:
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app
    from agentlab.tasks.spec import tasks_dir

    path = _write(tmp_path, "llm: {model: x}\nroles:\n  planer: {model: y}\n")
    _mount()
    res = CliRunner().invoke(app, ["exec", "--tasks", str(tasks_dir() / "calc-enter-total.json"), "--out",
                                   str(tmp_path / "run"), "--llm-config", str(path)])
    assert res.exit_code != 0 and isinstance(res.exception, ConfigError)
    assert "roles.planer: unknown role; known roles:" in str(res.exception) and not (tmp_path / "run").exists()


def test_notebooks_take_a_roles_file_from_the_environment(tmp_path, monkeypatch) -> None:
    from agentlab.llm.roles import models_from_env

    path = _write(tmp_path, "llm: {model: x}\nroles:\n  grounder: {kind: openai, base_url: 'http://h/v1', model: g}\n")
    monkeypatch.setenv("AGENTLAB_LLM_CONFIG", str(path))
    models = models_from_env(known_roles())
    assert models.llm.model == "x" and models.config("grounder").model == "g"
    monkeypatch.delenv("AGENTLAB_LLM_CONFIG")
    monkeypatch.setenv("AGENTLAB_LLM_MODEL", "y")
    assert models_from_env(known_roles()).llm.model == "y" and models_from_env().roles == {}
