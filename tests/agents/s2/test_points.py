"""A grounding model's point, whatever shape its answer takes, mapped onto the screen in either
coordinate convention (pixels of the sent image, or the 0-1000 grid)."""

from __future__ import annotations

import pytest

from agentlab.agents.s2.points import parse_point, read_point
from agentlab.errors import ActionParseError


@pytest.mark.parametrize("reply", [
    "(120, 45)", "[120,45]", "<point>120 45</point>", "<point>(120, 45)</point>", "click(x=120, y=45)",
    '{"x": 120, "y": 45}', '```json\n[{"point_2d": [120, 45], "label": "Save"}]\n```',
    '{"bbox_2d": [100, 40, 140, 50]}', "click(start_box='(120,45)')", "The Save button is at (120.2, 44.8).",
    "x: 120\ny: 45",
])
def test_the_usual_answer_shapes_give_the_same_point(reply: str) -> None:
    assert parse_point(reply, (1280, 800)) == (120, 45)


def test_pixels_of_a_downscaled_image_are_scaled_back_to_the_screen() -> None:
    assert parse_point("(320, 200)", (1920, 1200), "pixels", sent=(1280, 800)) == (480, 300)
    with pytest.raises(ActionParseError, match="off the 1280x800 screen"):
        parse_point("(1300, 5)", (1920, 1200), "pixels", sent=(1280, 800))


def test_the_relative_grid_and_fractions_cover_the_whole_screen() -> None:
    assert parse_point("(500, 250)", (1280, 800), "relative") == (640, 200)
    assert parse_point("[0.5, 0.25]", (1280, 800), "relative") == (640, 200)
    assert parse_point("(1000, 1000)", (1280, 800), "relative") == (1279, 799)
    with pytest.raises(ActionParseError, match="off the 0-1000 grid"):
        parse_point("(1200, 5)", (1280, 800), "relative")


def test_an_answer_without_a_point_is_a_problem_to_feed_back() -> None:
    with pytest.raises(ActionParseError, match="no point"):
        read_point("I cannot see a Save button.")
