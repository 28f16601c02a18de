"""The parser aligns labels by item number; missing labels are asked again, alone."""

from iclr24_batchprompt import RTE, SENTIMENT, Ledger, ask, llm_answerer, parse_answer

from iclr24_llm import ScriptedBackend

ITEMS = [{"sentence": f"s{i}", "label": "1"} for i in range(4)]


def test_official_format_in_order():
    text = "Label for Sentence pair 0: [class 0]\nLabel for Sentence pair 1: [class 1]\n"
    p = parse_answer(RTE, text, 2)
    assert p.labels == {0: 0, 1: 1} and not p.missing and not p.extra and not p.duplicate


def test_out_of_order_missing_extra_duplicate():
    text = (
        "Label for Input 2: [good] (confident)\n"
        "Label for Input 0: [bad] (not confident)\n"
        "Label for Input 7: [good]\n"  # outside the batch
        "Label for Input 2: [good]\n"  # repeat, agreeing
        "Label for Input 3: [good]\nLabel for Input 3: [bad]\n"
    )  # disagreeing
    p = parse_answer(SENTIMENT, text, 4)
    assert p.labels == {2: 1, 0: 0}
    assert p.confidence == {2: "confident", 0: "not confident"}
    assert p.missing == [1, 3] and p.extra == [7] and p.duplicate == [2, 3]


def test_tolerant_spelling_and_bad_labels():
    text = "label for input 0 : [ Good ]\nLabel for Input 1: [class 1]\nLabel for Input 2: [maybe]"
    p = parse_answer(SENTIMENT, text, 3)
    assert p.labels == {0: 1} and p.missing == [1, 2]
    q = parse_answer(RTE, "Label for Sentence pair 0: [the answer is class 1]", 1)
    assert q.labels == {0: 1}


def test_reask_only_the_missing_items():
    prompts = []

    def fn(prompt):
        batch = prompt[-1]["content"]
        prompts.append(batch)
        n = batch.count("Input ")
        if len(prompts) == 1:  # first answer: item 1 and 3 missing
            return "Label for Input 0: [good]\nLabel for Input 2: [bad]"
        return "\n".join(f"Label for Input {i}: [good]" for i in range(n))

    llm = ScriptedBackend(fn)
    ledger = Ledger()
    got = ask(llm_answerer(llm), SENTIMENT, ITEMS, [10, 11, 12, 13], False, ledger)
    assert [a.label for a in got] == [1, 1, 0, 1]
    assert prompts[1] == "Input 0: s1\n\nInput 1: s3\n\n"  # only the missing, renumbered
    assert ledger.calls == 2 and ledger.reasks == 1 and ledger.asked == [[10, 11, 12, 13], [11, 13]]
    assert ledger.calls == llm.usage.as_dict()["calls"]
    assert ledger.prompt_tokens == llm.usage.as_dict()["prompt_tokens"]


def test_gives_up_after_max_reask():
    llm = ScriptedBackend(lambda p: "I cannot answer.")
    ledger = Ledger()
    got = ask(llm_answerer(llm), SENTIMENT, ITEMS[:2], [0, 1], False, ledger, max_reask=2)
    assert got == [None, None] and ledger.calls == 3 and ledger.unanswered == 2
