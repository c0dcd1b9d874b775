"""Images through the OpenAI-compatible backend, checked where they land: a loopback server
(the ``chat_server`` fixture; the client side is the real ``openai`` package) decodes each
``image_url`` part's base64 PNG and compares its pixels with what the test sent. Text-only
backends refuse images with one clear line instead of dropping them."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image, ImageChops, ImageDraw

from agentlab.errors import ConfigError
from agentlab.llm import ChatMessage, LLMConfig, SamplingParams, load_backend
from agentlab.llm.base import ReplyCap
from agentlab.llm.openai_compat import png_data_url, wire_message


def _screenshot(seed: int) -> Image.Image:
    """A small picture with distinct pixels everywhere (a gradient and a box), so any change
    on the way (re-encoding, resizing, channel swaps) shows up."""
    img = Image.new("RGB", (37, 23))
    img.putdata([((x * 7 + seed) % 256, (y * 11) % 256, (x * y + seed * 3) % 256) for y in range(23) for x in range(37)])
    ImageDraw.Draw(img).rectangle((3, 4, 12, 9), fill=(255, 0, seed % 256))
    return img


def _decode(url: str) -> Image.Image:
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix), url[:40]
    return Image.open(io.BytesIO(base64.b64decode(url[len(prefix):]))).convert("RGB")


def _same_pixels(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and ImageChops.difference(a.convert("RGB"), b.convert("RGB")).getbbox() is None


def test_images_arrive_intact_as_content_parts(chat_server) -> None:  # type: ignore[no-untyped-def]
    sent = [_screenshot(1), _screenshot(2)]
    seen: list[str] = []

    def server_side(body, k):  # type: ignore[no-untyped-def]
        # runs in the server thread: check the wire form and the pixels there
        for msg in body["messages"]:
            content = msg["content"]
            if isinstance(content, str):
                seen.append(f"{msg['role']}: plain")
                continue
            # recorded, not asserted: an assertion here would only break the HTTP reply
            kinds = ",".join(p["type"] for p in content)
            images = [_decode(p["image_url"]["url"]) for p in content if p["type"] == "image_url"]
            intact = len(images) == len(sent) and all(_same_pixels(i, r) for i, r in zip(images, sent))
            seen.append(f"{msg['role']}: [{kinds}] {content[0].get('text')!r} intact={intact}")
        return "ok"

    url = chat_server(server_side)
    backend = load_backend(LLMConfig(kind="openai", base_url=url, model="vlm", images=True))
    assert backend.capabilities.images
    reply = backend.chat(
        [ChatMessage("system", "You see screens."), ChatMessage("user", "What is on screen?", images=tuple(sent))],
        SamplingParams(max_new_tokens=8),
    )
    assert reply == ["ok"]
    assert seen == ["system: plain", "user: [text,image_url,image_url] 'What is on screen?' intact=True"]


def test_text_only_messages_stay_plain_strings(chat_server) -> None:  # type: ignore[no-untyped-def]
    url = chat_server(lambda body, k: "fine")
    backend = load_backend(LLMConfig(kind="openai", base_url=url, model="m", images=True))
    assert backend.chat([ChatMessage("user", "hello")]) == ["fine"]
    assert chat_server.requests[0]["messages"] == [{"role": "user", "content": "hello"}]


def test_a_text_only_endpoint_refuses_images_in_one_line(chat_server) -> None:  # type: ignore[no-untyped-def]
    url = chat_server(lambda body, k: "never")
    backend = load_backend(LLMConfig(kind="openai", base_url=url, model="m"))  # images: false (default)
    assert not backend.capabilities.images
    with pytest.raises(ConfigError) as err:
        backend.chat([ChatMessage("user", "look", images=(_screenshot(0),))])
    line = str(err.value)
    assert "\n" not in line and "does not accept images" in line and "llm.images: true" in line
    assert chat_server.requests == []  # refused before anything was sent
    # the same backend still talks text
    assert backend.chat([ChatMessage("user", "text only")]) == ["never"]


def test_reply_cap_keeps_the_image_capability(chat_server) -> None:  # type: ignore[no-untyped-def]
    url = chat_server(lambda body, k: str(len(body["messages"][0]["content"])))
    capped = ReplyCap(load_backend(LLMConfig(kind="openai", base_url=url, model="m", images=True)), 4)
    assert capped.capabilities.images
    assert capped.chat([ChatMessage("user", "x", images=(_screenshot(3),))]) == ["2"]  # text part + image part
    assert chat_server.requests[0]["max_tokens"] == 4


def test_local_text_model_refuses_images(backend) -> None:  # type: ignore[no-untyped-def]
    assert not backend.capabilities.images
    with pytest.raises(ConfigError, match="does not accept images"):
        backend.chat([ChatMessage("user", "look", images=(_screenshot(0),))])


def test_wire_message_forms() -> None:
    img = _screenshot(5)
    assert wire_message(ChatMessage("assistant", "hi")) == {"role": "assistant", "content": "hi"}
    parts = wire_message(ChatMessage("user", "see", images=(img,)))["content"]
    assert parts[0] == {"type": "text", "text": "see"}
    assert parts[1]["type"] == "image_url" and _same_pixels(_decode(parts[1]["image_url"]["url"]), img)
    # RGBA and greyscale survive too (PNG keeps the mode)
    rgba = img.convert("RGBA")
    assert _same_pixels(_decode(png_data_url(rgba)), rgba)


def test_image_settings_from_the_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("AGENTLAB_LLM_CONFIG", raising=False)
    monkeypatch.setenv("AGENTLAB_LLM_KIND", "openai")
    monkeypatch.setenv("AGENTLAB_LLM_IMAGES", "true")
    assert LLMConfig.from_env().images is True
    monkeypatch.setenv("AGENTLAB_LLM_KIND", "vision")
    monkeypatch.delenv("AGENTLAB_LLM_IMAGES")
    assert LLMConfig.from_env().kind == "vision"
    monkeypatch.setenv("AGENTLAB_LLM_IMAGES", "perhaps")
    with pytest.raises(ConfigError) as err:
        LLMConfig.from_env()
    assert err.value.where == "AGENTLAB_LLM_IMAGES"
