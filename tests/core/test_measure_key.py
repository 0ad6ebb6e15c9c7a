"""The measure grammar, written once (`core.measure_key`): a measure is a hashable value, read
back from the key the reports write, and every reader refuses what it refused before."""

import pytest

from workbench.core.measures.measure_key import MeasureKey, parse_key, split_key
from workbench.core.measures.metrics import MEASURES, read_measure


@pytest.mark.parametrize("text", ["nDCG@10", "R@1", "MRR", "P@1000000", "text_R@5"])
def test_a_key_round_trips(text):
    assert str(parse_key(text)) == text
    assert parse_key(f"  {text} ") == parse_key(text)


def test_a_measure_is_a_hashable_value():
    keys = {parse_key("R@10"), MeasureKey("R", 10), parse_key("nDCG@010"), parse_key("MRR")}
    assert keys == {MeasureKey("R", 10), MeasureKey("nDCG", 10), MeasureKey("MRR")}
    assert {MeasureKey("R", 10): 1}[parse_key("R@10")] == 1
    assert MeasureKey.at("P", 5) == str(MeasureKey("P", 5)) == MEASURES["P"].key(5)
    assert MeasureKey.at("MRR", None) == "MRR" == MEASURES["MRR"].key(10)


@pytest.mark.parametrize("cutoff", ["0", "x", "", "-1", "1.5", "١٠"])
def test_a_bad_cutoff_is_refused_with_one_message(cutoff):
    with pytest.raises(ValueError, match=f"the cutoff {cutoff!r} must be an integer >= 1"):
        parse_key(f"R@{cutoff}")
    with pytest.raises(ValueError, match=f"the cutoff {cutoff!r} must be an integer >= 1"):
        read_measure(f"R@{cutoff}")


def test_split_key_checks_nothing():
    assert split_key(" nDCG@010 ") == ("nDCG", "010")
    assert split_key("MRR") == ("MRR", None)
    assert split_key("R@") == ("R", "")


def test_the_registry_reads_through_the_grammar():
    measure, cutoff = read_measure("ndcg@010")
    assert (measure.name, cutoff) == ("nDCG", 10)
    assert read_measure("mrr") == (MEASURES["MRR"], None)
    with pytest.raises(ValueError, match="unknown measure 'foo'"):
        read_measure("foo@x")  # the name is checked before the cutoff, as before
    with pytest.raises(ValueError, match="MRR takes no cutoff: write MRR"):
        read_measure("MRR@x")


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("R@10 :0.1", "expected MEASURE@K:WIDTH"),
        ("R @10:0.1", "expected MEASURE@K:WIDTH"),
        ("R@10:0.1:2", "expected MEASURE@K:WIDTH"),
        ("R@1@0:0.1", "expected MEASURE@K:WIDTH"),
        ("R@:0.1", "expected MEASURE@K:WIDTH"),
        ("R@10:", "expected MEASURE@K:WIDTH"),
        ("MRR@10:0.1", "a study interval is given for R, P, nDCG only"),
        ("R@0:0.1", "the cutoff must be between 1 and 1000000"),
        ("R@10:1.5", "the width must be in"),
    ],
)
def test_the_target_reads_the_same_grammar_and_refuses_as_before(spec, why):
    from workbench.core.study import parse_target

    with pytest.raises(ValueError, match=f"--target '{spec}': {why}"):
        parse_target(spec)


def test_a_target_carries_its_measure():
    from workbench.core.study import parse_target

    target = parse_target(" ndcg@10:.05 ")
    assert (target.key, target.width, target.k) == ("nDCG@10", 0.05, 10)
    assert target.measure == MeasureKey("nDCG", 10)
    assert str(target) == "nDCG@10:0.05"
