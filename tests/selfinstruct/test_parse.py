"""The generation parser: forgiving about list form, strict about content, every drop counted."""

from __future__ import annotations

from agentlab.dialogue.templates import load_template
from agentlab.selfinstruct.generate import build_prompt, clean_line, parse_output


def test_clean_line_strips_markers_labels_and_quotes() -> None:
    assert clean_line("  8. Hide the gridlines in the sheet.") == "Hide the gridlines in the sheet."
    assert clean_line("- Open the settings page") == "Open the settings page"
    assert clean_line("* “Pin the chat with Anna to the top.”") == "Pin the chat with Anna to the top."
    assert clean_line('3) Request: "Mute the video for me"') == "Mute the video for me"
    assert clean_line("• Task 2: Rename the sheet to Q3") == "Rename the sheet to Q3"
    assert clean_line("B) Visit a restaurant in San Francisco.") == "Visit a restaurant in San Francisco."
    assert clean_line("A: Mute the chat with Bob.") == "Mute the chat with Bob."
    assert clean_line("A cat video, please play it") == "A cat video, please play it"


def test_messy_output_counts_each_reason() -> None:
    text = (
        " Turn on dark mode in the app settings.\n"  # continuation of "7." (no number)
        "8. Sure! Here are some more requests:\n"  # chatter
        "9. Hi\n"  # too short
        "10. " + "Make the chart bigger and " * 12 + "\n"  # too long
        "11. ## 12345 /// 678 $$ 9\n"  # non-task
        "12. turn on dark mode in the app settings!\n"  # duplicate of line 1 after normalisation
        "13. Freeze the first row of the sheet.\n"  # a known (existing) demo
        "\n"
        '14. "Sort column B from largest to smallest."\n'
        "15. Add a chart titled"  # cut off by the token limit
    )
    res = parse_output(
        text, complete=False, min_words=4, max_chars=120, known={"freeze the first row of the sheet"}
    )
    assert res.candidates == ["Turn on dark mode in the app settings.", "Sort column B from largest to smallest."]
    assert dict(res.reasons) == {
        "chatter": 1, "too_short": 1, "too_long": 1, "non_task": 1, "duplicate": 1, "known": 1, "truncated": 1,
    }
    assert res.dropped["chatter"] == ["8. Sure! Here are some more requests:"]


def test_complete_output_keeps_last_line_and_empty_output_is_counted() -> None:
    res = parse_output("Play the next song in my queue\n", complete=True)
    assert res.candidates == ["Play the next song in my queue"]
    res = parse_output("Play the next song in my queue", complete=False)
    assert res.candidates == [] and res.reasons["truncated"] == 1
    res = parse_output("  \n\n", complete=True)
    assert res.candidates == [] and res.reasons["empty"] == 1


def test_seen_set_deduplicates_across_sequences() -> None:
    seen: set[str] = set()
    a = parse_output("Open the downloads folder please.\n", seen=seen)
    b = parse_output("open the Downloads folder, please\n", seen=seen)
    assert a.candidates and not b.candidates and b.reasons["duplicate"] == 1


def test_completion_prompt_ends_with_next_number(pool) -> None:  # type: ignore[no-untyped-def]
    doc = pool.get("SheetAgent")
    tpl = load_template("selfinstruct/completion")
    shots = [d.text for d in doc.demonstrations[:6]]
    p = build_prompt(tpl, doc, shots)
    assert p.endswith("\n7.")
    assert "6. " + shots[5] in p and "SheetAgent" in p
    chat = build_prompt(load_template("selfinstruct/chat"), doc, shots, count=5)
    assert "Write 5 new requests" in chat and doc.limitations[:40] in chat
