"""Query-biased snippets and the relevance floor (search.snippets, search.relevance)."""

from __future__ import annotations

import pytest
from cairn.search.analyzer import analyze
from cairn.search.relevance import (
    FLOOR,
    Relevance,
    named_terms,
    never_discussed,
    only_common_ground,
    query_parts,
)
from cairn.search.snippets import Shown, snippet

pytestmark = pytest.mark.unit


def test_a_short_text_is_its_own_snippet():
    assert (
        snippet("Run bun test src/ before pushing", "how do I test", 200)
        == "Run bun test src/ before pushing"
    )


def test_a_long_text_is_cut_to_the_lines_that_bear_on_the_query_in_their_order():
    text = "\n".join(
        [f"filler line number {i} about nothing" for i in range(50)] + ["$ mise run fmt → exit 0"]
    )
    text += "\n" + "\n".join(f"more filler {i}" for i in range(20)) + "\nmise trust fixed the fmt task"
    shown = snippet(text, "how do I run the fmt task with mise?", 200)
    assert "mise run fmt" in shown and "mise trust" in shown
    assert shown.index("mise run fmt") < shown.index("mise trust")
    assert len(shown) <= 200


def test_names_in_a_question_are_found_whatever_their_shape():
    assert named_terms("Did we set up Renovate or Dependabot for the CLI?") == ["renov", "dependabot", "cli"]
    assert named_terms("how do we ship it") == []


def test_a_date_in_a_question_is_when_not_what_so_it_is_no_named_thing():
    assert named_terms("What did John's teammates give him when they met on Aug 15th?") == ["john"]
    assert named_terms("What movie did Joanna watch on 1 May, 2022?") == ["joanna"]
    assert named_terms("Which error TS2307 did Node 20 print?") == ["ts2307", "node"]


def test_a_named_thing_no_candidate_mentions_means_it_was_never_discussed():
    pool = [set(analyze("Deploys use the bun CLI and a GitHub action")), set(analyze("Lint with biome"))]
    assert never_discussed("Where is Sentry configured for the CLI?", pool) == ["sentri"]
    assert never_discussed("Which CLI do deploys use?", pool) == []


def test_relevance_clears_the_floor_on_meaning_or_on_the_querys_rarer_words_and_not_on_neither():
    pool = [set(analyze(t)) for t in ("mise run test:ci runs the suite", "gofmt formats", "push the branch")]
    judge = Relevance("which command runs the CI test suite", pool)
    assert judge.score(0.6, set()) >= FLOOR
    assert judge.score(None, pool[0]) >= FLOOR
    assert judge.score(0.05, pool[2]) < FLOOR
    assert 0.0 <= judge.score(0.99, pool[0]) <= 1.0


def test_a_line_under_a_matching_heading_is_shown_with_it():
    text = "\n".join(
        [f"filler line {i} about the parser internals" for i in range(40)]
        + ["Manual test:", "1. `mkdir /tmp/test-empty && git init`", "2. `entire enable` prints a warning"]
        + [f"more filler {i}" for i in range(30)]
    )
    shown = snippet(text, "was the manual test ever carried out?", 200)
    assert "Manual test:" in shown and "/tmp/test-empty" in shown


def test_a_dotted_name_counts_as_discussed_when_its_parts_are():
    pool = [set(analyze("we call strategy.OpenRepository() and never Close() it"))]
    assert never_discussed("Does strategy.OpenRepository() need closing?", pool) == []
    assert never_discussed("Does sentry.CaptureException() need closing?", pool)


def test_a_long_text_covers_a_query_only_as_well_as_its_best_passage():
    query = "which authentication provider handles user log in sessions?"
    scattered = [set(analyze(w)) for w in ("authentication", "provider", "user", "log", "sessions")]
    pool = [set().union(*scattered)]
    judge = Relevance(query, pool)
    apart = [frozenset(t | {"filler"}) for t in scattered]
    together = [frozenset(pool[0])]
    assert judge.score(0.0, pool[0], together) > judge.score(0.0, pool[0], apart)


def test_a_prompt_of_several_sentences_is_not_refused_for_a_name_it_mentions_in_passing():
    pool = [set(analyze("We use PostgreSQL 16 for the Billing service"))]
    prompt = "Please add a retry to the HTTP client in Billing. Use PostgreSQL advisory locks if needed."
    assert never_discussed(prompt, pool) == []
    assert never_discussed("Does the HTTP client retry?", pool) == ["http"]


def test_a_long_line_is_shown_where_most_of_the_querys_words_are():
    line = "edit src/tree.ts: " + "const node = build(entry); " * 12
    line += (
        "const seenPaths = new Set(); // dedupe entries so a skill that is also a context file appears once"
    )
    text = "\n".join([line] + [f"filler {i} about rendering" for i in range(40)])
    shown = snippet(text, "which entry does the tree keep when a skill is also a context file?", 300)
    assert "seenPaths" in shown


def test_two_answers_in_one_long_line_are_both_shown_without_the_padding_between_them():
    code = "edit src/app.tsx: " + " ".join(f"const v{i} = compute({i});" for i in range(40))
    code = code.replace("const v5 =", 'if (path.startsWith(".github/skills/")) { openCopilotSkills(); }')
    code = code.replace("const v30 =", 'if (path.startsWith(".cursor/skills/")) { openCursorSkills(); }')
    text = "\n".join([code] + [f"filler {i} about layout" for i in range(30)])
    shown = snippet(text, "how are skills split between the GitHub Copilot and Cursor modals?", 320)
    assert ".github/skills/" in shown and ".cursor/skills/" in shown
    assert "v20" not in shown and len(shown) <= 320


def test_a_piece_of_a_long_line_is_read_with_the_piece_before_it():
    line = (
        "agent: That would be risky. `OpenRepository()` is called broadly across the codebase. "
        "`ValidateRepository`, `EnsureSetup`, `checkCanRewind`, `GetMetadataBranchTree` need no HEAD. "
        + "Unrelated remark about formatting and the weather today. "
        * 8
    )
    text = "\n".join([line] + [f"filler {i} about layout" for i in range(30)])
    shown = snippet(text, "why not check inside OpenRepository()?", 300)
    assert "checkCanRewind" in shown


def test_the_lines_a_matching_heading_introduces_are_shown_through_a_sub_heading_and_once_it_is_shown():
    # "slow because:" then "## The Problem": the cause is two lines down and names none of the words
    text = "\n".join(
        ["agent: The map took 107 seconds to load and is very slow because:", "## The Problem"]
        + ["The service is running a heavy background archive build:"]
        + ["- Building an archive of **42,042 tracks**", "- CPU usage: **119%**"]
        + ["agent: Let me check the map service configuration and its slow page logs:"]
        + [f"$ grep slow /var/log/map-{i}.log   # look for slow map pages" for i in range(12)]
    )
    shown = snippet(text, "why was the map so slow to load?", 300)
    assert "because:" in shown and "42,042 tracks" in shown


def test_a_heading_reaches_no_further_than_the_next_message_of_an_excerpt():
    text = "\n".join(
        ["agent thinking: the page logs show:", "1. nothing yet"]
        + ['$ ssh root@map.example.org "cat /etc/systemd/system/map.service"', "→ ok: [Unit]"]
        + [f"Environment=OPT_{i}=1" for i in range(20)]
        + ["agent: The page logs show the archive job starving the map of CPU."]
    )
    shown = snippet(text, "what do the page logs show?", 160)
    assert "starving the map" in shown and "OPT_" not in shown


def test_what_a_matching_command_printed_is_shown_with_it():
    text = "\n".join(
        [f"filler line {i} about the parser internals" for i in range(30)]
        + ['$ git commit -m "$(cat <<EOF', "Fix tree view badges", "EOF", ')"']
        + ["→ ok: $ bun test src/ && tsc --noEmit", "1274 pass"]
        + [f"more filler {i}" for i in range(30)]
    )
    shown = snippet(text, "what runs automatically when I make a git commit?", 200)
    assert "git commit" in shown and "bun test src/" in shown


def test_a_prompt_of_several_sentences_is_read_part_by_part_and_a_question_is_one_part():
    prompt = (
        "Please always use pnpm instead of npm here. We decided to go with PostgreSQL 16 for orders; "
        "what port does the payments stub use?"
    )
    assert query_parts(prompt) == [
        "Please always use pnpm instead of npm here.",
        "We decided to go with PostgreSQL 16 for orders;",
        "what port does the payments stub use?",
    ]
    assert query_parts("what port does the payments stub use?") == []
    assert query_parts("Fix it. Thanks!") == []  # a part needs words of its own


def test_a_list_whose_items_all_match_the_same_words_does_not_crowd_out_the_answer():
    items = [f"{i}. tool query_{i}: documented in the README, parameters match the code" for i in range(1, 9)]
    text = "\n".join(
        [
            "agent: Let me compare the two.",
            *items,
            "Checked all of them: 15 in all, and the title line is garbled.",
        ]
        + ["agent thinking: next I will look at the deploy workflow and the service unit files."]
    )
    shown = snippet(text, "When we checked the README against the code, how many tools were documented?", 200)
    assert "15 in all" in shown
    assert "1. tool query_1" in shown  # one item still shows what the list is
    assert len(shown) <= 200


def _deploy_log(first: int) -> str:
    """Lines `first`… of a long deploy log: two overlapping windows of it share their middle lines."""
    return "\n".join(
        f"deploy line {i}: the canary in region {i} rolled forward to build 4.{i}"
        if i % 5
        else f"filler line {i} of the log, with nothing in it about that matter at all"
        for i in range(first, first + 40)
    )


def test_a_passage_an_earlier_snippet_of_the_answer_showed_is_left_out_of_a_later_one():
    query = "which build did the canary roll forward to?"
    seen = Shown()
    first = snippet(_deploy_log(0), query, 300, seen)
    alone = snippet(_deploy_log(3), query, 300)
    second = snippet(_deploy_log(3), query, 300, seen)
    first_lines = {ln.strip("…") for ln in first.splitlines()}
    assert first_lines & {ln.strip("…") for ln in alone.splitlines()}  # the windows overlap
    # the later snippet shows all it would alone that is new, and spends the room of the rest on more
    kept = {ln.strip("…") for ln in second.splitlines() if ln.strip("…")}
    assert not kept & first_lines
    assert {ln.strip("…") for ln in alone.splitlines() if ln.strip("…")} - first_lines < kept


def test_a_later_snippet_with_nothing_new_is_only_an_ellipsis_and_a_short_line_may_repeat():
    seen = Shown()
    text = "```\n" + _deploy_log(1)[:400] + "\n```"
    first = snippet(text, "canary build", 300, seen)
    second = snippet(text, "canary build", 300, seen)  # what had no room the first time
    assert second != "…" and not set(first.splitlines()) & set(second.splitlines()) - {"```", "…"}
    assert snippet(text, "canary build", 300, seen) == "…"
    # a fence or "→ ok" costs little and keeps a later snippet readable: it is not held back
    assert "```" not in seen.passages and snippet("```\n→ ok", "canary build", 300, seen) == "```\n→ ok"


def test_a_text_shown_whole_stays_whole_and_counts_as_shown():
    seen = Shown()
    fact = "The canary in region 7 rolled forward to build 4.7"
    assert snippet(fact, "canary build", 300, seen) == fact
    later = snippet(fact + "\n" + _deploy_log(8), "which build did the canary in region 7 reach?", 300, seen)
    assert fact not in later


def _pool(*texts: str) -> list[set[str]]:
    return [set(analyze(t)) for t in texts]


# twenty memories of one project: all say "CloudFront" and "AWS"
PROJECT_POOL = _pool(*(f"CloudFront on AWS: note {n} about caching and origins" for n in range(19)), "x")


def test_hits_that_share_only_the_projects_words_are_common_ground_only():
    query = "How much did CloudFront cost on last month's AWS bill?"
    judge = Relevance(query, PROJECT_POOL)
    leading = [(frozenset(t),) for t in PROJECT_POOL[:10]]
    flat = [0.5 - 0.005 * n for n in range(20)]  # the embedding finds them all alike
    assert only_common_ground([judge], leading, PROJECT_POOL, flat)


def test_a_hit_that_holds_a_word_rare_among_the_candidates_is_more_than_common_ground():
    pool = [*PROJECT_POOL[:19], set(analyze("CloudFront on AWS returned 502 to the health check"))]
    query = "Why was the edge answering 502 bad gateway?"
    leading = [(frozenset(t),) for t in pool[-10:]]
    flat = [0.5 - 0.005 * n for n in range(20)]
    assert not only_common_ground([Relevance(query, pool)], leading, pool, flat)


def test_a_memory_the_embedding_singles_out_is_more_than_common_ground():
    query = "How much did CloudFront cost on last month's AWS bill?"
    leading = [(frozenset(t),) for t in PROJECT_POOL[:10]]
    standout = [0.7, *(0.45 - 0.005 * n for n in range(19))]
    assert not only_common_ground([Relevance(query, PROJECT_POOL)], leading, PROJECT_POOL, standout)


def test_a_passage_that_holds_much_of_the_question_is_more_than_common_ground():
    query = "What is the CloudFront cache TTL for the API on AWS?"
    pool = [*PROJECT_POOL[:19], set(analyze("The CloudFront default TTL for the API is 0 on AWS"))]
    leading = [(frozenset(t),) for t in pool[-10:]]
    flat = [0.5 - 0.005 * n for n in range(20)]
    assert not only_common_ground([Relevance(query, pool)], leading, pool, flat)
