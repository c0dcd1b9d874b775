"""Bounded toolkit outputs (issue #37, case 10): a ``scale`` once made a 122-megapixel picture
with nothing stopping it (Pillow only warns, and only when it reads one). Pictures over
``MAX_PIXELS`` are neither made nor read, and no tool call writes a file over
``MAX_OUTPUT_BYTES`` (the tool program's file-size limit): each is a tool error the agent reads,
and the file it would have replaced is left as it was."""

from __future__ import annotations

import struct
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest
from PIL import Image

from agentlab.toolkits import images, load_toolkit
from agentlab.toolkits.base import MAX_OUTPUT_BYTES, ToolError
from agentlab.toolkits.runtime import program, results

TOOLS = load_toolkit("images").tools


def _png_header(path: Path, width: int, height: int) -> None:
    """A PNG that claims ``width`` x ``height`` pixels (a decompression bomb's header; a few bytes)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
                     + chunk(b"IEND", b""))


def test_a_scale_that_would_make_a_122_megapixel_image_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Image.new("RGB", (1000, 1000), (9, 9, 9)).save("photo.png")
    with pytest.raises(ToolError, match=r"11000x11000 = 121000000 pixels, over the limit of 50000000"):
        TOOLS["scale"].fn("photo.png", 1100, "big.png")
    with pytest.raises(ToolError, match="over the limit"):
        TOOLS["resize"].fn("photo.png", 20000, 20000, "big.png")
    with pytest.raises(ToolError, match="over the limit"):
        TOOLS["resize_to_width"].fn("photo.png", 12000, "big.png")
    with pytest.raises(ToolError, match="at least 1"):
        TOOLS["resize"].fn("photo.png", 0, 10, "big.png")
    assert not Path("big.png").exists()
    assert TOOLS["scale"].fn("photo.png", 50, "half.png") == "half.png: 500x500 RGB"  # a fitting size still works


@pytest.mark.parametrize("side", [8000, 12000])  # 64 MP: Pillow only warns; 144 MP: Pillow refuses
def test_an_input_over_the_limit_is_refused_before_its_pixels_are_decoded(tmp_path: Path, monkeypatch, side: int) -> None:
    monkeypatch.chdir(tmp_path)
    _png_header(tmp_path / "bomb.png", side, side)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DecompressionBombWarning escapes either
        with pytest.raises(ToolError, match="over the limit of 50000000 pixels"):
            TOOLS["grayscale"].fn("bomb.png", "out.png")
        assert "over the 50000000 pixel limit" in images._describe(tmp_path / "bomb.png")
    assert not (tmp_path / "out.png").exists()


def test_an_output_file_over_the_size_limit_is_not_written(tmp_path: Path, monkeypatch) -> None:
    """Called directly (no file-size limit on the process): the size is checked before the rename."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(images, "MAX_OUTPUT_BYTES", 10_000)
    Image.new("RGB", (200, 200), (1, 2, 3)).save("pic.png")
    Path("pic.bmp").write_bytes(b"the old file")
    with pytest.raises(ToolError, match="pic.bmp would be larger than the limit"):
        TOOLS["convert"].fn("pic.png", "pic.bmp")  # 120 kB as a BMP
    assert Path("pic.bmp").read_bytes() == b"the old file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pic.bmp", "pic.png"]  # no temporary file left


def test_the_tool_program_cannot_write_a_file_over_the_limit(tmp_path: Path) -> None:
    """The real path: the calls run as their own program (:func:`program`), whose file-size limit
    is lowered to MAX_OUTPUT_BYTES; a 20-megapixel RGBA picture is 80 MB as a BMP. (Run as the
    toolkit tests run it: a workspace's ``python -I`` would import the installed package.)"""
    side = (5000, 4000)
    assert side[0] * side[1] <= images.MAX_PIXELS and side[0] * side[1] * 4 > MAX_OUTPUT_BYTES
    Image.new("RGBA", side, (1, 2, 3, 4)).save(tmp_path / "poster.png")
    (tmp_path / "poster.bmp").write_bytes(b"the old file")
    code = program("images", [{"name": "convert", "args": {"file": "poster.png", "out": "poster.bmp"}}])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    (done,) = results(out.stdout)
    assert done["ok"] is False and "poster.bmp would be larger than the limit of 64 MB" in done["error"], out
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert (tmp_path / "poster.bmp").read_bytes() == b"the old file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["poster.bmp", "poster.png"]  # no temporary file left
