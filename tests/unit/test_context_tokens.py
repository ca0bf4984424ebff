"""The token counter every context budget is checked with, and the agent-name folding."""

import pytest
from cairn.domain.errors import InvalidInput
from cairn.services.agents import normalise_agent
from cairn.services.tokens import count_many, count_tokens

pytestmark = pytest.mark.unit


def test_counting_is_wordpiece_without_special_tokens():
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2


def test_long_texts_are_not_truncated_at_the_models_128_tokens():
    assert count_tokens("word " * 1000) == 1000


def test_batch_counts_match_single_counts():
    texts = ["a b c", "", "Refactor the payment gateway", "x" * 50]
    assert count_many(texts) == [count_tokens(t) for t in texts]


def test_concatenating_lines_adds_their_counts():
    lines = ["- Use tabs [mem_01]\n", "## Heading\n", "- ünïcode and code `a.b()`\n"]
    assert count_tokens("".join(lines)) == sum(count_tokens(x) for x in lines)


@pytest.mark.parametrize(
    ("given", "folded"),
    [("Claude", "claude-code"), ("codex-cli", "codex"), ("gemini", "gemini-cli"), ("cursor", "cursor")],
)
def test_agent_names_fold_to_one_spelling(given, folded):
    assert normalise_agent(given) == folded


@pytest.mark.parametrize("junk", ["", "  ", "two words", "x" * 65, "../etc"])
def test_junk_agent_names_are_refused(junk):
    with pytest.raises(InvalidInput):
        normalise_agent(junk)
