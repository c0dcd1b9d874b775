"""The local vision-language backend (``llm.kind: vision``): the processor path, end to end.

No VLM weights exist offline here, so the model is a TEST DOUBLE: a tiny, randomly initialised
LLaVA (a 1-layer CLIP vision tower on 32x32 images, a 1-layer Llama) with a real
``LlavaProcessor`` (the embedded SmolLM2 tokenizer plus an ``<image>`` token, a CLIP image
processor), saved to a folder and loaded back through ``AutoProcessor`` +
``AutoModelForImageTextToText`` exactly as a downloaded SmolVLM/LLaVA would be. It proves the
plumbing only (the image reaches the vision tower as the processor's pixel values; text comes
back); its replies are noise and are never presented as a result.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from PIL import Image

from agentlab.errors import ConfigError
from agentlab.llm import ChatMessage, LLMConfig, SamplingParams, load_backend
from agentlab.llm.vision import VisionHFBackend, processor_messages

#: a minimal chat template that renders image entries as the processor's ``<image>`` token
_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for p in m['content'] %}{% if p['type'] == 'image' %}<image>{% else %}{{ p['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TEST DOUBLE: a tiny random LLaVA + its processor in a folder (see the module docstring)."""
    from transformers import (
        AutoTokenizer,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    try:
        from transformers import CLIPImageProcessorPil as ImageProcessor  # no torchvision here
    except ImportError:  # pragma: no cover - older transformers
        from transformers import CLIPImageProcessor as ImageProcessor

    from agentlab.llm.embedded import converted_smollm2_dir

    out = tmp_path_factory.mktemp("tiny-llava")
    tok = AutoTokenizer.from_pretrained(str(converted_smollm2_dir()))
    tok.add_special_tokens({"additional_special_tokens": ["<image>"]})
    images = ImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    # 32 px / 8 px patches = 16 patch features (+1 CLS the "default" strategy drops)
    LlavaProcessor(image_processor=images, tokenizer=tok, patch_size=8, vision_feature_select_strategy="default",
                   num_additional_image_tokens=1, chat_template=_TEMPLATE).save_pretrained(out)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=32, patch_size=8, projection_dim=16),
        text_config=LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                                tie_word_embeddings=True),
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def vlm(tiny_vlm: Path) -> VisionHFBackend:
    backend = load_backend(LLMConfig(kind="vision", model=str(tiny_vlm)))
    assert isinstance(backend, VisionHFBackend)
    return backend


def _picture(colour: tuple[int, int, int]) -> Image.Image:
    img = Image.new("RGB", (64, 48), colour)
    img.paste((255 - colour[0], 0, 0), (10, 10, 30, 30))
    return img


def _seen_by_vision_tower(backend: VisionHFBackend, run) -> list[torch.Tensor]:  # type: ignore[no-untyped-def]
    """The pixel values the vision tower was called with while ``run()`` ran."""
    seen: list[torch.Tensor] = []

    def hook(_module, args, kwargs):  # type: ignore[no-untyped-def]
        seen.append((args[0] if args else kwargs["pixel_values"]).detach().clone())

    tower = backend.model.model.vision_tower
    handle = tower.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        run()
    finally:
        handle.remove()
    return seen


def test_declares_images_and_reads_its_config(vlm: VisionHFBackend) -> None:
    caps = vlm.capabilities
    assert caps.images and caps.token_counting and caps.chat_template and not caps.hidden_states
    assert caps.context_length == 512
    assert vlm.count_tokens("hello world") >= 2


def test_the_image_goes_through_the_processor_to_the_vision_tower(vlm: VisionHFBackend) -> None:
    img = _picture((200, 40, 90))
    replies: list[list[str]] = []
    seen = _seen_by_vision_tower(vlm, lambda: replies.append(vlm.chat(
        [ChatMessage("system", "Describe screens."), ChatMessage("user", "What is here?", images=(img,))],
        SamplingParams(max_new_tokens=4, n=2),
    )))
    assert len(replies[0]) == 2 and all(isinstance(r, str) for r in replies[0])
    # the tower saw exactly the processor's pixel values for this picture (resized to 32x32)
    expected = vlm.processor.image_processor(images=img, return_tensors="pt")["pixel_values"]
    assert seen, "the vision tower never ran: the image did not reach the model"
    assert seen[0].shape[-2:] == (32, 32)
    assert torch.allclose(seen[0][:1].float(), expected.float(), atol=1e-5)
    assert "<image>" in vlm.chat_prompt([ChatMessage("user", "What is here?", images=(img,))])
    assert vlm.tokens_in > 16 and vlm.tokens_out > 0  # 16 image tokens are part of the prompt


def test_text_only_chat_and_completion_skip_the_vision_tower(vlm: VisionHFBackend) -> None:
    out: list[list[str]] = []
    seen = _seen_by_vision_tower(vlm, lambda: out.extend([
        vlm.chat([ChatMessage("user", "hello")], SamplingParams(max_new_tokens=3)),
        vlm.complete("Once upon", SamplingParams(max_new_tokens=3)),
    ]))
    assert seen == []
    assert all(len(o) == 1 and isinstance(o[0], str) for o in out)
    sampled = vlm.chat([ChatMessage("user", "hi")], SamplingParams(max_new_tokens=3, temperature=0.9, n=3, seed=1))
    assert len(sampled) == 3


def test_processor_messages_put_images_before_the_text() -> None:
    img = _picture((1, 2, 3))
    msgs = processor_messages([ChatMessage("system", "s"), ChatMessage("user", "u", images=(img, img))])
    assert msgs[0] == {"role": "system", "content": [{"type": "text", "text": "s"}]}
    assert [p["type"] for p in msgs[1]["content"]] == ["image", "image", "text"]
    assert msgs[1]["content"][0]["image"] is img


def test_kinds_and_folders_that_do_not_match_are_one_line(tiny_vlm: Path, tmp_path: Path) -> None:
    from agentlab.llm.embedded import converted_smollm2_dir
    from agentlab.llm.local import LocalHFBackend

    with pytest.raises(ConfigError, match="set llm.kind: vision"):
        LocalHFBackend(LLMConfig(kind="local", model=str(tiny_vlm)))
    with pytest.raises(ConfigError, match="no vision-language model"):
        load_backend(LLMConfig(kind="vision", model=str(converted_smollm2_dir())))
    from agentlab.errors import ModelNotFoundError

    with pytest.raises(ModelNotFoundError, match="not a Hugging Face model directory"):
        load_backend(LLMConfig(kind="vision", model=str(tmp_path / "nothing")))


def test_a_grounder_role_on_the_tiny_vlm_gets_the_screenshot_at_its_side(vlm: VisionHFBackend, tiny_vlm: Path) -> None:
    """Plumbing only (random weights, the reply means nothing): a role's screenshot is downscaled to
    its side before the processor sees it, and ``vision: false`` keeps a vision model on text."""
    from agentlab.agents.context import Models
    from agentlab.llm.roles import Backends
    from agentlab.llm.screens import ImageSides, fit_image

    shot = _picture((30, 160, 60)).resize((640, 480))
    models = Models(Backends(vlm, {"grounder": vlm}, ImageSides(1280, {"grounder": 64})))
    seen = _seen_by_vision_tower(vlm, lambda: models.get("grounder").chat(
        [ChatMessage("user", "Where is the red square?", images=(shot,))], SamplingParams(max_new_tokens=2)))
    expected = vlm.processor.image_processor(images=fit_image(shot, 64), return_tensors="pt")["pixel_values"]
    assert seen and torch.allclose(seen[0][:1].float(), expected.float(), atol=1e-5)
    assert models.usage_by_role()["grounder"]["images"] == 1
    assert load_backend(LLMConfig(kind="vision", model=str(tiny_vlm), vision=False)).capabilities.images is False
