"""Answer checking: the official loop's rule on a table of tricky answers whose expected
verdicts are the official functions' outputs (fixtures with provenance), and the stricter
rule on its own table."""

import pytest
from iclr24_opro.official import MC_QUESTION, fixtures
from iclr24_opro.scoring import (
    MULTILINGUAL_DELIMITERS,
    is_correct,
    normalize_prediction,
    normalize_target,
    official_correct,
    option_texts,
    strict_correct,
)

CASES = fixtures()["scoring"]


def _id(c):
    return f"{c['target']}|{c['answer'][:30]}|{'num' if c['treat_as_number'] else 'bool' if c['treat_as_bool'] else 'text'}{'|mc' if c['multiple_choice'] else ''}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_official_rule_equals_the_official_loop(case):
    """eval_utils.evaluate_single_instruction + _get_accuracy(treat_include_as_correct =
    not treat_as_number), prediction_num_decimals = 0."""
    got = official_correct(case["target"], case["answer"], treat_as_number=case["treat_as_number"],
                           treat_as_bool=case["treat_as_bool"],
                           question=MC_QUESTION if case["multiple_choice"] else "")  # fmt: skip
    want = case["official"]
    if want == "IndexError":  # an answer symbol beyond the options: the official code raises
        assert got is False
    else:
        assert got is want


@pytest.mark.parametrize("case", [c for c in CASES if "number_included_accuracy" in c], ids=_id)
def test_strict_rule_equals_number_included_accuracy(case):
    assert strict_correct(case["target"], case["answer"]) is case["number_included_accuracy"]


@pytest.mark.parametrize("case", fixtures()["normalize_prediction"], ids=lambda c: c["answer"][:30])
def test_normalize_prediction_equals_the_official_function(case):
    got = normalize_prediction(case["answer"], treat_as_number=case["treat_as_number"],
                               num_decimals=case["num_decimals"], treat_as_bool=case["treat_as_bool"])  # fmt: skip
    assert got == case["official"]


# the quirks the official rule has and the strict one does not, each stated
QUIRKS = [
    # (target, answer, flags, official, strict, why)
    ("5", "-5", {"treat_as_number": True}, True, False, "punctuation is dropped: '-5' = '5'"),
    ("2.5", "The answer is 2.5", {"treat_as_number": True}, False, True,
     "num_decimals 0: the answer is rounded to 2"),
    ("no", "I do not know", {"treat_as_number": False}, True, False, "substring rule"),
    ("positive", "The sentiment is positive, not negative", {"treat_as_number": False}, True,
     False, "substring rule"),
    ("Yes", "true", {"treat_as_bool": True}, True, True, "a yes target accepts true"),
    ("True", "yes", {"treat_as_bool": True}, False, True, "a true target does not accept yes"),
    ("valid", "invalid", {"treat_as_bool": True}, True, False, "'valid' is inside 'invalid'"),
    ("8", "The question : what is 4+4? The answer is 8", {"treat_as_number": True}, False, False,
     "the French 'Question :' cuts the answer"),
]  # fmt: skip


@pytest.mark.parametrize(
    "target, answer, flags, official, strict, why", QUIRKS, ids=[q[-1] for q in QUIRKS]
)
def test_official_and_strict_rules_on_tricky_answers(target, answer, flags, official, strict, why):
    as_num = flags.get("treat_as_number", False)
    as_bool = flags.get("treat_as_bool", False)
    assert is_correct(target, answer, treat_as_number=as_num, treat_as_bool=as_bool) is official
    assert is_correct(target, answer, scoring="strict", treat_as_bool=as_bool) is strict


def test_every_language_of_the_delimiter_table():
    assert len(MULTILINGUAL_DELIMITERS) == 11
    for lang, d in MULTILINGUAL_DELIMITERS.items():
        cut = normalize_prediction(f"7 apples. {d['Q']}how many? 9", treat_as_number=True)
        assert cut == "7", lang  # a following question is dropped
        after = normalize_prediction(f"so {d['A']}12 apples", treat_as_number=True)
        assert after == "12", lang


def test_option_texts_and_bad_rules():
    assert option_texts(MC_QUESTION) == ["west", "east", "north", "south"]
    assert normalize_target("She has 18 left. #### 18") == ("18", True, 0)
    with pytest.raises(ValueError, match="scoring"):
        is_correct("1", "1", scoring="lenient")
