"""Reply-only LoRA adapters on the real embedded backbone: a tiny training run changes what the
adapted model writes, the shared backbone stays untouched, an adapter for another backbone is
refused in one line, wrappers (a reply cap) are kept, and the ToolAgent's adapter option picks
the adapted model only when asked and possible."""

from __future__ import annotations

import json

import pytest
import torch

from agentlab.agents.context import Models, RunContext
from agentlab.errors import ConfigError
from agentlab.llm.adapters import AdaptedBackend, AdapterCard, ReplyLoRA, with_adapter
from agentlab.llm.base import ChatMessage, ReplyCap, SamplingParams

pytestmark = pytest.mark.slow  # trains a tiny adapter on the real backbone (~15 s on 2 cores)

ASK = ["Name a colour.", "Name an animal."]
SAY = [" Teal", " Zebra"]


@pytest.fixture(scope="module")
def trained(backend, tmp_path_factory):
    """An adapter taught to answer two prompts with one word each (a few dozen steps), saved."""
    tok = backend.tokenizer
    data = []
    for q, a in zip(ASK, SAY):
        prompt = backend.chat_prompt([ChatMessage("user", q)])
        data.append((list(tok(prompt)["input_ids"]), [*tok.encode(a, add_special_tokens=False), tok.eos_token_id]))
    lora = ReplyLoRA.fresh(backend, r=4, alpha=8, seed=0)
    opt = torch.optim.AdamW(lora.trainable(), lr=1e-2)
    caches = [lora.prefill(p) for p, _ in data]
    lora.model.train()
    first = None
    for _ in range(20):
        for (p, t), c in zip(data, caches):
            loss = lora.loss(p, t, *c)
            first = first if first is not None else float(loss.detach())
            loss.backward()
            opt.step()
            opt.zero_grad()
    lora.model.eval()
    folder = tmp_path_factory.mktemp("adapter")
    lora.model.save_pretrained(str(folder))
    AdapterCard(agent="Test", backbone=backend.model_id, fingerprint=backend.fingerprint).write(folder)
    return folder, first, float(loss.detach())


def _reply(llm, q: str) -> str:
    return llm.chat([ChatMessage("user", q)], SamplingParams(max_new_tokens=4))[0]


def test_training_changes_the_reply_and_leaves_the_backbone_alone(backend, trained) -> None:
    folder, first_loss, last_loss = trained
    ids = backend.tokenizer("The router reads this.", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        before_logits = backend.model(ids).logits
    before = [_reply(backend, q) for q in ASK]
    adapted, why = with_adapter(backend, folder, "Test")
    assert why is None and isinstance(adapted, AdaptedBackend) and adapted.model_id.endswith("+Test")
    after = [_reply(adapted, q) for q in ASK]
    assert last_loss < first_loss / 4
    assert [a.strip() for a in after] == [s.strip() for s in SAY] and after != before
    # the shared backbone object answers as before, logits bit for bit
    assert [_reply(backend, q) for q in ASK] == before
    with torch.no_grad():
        assert torch.equal(backend.model(ids).logits, before_logits)
    assert not any("lora_" in n for n, _ in backend.model.named_parameters())
    capped, _ = with_adapter(ReplyCap(backend, 1), folder, "Test")
    assert isinstance(capped, ReplyCap) and isinstance(capped.inner, AdaptedBackend)
    assert len(backend.tokenizer.encode(_reply(capped, ASK[1]), add_special_tokens=False)) <= 1


def test_an_adapter_for_another_backbone_is_refused_in_one_line(backend, trained, tmp_path) -> None:
    folder, *_ = trained
    other = tmp_path / "other"
    other.mkdir()
    for f in folder.iterdir():
        (other / f.name).write_bytes(f.read_bytes())
    card = json.loads((other / "adapter.json").read_text())
    (other / "adapter.json").write_text(json.dumps({**card, "fingerprint": "0123456789abcdef"}))
    adapted, why = with_adapter(backend, other, "Other")
    assert adapted is None and why is not None and "\n" not in why
    assert "0123456789abcdef" in why and backend.fingerprint in why and "adapter=none" in why


def test_tool_agent_uses_the_adapter_only_when_asked_and_possible(backend, trained, pool, tmp_path, monkeypatch) -> None:
    from agentlab.agents.tools import ToolAgent
    from agentlab.envs.trajectory import TrajectoryRecorder

    folder, *_ = trained
    doc = pool.get("SheetAgent")

    def ctx() -> RunContext:
        return RunContext(Models(backend), TrajectoryRecorder(tmp_path / "episode"), max_steps=1)

    c = ctx()  # adapter=none: the very model the episode had before adapters existed
    llm, used = ToolAgent(doc, {**doc.runner_options, "adapter": "none"})._llm(c)
    assert llm is c.llm() and used is None
    c = ctx()
    llm, used = ToolAgent(doc, {**doc.runner_options, "adapter": str(folder)})._llm(c)
    assert used == str(folder) and llm.model_id.endswith("+SheetAgent") and llm is not c.llm()
    per_agent = tmp_path / "per-agent"  # a folder of adapters, one per agent: this agent's is used
    per_agent.mkdir()
    (per_agent / "SheetAgent").symlink_to(folder, target_is_directory=True)
    assert ToolAgent(doc, {**doc.runner_options, "adapter": str(per_agent)}).adapter_folder() == per_agent / "SheetAgent"
    auto = ToolAgent(doc, dict(doc.runner_options))
    bad = tmp_path / "bad"
    bad.mkdir()
    explicit = ToolAgent(doc, {**doc.runner_options, "adapter": str(bad)})
    monkeypatch.setenv("AGENTLAB_DATA", str(tmp_path))  # auto without data/adapters/SheetAgent: the backbone alone
    c = ctx()
    llm, used = auto._llm(c)
    assert llm is c.llm() and used is None
    with pytest.raises(ConfigError, match="no adapter"):  # one asked for by name must be there
        explicit._llm(ctx())
