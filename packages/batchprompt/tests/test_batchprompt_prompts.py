"""Prompts: the paper's tasks match the official prompt files (fixture with provenance), and a
golden batch prompt of the generated task."""

import json
from pathlib import Path

from iclr24_batchprompt import BOOLQ, QQP, RTE, SENTIMENT, batch_text, build_messages
from iclr24_batchprompt.batchprompt import system_text

OFFICIAL = json.loads((Path(__file__).parent / "fixtures" / "official_prompts.json").read_text())


def official_prompt_gen(template: str, batch: list[dict]) -> str:
    """What the official ``BatchGPT.prompt_gen`` builds (re-derived from its description:
    the template per point with [INPUT_INDEX] = position and [KEY] = field, then two newlines)."""
    out = ""
    for i, point in enumerate(batch):
        text = template.replace("[INPUT_INDEX]", str(i))
        for k, v in point.items():
            text = text.replace(f"[{k.upper()}]", v)
        out += text + "\n\n"
    return out


def test_paper_tasks_match_the_official_files():
    for task, name in ((RTE, "rte"), (BOOLQ, "boolq"), (QQP, "qqp")):
        files = OFFICIAL[name]
        assert task.system == files["system_prompt.txt"], name
        assert task.template == files["prompt_template.txt"], name
        assert system_text(task, 16) == files["system_prompt.txt"].replace("[BATCH_SIZE]", "16")
    user, assistant = OFFICIAL["rte"]["few_shot.txt"].split("====Answer====")
    assert RTE.fewshot == (user, assistant)


def test_rte_and_boolq_batches_match_official_prompt_gen():
    rte = [
        {"premise": "A man is playing a guitar.", "hypothesis": "A man plays music."},
        {"premise": "It rained all day.", "hypothesis": "The ground is dry."},
    ]
    boolq = [{"passage": "Paris is the capital of France.", "question": "is paris in france"}]
    assert batch_text(RTE, rte) == official_prompt_gen(OFFICIAL["rte"]["prompt_template.txt"], rte)
    assert batch_text(BOOLQ, boolq) == official_prompt_gen(
        OFFICIAL["boolq"]["prompt_template.txt"], boolq
    )
    assert batch_text(RTE, rte) == (
        "Sentence pair 0: \nPremise: A man is playing a guitar.\nHypothesis: A man plays music."
        "\n\nSentence pair 1: \nPremise: It rained all day.\nHypothesis: The ground is dry.\n\n"
    )


def test_messages_order_system_fewshot_batch():
    msgs = build_messages(RTE, [{"premise": "p", "hypothesis": "h"}])
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert "You will be given 1 sentence pairs" in msgs[0]["content"]
    assert msgs[1]["content"].startswith("Sentence pair 0:\nPremise: Herceptin")
    assert (
        msgs[2]["content"]
        == "\nLabel for Sentence pair 0: [class 0]\nLabel for Sentence pair 1: [class 1]\n"
    )
    assert msgs[3]["content"] == "Sentence pair 0: \nPremise: p\nHypothesis: h\n\n"


def test_golden_sentiment_batch_prompt():
    items = [
        {"sentence": "The cake was awful.", "label": "0"},
        {"sentence": "The song is superb.", "label": "1"},
    ]
    msgs = build_messages(SENTIMENT, items, confidence=True)
    assert msgs[-1]["content"] == "Input 0: The cake was awful.\n\nInput 1: The song is superb.\n\n"
    assert msgs[0]["content"].endswith(
        "Please make sure each generated label is in format of [X].\n"
        "Please make sure to generate 2 labels.\nAfter each label, say how sure you are: write "
        '(confident) or (not confident), e.g. "Label for Input 0: [bad] (confident)".'
    )
    assert "You will be given 2 sentences each time" in msgs[0]["content"]
    assert (
        SENTIMENT.label_line(3, 1, "not confident") == "Label for Input 3: [good] (not confident)"
    )
