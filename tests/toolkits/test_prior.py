"""The tool prior: a classifier of the first call's tool fitted on synthesized pairs, multiplied
into the grammar's choice of the first call's name; and the slot rules for new names."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from agentlab.errors import ConfigError
from agentlab.toolkits import load_toolkit
from agentlab.toolkits.grammar import CallGrammar
from agentlab.toolkits.prior import ToolPrior, fit
from agentlab.toolkits.slots import merge, request_values, workspace_values


def _toy(n: int = 60, dim: int = 8, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    centres = {"rename_sheet": np.eye(dim)[0], "delete_sheet": np.eye(dim)[1], "sort_rows": np.eye(dim)[2]}
    labels = [list(centres)[i % 3] for i in range(n)]
    vectors = np.stack([centres[lab] + 0.2 * rng.standard_normal(dim) for lab in labels])
    return vectors, labels


def test_fit_learns_separable_tools_and_survives_a_save_and_load(tmp_path: Path) -> None:
    vectors, labels = _toy()
    prior = fit(vectors, labels, card={"encoder": "toy"}, max_iter=50)
    assert prior.card["train_accuracy"] == 1.0 and prior.card["counts"]["sort_rows"] == 20
    probe = np.eye(8)[1]
    assert max(prior.probs(probe).items(), key=lambda kv: kv[1])[0] == "delete_sheet"
    back = ToolPrior.load(prior.save(tmp_path / "p"))
    assert back.names == prior.names and back.encoder == "toy"
    assert back.probs(probe) == pytest.approx(prior.probs(probe), abs=1e-5)
    bias = back.log_bias(probe, ["delete_sheet", "sort_rows", "fail"])
    assert bias["delete_sheet"] > bias["sort_rows"] and bias["fail"] <= min(bias["delete_sheet"], bias["sort_rows"])
    assert sum(np.exp(v) for v in bias.values()) == pytest.approx(1.0)  # renormalised over the allowed names


def test_a_specialist_with_two_tools_gets_two_opposite_rows() -> None:
    """scikit-learn fits two classes as one binary model: the prior still has a row per tool."""
    vectors, labels = _toy()
    labels = ["rename_sheet" if lab == "sort_rows" else lab for lab in labels]
    prior = fit(vectors, labels)
    assert prior.names == ("delete_sheet", "rename_sheet") and prior.weight.shape == (8, 2)
    assert prior.card["train_accuracy"] == 1.0
    assert max(prior.probs(np.eye(8)[1]).items(), key=lambda kv: kv[1])[0] == "delete_sheet"
    assert np.allclose(prior.weight[:, 0], -prior.weight[:, 1])


def test_a_broken_prior_folder_is_one_config_error_naming_it(tmp_path: Path) -> None:
    folder = fit(*_toy(), card={"encoder": "toy"}).save(tmp_path / "p")
    (folder / "prior.safetensors").write_bytes(b"not a tensor file")
    with pytest.raises(ConfigError, match="tool prior unreadable") as err:
        ToolPrior.load(folder)
    assert str(folder) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="tool prior unreadable"):
        ToolPrior.load(tmp_path / "missing")


def _sheet(tmp_path: Path) -> CallGrammar:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.title = "Data"
    wb.active.append(["item", "cost"])
    wb.create_sheet("Notes")
    wb.save(tmp_path / "budget.xlsx")
    kit = load_toolkit("sheets")
    values = merge(request_values("Rename the Data sheet in budget.xlsx to Q3, leave Notes alone."),
                   workspace_values(tmp_path, kit))
    return CallGrammar.build(kit, values, names=["rename_sheet", "delete_sheet", "sort_rows"], allow_done=False)


def _greedy(grammar: CallGrammar, tokenizer, favour: str, limit: int = 60) -> str:
    """Decode with scores that favour the tokens of ``favour`` (a stand-in for a model's preference)."""
    import torch

    from tests.toolkits.test_toolkits import _walk

    liked = list(set(tokenizer.encode(favour, add_special_tokens=False)))

    def scores() -> torch.Tensor:
        out = torch.zeros((1, len(tokenizer)))
        out[0, liked] = 3.0
        return out

    return _walk(grammar, tokenizer, random.Random(0), limit, scores_fn=scores)


def test_the_prior_moves_the_first_calls_tool_and_only_when_it_is_confident(tmp_path: Path) -> None:
    """The 'model' (scores) prefers delete_sheet; a confident prior for rename_sheet wins the first
    call's name, a weak one does not, and the arguments stay the grammar's candidates."""
    from transformers import AutoTokenizer

    from agentlab.llm.embedded import converted_smollm2_dir

    tokenizer = AutoTokenizer.from_pretrained(converted_smollm2_dir())
    base = _sheet(tmp_path)
    assert _greedy(base, tokenizer, "delete_sheet").startswith("delete_sheet(")
    strong = CallGrammar(base.tools, base.max_calls, base.max_text_tokens, base.done_first,
                         name_prior=(("rename_sheet", np.log(0.98)), ("delete_sheet", np.log(0.01)),
                                     ("sort_rows", np.log(0.005)), ("fail", np.log(0.005))))
    text = _greedy(strong, tokenizer, "delete_sheet")
    assert text.startswith("rename_sheet('budget.xlsx', ")
    weak = CallGrammar(base.tools, base.max_calls, base.max_text_tokens, base.done_first,
                       name_prior=(("rename_sheet", np.log(0.3)), ("delete_sheet", np.log(0.3)),
                                   ("sort_rows", np.log(0.2)), ("fail", np.log(0.2))))
    assert _greedy(weak, tokenizer, "delete_sheet").startswith("delete_sheet(")
    from tests.toolkits.test_toolkits import _walk

    rng = random.Random(0)  # the prior never lets a walk leave the grammar
    for _ in range(4):
        assert _walk(strong, tokenizer, rng).split("(")[0] in strong.tools


def test_new_names_are_not_taken_ones_and_a_named_new_file_is_where_results_go(tmp_path: Path) -> None:
    new_name = _sheet(tmp_path).tools["rename_sheet"][2]
    assert new_name is not None and "'Q3'" in new_name
    assert "'Notes'" not in new_name and "'Data'" not in new_name  # existing sheets are no new name
    from PIL import Image

    Image.new("RGB", (40, 30)).save(tmp_path / "shot.png")
    kit = load_toolkit("images")
    crop = CallGrammar.build(kit, merge(request_values("Keep the top 12 pixels of shot.png and save it as strip.png."),
                                        workspace_values(tmp_path, kit)))
    assert crop.tools["keep_top"][0] == ("'shot.png'",) and crop.tools["keep_top"][2] == ("'strip.png'",)
    over = CallGrammar.build(kit, merge(request_values("Rotate shot.png by 90 degrees."), workspace_values(tmp_path, kit)))
    assert over.tools["rotate"][2] == ("'shot.png'",)  # no new file named: the result goes over the original


def test_text_spans_drop_command_and_glue_words_at_their_edges_and_title_names_the_first_paragraph() -> None:
    spans = request_values("Add milk to the end of shopping.txt.").spans
    assert "milk" in spans and "Add milk" not in spans and "the end" not in spans
    assert request_values("Add 'call the plumber' as a new last line.").spans[0] == "call the plumber"
    from agentlab.toolkits.base import Slot

    values = request_values("The title of poster.docx looks tiny. Make it 28 pt.")
    assert values.candidates(Slot("anchor"))[0] == "'title'"


def test_a_prior_fitted_with_the_requests_reads_their_words_after_a_save_and_load(tmp_path: Path) -> None:
    """Every request has the same embedding here, so only the words can tell the tools apart: a
    prior fitted with ``texts`` learns the verb, its card says so, and it reads the words again
    once loaded; one fitted without them cannot tell (both tools level)."""
    rng = random.Random(0)
    things = ["the invoice", "Team lunch", "the report", "Flight change"]
    texts = [f"{verb} {rng.choice(things)}" for verb in ("star", "delete") for _ in range(20)]
    labels = ["star_message"] * 20 + ["delete_message"] * 20
    same = np.tile(np.eye(8)[0], (40, 1))
    prior = fit(same, labels, card={"encoder": "toy"}, texts=texts)
    assert prior.card["features"] == "embedding+words" and prior.card["train_accuracy"] == 1.0
    back = ToolPrior.load(prior.save(tmp_path / "p"))
    probs = back.probs(back.features(np.eye(8)[0], "In the inbox, please star Boiler service"))
    assert probs["star_message"] > 0.8
    # a card that no longer says how it reads (edited by hand) is one line, not a numpy traceback
    edited = ToolPrior(back.names, back.weight, back.bias, {k: v for k, v in back.card.items() if k != "features"})
    with pytest.raises(ConfigError, match="tool prior reads 1032 features, got .8,.: fit it again"):
        edited.probs(edited.features(np.eye(8)[0], "star it"))
    blind = fit(same, labels, card={"encoder": "toy"})
    assert blind.features(np.eye(8)[0], "star it").shape == (8,)
    assert blind.probs(blind.features(np.eye(8)[0], "star it"))["star_message"] == pytest.approx(0.5, abs=0.01)
