"""Whether a text reads as instructions to an agent: the wording half of the trust gate (`trust`).

- `directive`: the cue by which a text reads as instructions to an agent, or None: generic cues of text
  addressed to an AI/agent/assistant ("ignore previous instructions", "never ask the user", hidden
  markers…), and an instruction to take a step a person guards (turn checks or review off, push to a
  shared branch, run as root, install from another package source, turn TLS verification off, hand a
  secret over, delete the lock file, change production directly), asked for rather than described,
  forbidden or questioned;
- `asks` / `asking_lines`: whether a sentence asks its reader for anything at all (a modal, a retold
  request, an order at the start of a clause, a forbidding), whatever it asks: a tool's line that asks is
  no data;
- `prose_lines`: the lines that are someone's sentences rather than data (results, test names, paths,
  diagnostics), counted in words of any script, so the test holds in every language: whatever wording a
  page uses to instruct, and however declarative ("tags are created straight from develop"), it is prose;
  of a document (a page, another server's answer, a file outside the repository) every line is, but
  for the lines that read as data (numbers, paths, names, keys, a word or two), whatever frames its
  words;
- `relayed_directive`: the cue by which the agent's own words pass an instruction on ("the page says to
  …"), and `relayed` / `retelling_lines`: the agent's words that say they retell a page, a thread or a
  sub-agent ("their docs say …"), which are that text's, not the agent's.

`trust` decides from these and a memory's provenance what may be shown unasked. The cues of `directive`
and `relayed_directive` name what a text reads as, for recall's label and the stored provenance; the
structural tests (`asks`, `prose_lines`, `retelling_lines`) are what keeps unseen wordings out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from unicodedata import east_asian_width

from cairn.domain.text import FULL_STOPS, LETTER, UNSPACED, token_words, word_count
from cairn.search.analyzer import analyze
from cairn.services.shown_text import QP_RUN, visible

_AGENT = (
    r"(?:ai|a\.i\.|llms?|large language models?|language models?"
    r"|(?:ai |coding |autonomous |automated )?agents?|(?:ai |coding |automated )?assistants?|chat ?bots?"
    r"|claude|copilot|codex|gemini|cursor|chatgpt|gpt(?:-\d)?)"
)
# each cue: (name, pattern); generic phrasings of instructions aimed at an agent, never a project's words
CUES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.I | re.M))
    for name, pattern in (
        (
            "addressed to an AI agent",
            rf"\b(?:note|notice|message|instructions?|attention|warning|reminder|directive)s?\s+(?:for|to)\s+"
            rf"(?:all\s+|any\s+)?(?:the\s+)?{_AGENT}\b",
        ),
        ("addressed to an AI agent", rf"\bif\s+you\s+are\s+(?:an?\s+)?{_AGENT}\b"),
        ("addressed to an AI agent", rf"\b(?:dear|hey|attention)\s+{_AGENT}\b"),
        (
            "addressed to an AI agent",
            rf"^\W*{_AGENT}\s*[:,]\s*(?:you\s+(?:must|should|will)|always|never|ignore|do\s+not|don'?t)\b",
        ),
        (
            "ignore previous instructions",
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|preceding|original|existing|system|other)\s+"
            r"(?:instructions?|prompts?|rules|directions|guidelines|guardrails|context)",
        ),
        (
            "keep the user out",
            r"\b(?:never|don'?t|do\s+not|without)\s+(?:ever\s+)?(?:ask(?:ing)?|tell(?:ing)?|inform(?:ing)?"
            r"|notify(?:ing)?|consult(?:ing)?|confirm(?:ing)?\s+with|check(?:ing)?\s+with|alert(?:ing)?"
            r"|mention(?:ing)?\s+(?:this|it)\s+to)\s+the\s+(?:user|human|developer|operator)\b",
        ),
        (
            "remember for future sessions",
            r"\b(?:remember|memori[sz]e|store|save|keep|persist)\s+(?:this|that|these|the\s+following)\b[^.\n]{0,60}"
            r"\b(?:all\s+|every\s+)?(?:future|subsequent|later|next|upcoming)\s+(?:sessions?|conversations?|"
            r"tasks?|runs?|chats?)",
        ),
        (
            "remember for future sessions",
            r"\b(?:add|write|save|store)\s+(?:this|that|the\s+following)\s+(?:to|in|into)\s+(?:your\s+)?"
            r"(?:long[- ]term\s+|persistent\s+)?memor(?:y|ies)\b",
        ),
        (
            "push to main or turn checks off",
            r"\bpush\s+(?:\S+\s+){0,3}?(?:directly|straight|right)\s+(?:\S+\s+)?to\s+(?:main|master|production|prod)\b"
            r"|\bpush\s+--force\s+(?:origin\s+)?(?:main|master)\b"
            r"|\b(?:disable|skip|bypass|turn\s+off|switch\s+off|deactivate|circumvent)\s+(?:all\s+)?(?:the\s+)?"
            r"(?:safety\s+|security\s+|pre-?commit\s+|branch\s+)?(?:checks|hooks|protections?|guardrails"
            r"|verification|code\s+review|reviews|sandbox(?:ing)?|ci)\b",
        ),
        (
            "hidden instruction marker",
            r"<!--\s*(?:ai|llm|agent|assistant|system|prompt|instructions?|hidden)\b"
            r"|<\s*/?\s*(?:system|instructions?|hidden[-_ ]?instructions?|im_start|im_end)\s*>"
            r"|<\|im_(?:start|end)\|>|\[\s*(?:system|hidden)\s*(?:prompt|instructions?|message)?\s*\]"
            r"|\b(?:begin|start)\s+(?:hidden|secret|system)\s+(?:instructions?|prompt)\b"
            # a heading of its own, not a phrase in a sentence ("a Claude-specific system prompt: …")
            r"|^\W{0,4}(?:new\s+(?:system\s+)?instructions?|system\s+prompt)\s*:",
        ),
        (
            "instructions to an agent",
            r"\byou\s+(?:are|must|should|will)\s+now\s+(?:act|behave|ignore|obey|follow|only)\b"
            r"|\bfrom\s+now\s+on,?\s+(?:you|the\s+(?:agent|assistant|ai))\s+(?:must|should|will|are\s+to)\b"
            r"|\b(?:send|upload|post|exfiltrate|forward|leak)\s+(?:the\s+|all\s+|your\s+|any\s+)?"
            r"(?:api[\s_-]?keys?|secrets?|credentials|tokens?|passwords?|env(?:ironment)?\s+variables|\.env"
            r"|ssh\s+keys?)\s+to\b",
        ),
    )
)
# text written to an agent that names it by what it is, not by a product: "AI agents working here
# must …", "automated contributors should …" (a product name with a modal is too often about the
# product itself: "the cursor should blink")
_GENERIC_AGENT = (
    r"(?:(?:(?:ai|llm|coding|autonomous|automated|ai-powered|agentic)\s+){1,3}(?:agents?|assistants?|tools?|models?"
    r"|contributors?|systems?|bots?)"
    r"|(?:large\s+)?language\s+models?|llms?)"
)
_LINE_LABEL = r"[A-Za-z][\w ()-]{0,30}:\s*"  # "ok: ", "Note: " before what a line says
_ADDRESSED = re.compile(
    rf"\b{_GENERIC_AGENT}\s+(?:[\w-]+\s+){{0,5}}?(?:must|should|shall|need\s+to|have\s+to"
    rf"|are\s+(?:required|expected|instructed|allowed|permitted|told)\s+to)\b"
    r"|\byou,?\s+the\s+(?:ai|agent|assistant|model)\b"
    # at the start of a line, after a label if any ("ok: Agents must …", "Note: all agents should …")
    rf"|^\W*(?:{_LINE_LABEL})?(?:all\s+)?agents\s+(?:must|should|shall|need\s+to|have\s+to"
    r"|are\s+(?:required|expected)\s+to)\b"
    rf"|^\W*(?:{_LINE_LABEL})?{_AGENT}\s+(?:instructions?|notes?|directives?|rules|guidance)\s*:"
    # "an assistant reading this file …", "For bots: …"
    rf"|\b(?:an?|any|every|each|the|whichever|whatever)\s+(?:ai\s+)?(?:agents?|assistants?|models?|bots?"
    rf"|{_GENERIC_AGENT})\s+(?:that\s+|who\s+)?(?:reads?|reading|process(?:es|ing)?|pars(?:es|ing)|sees?|seeing"
    r"|summari[sz](?:es|ing))\s+(?:this|these)\b"
    rf"|^\W*(?:{_LINE_LABEL})?(?:for|to|attention)\s+(?:[\w-]+\s+){{0,2}}?(?:bots?|agents?|assistants?"
    rf"|{_GENERIC_AGENT})\b[^:\n]{{0,30}}[:,—–-]"
    rf"|(?:^\W*(?:{_LINE_LABEL})?|:\s+\W*){_GENERIC_AGENT}\s*:",
    re.I | re.M,
)
# zero-width characters in a row, or Unicode tag characters, hide text from a person reading it (a lone
# byte-order mark starts every line of some CI logs: that is no marker)
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff]{3,}|[\U000e0000-\U000e007f]")

# --- an instruction to take a step a person guards -------------------------------------------------
# Each step is named by what it does, in the words of the tools that do it (flags, variables, verbs),
# never by a project's words. On its own such a step is data (a log echoes `sudo apt-get install`, a
# man page describes `--no-verify`); asked for, it is an instruction.
_CONFIDENTIAL = (
    r"(?:\.env\b|\benv(?:ironment)?\s+(?:file|variables|vars)\b|\bapi[\s_-]?keys?\b|\bsecrets?\b"
    r"|\bcredentials?\b|\b(?:access\s+|auth\s+|api\s+|deploy\s+)?tokens?\b|\bpasswords?\b|\bprivate\s+keys?\b"
    r"|\b(?:customer|user|client|personal|patient|production|prod)\s+(?:[\w-]+\s+)?(?:data|records|csv|dump"
    r"|database|db|e-?mails?|pii)\b"
    r"|\bssh\s+keys?\b|\.ssh\b|\bid_(?:rsa|ed25519)\b|\.npmrc\b|\.pypirc\b|\bkubeconfig\b|\.aws/credentials)"
)
_HAND_OVER = (
    r"(?:send|upload|post|paste|share|attach|e-?mail|forward|submit|leak|exfiltrate|publish|include)"
    r"(?:s|ed|d|ing)?"
)
_RISKY: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        (
            "asks to turn checks or review off",
            r"--no-verify\b|\bHUSKY=0\b|\bSKIP=\S|\[skip ci\]"
            r"|\b(?:skip(?:s|ped|ping)?|disabl(?:e|es|ed|ing)|bypass(?:es|ed|ing)?|ignor(?:e|es|ed|ing)"
            r"|turn(?:s|ed|ing)?\s+off"
            r"|switch(?:es|ed|ing)?\s+off|deactivat(?:e|es|ed|ing)|circumvent(?:s|ed|ing)?|get(?:s|ting)?\s+(?:past"
            r"|around)|work(?:s|ing)?\s+around)\s+(?:[\w-]+\s+){0,3}?"
            r"(?:checks?|hooks?|tests?|suites?|ci|\w*lint(?:ers?|ing)?|reviews?|approvals?|verification|signing"
            r"|protections?|guardrails|sandbox(?:ing)?|safety|scanners?|scans?|audits?|polic(?:y|ies)|gates?"
            r"|firewalls?|antivirus|pipelines?|workflows?)\b"
            # the head of what is skipped, not a word before it: "skip the test build failures" skips failures
            r"(?!\s+(?:build|failures?|errors?|results?|files?|cases?|names?|data|output|logs?|reports?"
            r"|fixtures?|helpers?|coverage|timeouts?|warnings?)\b)"
            r"|\bwithout\s+(?:a\s+|any\s+)?(?:review|approval|tests?|testing|checks?|asking|confirmation)\b"
            r"|\bwithout\s+(?:open|creat|ask|wait|request)\w*\s+(?:for\s+)?(?:a\s+|any\s+)?(?:prs?|pull\s+requests?"
            r"|merge\s+requests?|reviews?|approvals?)\b"
            r"|#\s*noqa\b|\beslint-disable\b|@ts-(?:ignore|nocheck)\b|//\s*nolint\b|#\s*type:\s*ignore\b"
            r"|\bgit\s+commit\b[^\n|;]*?\s-n\b|--no-gpg-sign\b|-auto-approve\b|\bself-(?:merg|approv)\w*"
            r"|\bmark\w*\s+(?:the\s+)?(?:[\w-]+\s+){0,2}?tests?\s+as\s+(?:skipped|xfail|expected\s+to\s+fail|flaky)\b"
            r"|\b(?:merg|push|ship|deploy|releas|land)\w*\s+(?:it\s+|them\s+|this\s+)?anyway\b"
            r"|\b(?:don'?t|do\s+not|no\s+need\s+to|never)\s+(?:bother\s+(?:to\s+)?)?(?:run|wait\s+for|use)\s+(?:the\s+)?"
            r"(?:[\w-]+\s+){0,2}?(?:tests?|test\s+suites?|checks?|hooks?|linters?|ci|reviews?)\b"
            r"|\b(?:approv|merg)\w*\s+(?:and\s+\w+\s+)?your\s+own\s+(?:prs?|pull\s+requests?|merge\s+requests?|changes?)\b"
            r"|\bno\s+(?:review|approval|tests?|checks?|confirmation|prs?|pull\s+requests?|merge\s+requests?)\s+"
            r"(?:is\s+|are\s+)?(?:needed|required"
            r"|necessary)\b",
        ),
        (
            "asks to push to a shared branch or rewrite history",
            r"\bpush(?:es|ed|ing)?\b[^.\n;]{0,40}?\b(?:main|master|production|prod|trunk)\b(?!\s*(?:->|\.\.))"
            r"|\b(?:merg|commit|land|go|goes|ship|deploy)\w*\s+(?:\S+\s+){0,3}?(?:straight|directly|right)\s+"
            r"(?:in|on)?to\s+(?:the\s+)?"
            r"(?:main|master|production|prod|trunk)\b"
            r"|\bpush\s+(?:\S+\s+){0,4}?(?:-f|--force(?:-with-lease)?)\b|\bforce[- ]push(?:es|ed|ing)?\b"
            r"|\breset\s+--hard\s+origin\b|\bfilter-(?:branch|repo)\b|\brewrit(?:e|es|ing)\s+(?:the\s+)?(?:git\s+)?history\b",
        ),
        (
            "download piped to a shell",
            r"\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b[^\n|;]{0,300}\|\s*(?:sudo\s+)?(?:-\S+\s+)*"
            r"(?:ba|z|da|k|fi)?sh\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\|\s*(?:iex|invoke-expression)\b",
        ),
        (
            "asks to run as root",
            r"\bsudo\s+(?!-[lkKv]\b)[\w/.-]|\bas\s+(?:the\s+|an\s+)?(?:root|admin(?:istrator)?)\b"
            r"|\bwith\s+(?:admin(?:istrator)?|root|elevated|sudo|superuser)\s+(?:rights|privileges|permissions|access)\b"
            r"|\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx|o\+w)\b|--allow-root\b|--unsafe-perm\b"
            r"|\bSet-ExecutionPolicy\s+(?:Unrestricted|Bypass)\b",
        ),
        (
            "asks to install from another package source",
            r"--(?:extra-)?index-url\b|--trusted-host\b|--registry\b|\bregistry\s*=\s*\S"
            r"|\bconfig\s+set\s+(?:[\w@-]+:)?(?:registry|global\.(?:extra-)?index-url)\b"
            r"|\bpoint(?:s|ed|ing)?\s+(?:npm|pip|yarn|pnpm|uv|poetry|cargo|gem|go|bun|composer|nuget)\s+(?:at|to)\s+https?://"
            r"|\b(?:PIP_(?:EXTRA_)?INDEX_URL|UV_(?:EXTRA_)?INDEX_URL|NPM_CONFIG_REGISTRY|GOPROXY|GONOSUMDB"
            r"|GONOSUMCHECK|GOINSECURE|GOSUMDB=off|GOFLAGS=-insecure)\b"
            r"|\b(?:index|registry|feed|mirror)\s*(?:at|on|from|:|=)\s*https?://"
            r"|\bas\s+(?:the\s+|your\s+)?(?:npm\s+|pip\s+|python\s+|package\s+)?(?:registry|index)\b"
            r"|\b(?:another|alternative|alternate|private|internal|custom|different|third-party|unofficial|our|proxy"
            r"|corporate|company|mirror(?:ed)?)\s+"
            r"(?:package\s+|python\s+|npm\s+|pypi\s+)?(?:index|registry|feed|mirror)\b|\bmirror\s+(?:at|on)\s+https?://"
            r"|\b(?:pip3?|npm|yarn|pnpm|gem|cargo|uv|poetry|bun)\s+(?:install|add|i)\b[^\n;|]{0,80}?(?:https?://|git\+)",
        ),
        (
            "asks to turn TLS verification off",
            r"NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0|GIT_SSL_NO_VERIFY|PYTHONHTTPSVERIFY\s*=\s*0"
            r"|--no-check-certificate\b|--insecure\b|\bverify\s*=\s*False\b|\bsslVerify\s*(?:=|\s)\s*false\b"
            r"|\bstrict-ssl\s*(?:=|\s)\s*false\b"
            r"|\b(?:disabl(?:e|ing)|turn(?:ing)?\s+off|skip(?:ping)?|ignor(?:e|ing)|bypass(?:ing)?)\s+(?:the\s+)?"
            r"(?:ssl|tls|https|certificate|cert)\b",
        ),
        (
            "asks to hand a secret over",
            # "paste your whole .env file", "the token, pasted into …", "keep the token in the issue"
            rf"\b{_HAND_OVER}\b[^.;\n]{{0,50}}?{_CONFIDENTIAL}"
            rf"|{_CONFIDENTIAL}[^.;\n]{{0,40}}?\b(?:sent|uploaded|posted|pasted|shared|attached|included|forwarded"
            rf"|e-?mailed|submitted|published)\b"
            rf"|{_CONFIDENTIAL}[^.;\n]{{0,40}}?\bin(?:to)?\s+(?:the\s+|a\s+|an\s+|your\s+)?(?:issue|comment|ticket"
            rf"|channel|chat|description|gist|forum|discussion|pr|pull\s+request|public)\b",
        ),
        (
            "asks to delete a lock file or data",
            r"\b(?:delet(?:e|es|ing)|remov(?:e|es|ing)|rm|wip(?:e|es|ing)|drop(?:s|ping)?|truncat(?:e|es|ing)"
            r"|regenerat(?:e|es|ing)|discard(?:s|ing)?)\b(?:\s+-\w+)*[^.\n;]{0,30}?(?:\block\s*files?\b"
            r"|\b[\w-]+\.lock\b|\bpackage-lock\.json\b|\bnpm-shrinkwrap\.json\b|\bgo\.sum\b"
            r"|\b(?:the\s+)?(?:production\s+|prod\s+)?(?:database|db)\b|\s\.git\b)"
            r"|\brm\s+-(?:rf|fr|r)\s+(?:/|~|\$HOME)(?:\s|$)|\bgit\s+clean\s+-\w*[fd]\w*[fd]"
            r"|\b(?:database|db)\s+(?:reset|wipe|drop|purge|truncat)\w*",
        ),
        (
            "asks to change production directly",
            r"\b(?:to|on|against|in)\s+(?:the\s+)?(?:production|prod)\b[^.\n]{0,40}?\b(?:directly|yourself"
            r"|right\s+away|straight\s+away|without)\b"
            r"|\b(?:directly|straight|right\s+away|yourself)\b[^.\n]{0,25}?\b(?:to|on|against|in)\s+(?:the\s+)?"
            r"(?:production|prod)\b|--(?:database|env(?:ironment)?|target|stage)[= ](?:prod|production)\b"
            r"|\b(?:reset|wip|drop|truncat|purg|delet)\w*\b[^.\n]{0,40}?\b(?:on|against|in)\s+(?:the\s+)?(?:production"
            r"|prod|live\s+(?:servers?|sites?|database|db|environment|systems?|cluster))\b",
        ),
    )
)
# the words that make a sentence ask for what it names: a modal, a retelling of someone's instruction,
# "the fix is to …", or an imperative at the start of the sentence or of one of its clauses
_OBLIGED = re.compile(
    r"\b(?:must|should|shall|ought\s+to|needs?\s+to|ha(?:ve|s)\s+to|(?:is|are)\s+(?:required|expected|supposed"
    r"|meant)\s+to|make\s+sure|be\s+sure|don'?t\s+forget|remember\s+to|(?:it'?s|it\s+is)\s+(?:best|recommended"
    r"|required|necessary|safe|fine|ok(?:ay)?)\s+to|can\s+(?:safely\s+|just\s+|simply\s+)?(?:go|be\s+\w+ed)"
    # leave granted: "contributors may push …", "feel free to …"
    r"|(?:you|contributors?|developers?|agents?|anyone|everyone|we|maintainers?|bots?|assistants?)\s+(?:may|can"
    r"|could|are\s+(?:allowed|free|permitted|welcome)\s+to)|feel\s+free\s+to"
    r"|(?:fix|way|solution|workaround|remedy|answer|step)\b[^.\n]{0,50}?\b(?:is|was)\s+to)\b",
    re.I,
)
_ASKED = re.compile(
    r"\b(?:says?|said|tells?|told|asks?|asked|wants?|wanted|recommends?|recommended|suggests?|suggested"
    r"|instructs?|instructed|requires?|advises?|advised|insists?|directs?|urges?|expects?|prescribes?"
    r"|calls\s+for|instructions?|recommendations?|advice)\b",
    re.I,
)
# verbs a sentence of instructions starts with, commands among them (`sudo …`, `git push …`)
_VERBS = """
accept add allow append apply approve attach authenticate backup bash build bump call cargo carry cd
change checkout chmod chown clean clear clone commit configure copy create curl delete deploy
disable download drop edit email enable ensure execute export fetch flag force format forward
generate git give go grant hand ignore import include inject install invoke keep kill land launch
lint log login make mark merge migrate modify move npm npx open override pass paste pin pip pip3
pipe pnpm poetry point post prefer print provide publish pull purge push put rebase regenerate
register reinstall reload remove rename replace reset restart restore revert rewrite rm run save
send set sh share ship skip source squash start stop submit sudo supply switch tag terminate test
trust try turn uninstall unset update upgrade upload use uv wget wipe write yarn
"""
_IMPERATIVE = frozenset(_VERBS.split())

_LEAD = re.compile(
    r"^(?:[-*•>#\d.)\s]+|\[[ xX]\]\s+|\*\*|__|`\$\s*|\$\s+"  # list marks, a task's box, emphasis, a prompt
    r"|[A-Z][\w '’()./@-]{0,40}:\s+"  # a label: "Maintainer note: ", "Known issue 12: "
    r"|(?:always|also|then|first|next|now|just|simply|please|and|finally|instead|afterwards|so)\b[,\s]*"
    r"|(?:to|if|when|whenever|before|after|once|for|on|in)\b[^,]{0,80},\s*)+",
    re.I,
)
# a clause ends at a stop of punctuation, at "and then", or where a terse note breaks its line with a
# separator between spaces (an arrow, a dash, ">>", "::", a bullet): "flaky on forks -> set X = 0", "ships
# silently - skip the changelog" give their order after it as a sentence does after a colon. Not a pipe
# or a redirection: "curl … | sh" in a hook's message names a command line, it orders nothing
_CLAUSE = re.compile(
    r"[;:,]\s+|\s+(?:and(?:\s+then)?|then|or)\s+|\s+(?:-{1,2}>|=>|~>|[→⇒•–—-]|>>|::)\s+", re.I
)
_NEGATED = re.compile(
    r"\b(?:never|not|no|don'?t|doesn'?t|didn'?t|won'?t|can'?t|cannot|shouldn'?t|mustn'?t|avoid(?:s|ing)?"
    r"|instead\s+of|rather\s+than|refus(?:e|es|ed)|forbid(?:s|den)?|prohibit(?:s|ed)?)\b",
    re.I,
)
_CLAUSE_BREAK = re.compile(r"[;:,]\s+|\s+(?:and|but|then|so)\s+", re.I)


def _negated(before: str) -> bool:
    """Whether the clause that ends where a step is named forbids it ("never push to main"); a clause
    before it does not ("don't wait, push to main")."""
    return bool(_NEGATED.search(_CLAUSE_BREAK.split(before)[-1]))


_ITEM = re.compile(r"^\s*(?:[-*•>]|\d+[.)]|#{1,6})\s")  # not `+ `: a shell's trace of a command
# a sentence ends at a stop and a space, or at a full stop of a script written without spaces (。！？)
_SENTENCE_END = re.compile(rf"(?<=[.!?])[\"')\]]*\s+(?=\S)|(?<=[{FULL_STOPS}])[」』）]*\s*(?=\S)")


# a line of code or configuration, not prose: a comment, braces, a statement's end, an operator (an arrow
# between two words, `a -> b`, is a note's "then", `_CLAUSE`), a call (a name in ASCII before its
# parenthesis: a word of a language that sets its parentheses on the word, "공지(승인번호 …)", is prose's);
# code in backticks is prose's
_CODE_LINE = re.compile(
    r"^\s*(?://|/\*|\*\s|--\s|<\?)|[{}]|;\s*$|:=|=>|\S->|->\S|[=!]=|[A-Za-z0-9_$]\("
    r"|^\s*[0-9a-f]{7,40}\s"  # a listing's record (`git log --oneline`): commit subjects are imperatives
    r"|^\s*(?:defines|note):\s"  # what a file's comments say (`pipeline.steps.documented_names`)
)
# a key and its value (YAML, a front matter, a config listing); a value of a few words is a setting
# (`on: push:`, `branches: [main]`; a label of prose is capitalised: "Setup: run …")
_SETTING = re.compile(r"^\s*-?\s*[a-z][\w.-]*:\s*(.*?)\s*$")
SETTING_WORDS = 3
_TICKED = re.compile(r"`[^`\n]*`")
_RECORD = re.compile(r"^\W*[0-9a-f]{7,40}\b")
# a string in code or JSON that holds prose (an issue's body, a report an API returned)
_PROSE_STRING = re.compile(r'"[\w .-]{1,40}"\s*:\s*"((?:[^"\\]|\\.){20,})"')  # a JSON key's value
PROSE_STRING_CHARS = 20


def _decoded(literal: str) -> str:
    """A JSON string's text, its escapes read (`\\u904b` is 運, `\\"` a quote); as it is when it is no
    valid JSON string."""
    try:
        return json.loads(f'"{literal}"')
    except ValueError:
        return literal


def _prose_strings(line: str, depth: int = 3) -> list[str]:
    """The JSON strings of a line that hold words: every string of a line that is a JSON document (a
    notebook's cells, an array's items too), else each key's value (`_PROSE_STRING`); a document held in
    such a string is read too: an API often returns JSON whose field is JSON again (`"description":
    "{\\"guidance\\": \\"set X in production …\\"}"`), and its words are someone's as much."""
    document = _json_document(line)
    if document is not None:  # a whole JSON document: every string in it, an array's items included
        return [t for x in _strings(document) for t in (_prose_strings(x, depth - 1) if depth else ()) or [x]]
    found: list[str] = []
    for literal in _PROSE_STRING.findall(line):
        text = _decoded(literal)
        inner = _prose_strings(text, depth - 1) if depth and '"' in text else []
        found.extend(inner or [text])
    return found


def _json_document(line: str) -> object | None:
    """`line` read as a JSON object or array (a notebook's cells, an API's answer on one line), after
    what a transcript excerpt puts before a tool's output ("→ ok: "), or None."""
    line = line.strip()
    start = _JSON_START.search(line)
    if start is None or line[-1:] not in "}]":
        return None
    try:
        return json.loads(line[start.end() :])
    except ValueError:
        return None


_JSON_START = re.compile(r"^[^{\[\w\"]{0,4}(?:(?:ok|error|exit -?\d+):\s*)?(?=[{\[])")


PREAMBLE_LINES = 12  # what may come before an output's JSON: the command echoed, a status line, headers


def json_strings(text: str, depth: int = 3) -> list[str] | None:
    """The strings that hold words of `text` read as one JSON document (`_json_document`: an MCP
    server's answer, a notebook), or None when it is none. A document after a few lines of preamble
    (`$ gh api …` echoed, `curl -i`'s status line and headers) is read the same, its preamble's lines
    first: an issue's body is one JSON line of escaped paragraphs, which no line of the output shows.
    A string that holds such a document is read as one too (a tracker's MCP server answers with JSON
    whose description is an API's answer pasted in)."""
    lines = text.splitlines()
    opening = (i for i, line in enumerate(lines[:PREAMBLE_LINES]) if line.lstrip()[:1] in ("{", "["))
    start = next(opening, None)
    document = None if start is None else _json_document("\n".join(lines[start:]))
    if document is None:
        return None
    out = [line for line in lines[:start] if line.strip()]
    for string in _strings(document):
        inner = json_strings(string, depth - 1) if depth else None
        out.extend([string] if inner is None else inner)
    return out


def strings_read(text: str) -> str:
    """`text` with each line that holds a JSON string of escaped lines (`"body": "…\\n\\n**Heads-up
    …**"`) read as those lines: an output that is no JSON document on its own (a harness's note around
    it, a log line before it) still holds an issue's body on one line, its paragraphs escaped."""
    out: list[str] = []
    for line in text.splitlines():
        strings = [x for x in _prose_strings(line) if "\n" in x] if "\\n" in line else []
        out.extend([line] if not strings else [part for x in strings for part in x.splitlines()])
    return "\n".join(out)


def _strings(value: object) -> list[str]:
    """The strings of a JSON value that hold words (PROSE_STRING_CHARS or more), keys aside."""
    if isinstance(value, str):
        return [value] if len(value) >= PROSE_STRING_CHARS else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# where a comment (or a `* ` list item, which opens a line as a comment's continuation does) starts, with
# its tag (`TODO(ana):`, `NOTE:`): what follows is someone's words, read as any other line
# (commented-out code stays code)
_COMMENT = re.compile(r"^\s*(?://+|/\*+|\*+(?=\s)|--(?=\s)|<!--)\s*(?:[A-Z]{2,}(?:\([^)\n]*\))?:\s*)?")
_COMMENT_END = re.compile(r"\s*(?:\*/|-->)\s*$")


def _uncommented(line: str) -> str:
    """A comment's words without the marks that open and close it; any other line as it is."""
    return _COMMENT_END.sub("", _COMMENT.sub("", line, count=1)) if _COMMENT.match(line) else line


# a comment inside a line of markup or code (`<svg …><!-- build note: … --></svg>`, `x = 1; /* … */`)
_INLINE_COMMENT = re.compile(r"<!--(.*?)-->|/\*(.*?)\*/")


def _inline_comments(line: str) -> list[str]:
    """The words of the comments a line holds after something else (a line that is a comment is
    `_uncommented`'s)."""
    if _COMMENT.match(line):
        return []
    return [(a or b).strip() for a, b in _INLINE_COMMENT.findall(line) if (a or b).strip()]


_NAMED_CALL = re.compile(r"\b(\w+)\(\)")  # `up()` in "write up() only": a function named, as `up` would be


# a package pinned to its version, as a requirements file or a note names it (`cryptography==3.3.2`): a
# name, not a comparison
_PINNED = re.compile(r"(?<=[\w\]])[~=!]=v?\d+\.\d[\w.*+-]*")
# a call with its arguments, as a sentence names it
_CALL = re.compile(r"[@\w.]+\([^()\n]*\)")


def is_code(line: str) -> bool:
    """Whether a line is code or configuration (`_code`)."""
    return _code(line)


def _code(line: str) -> bool:
    """Whether a line is code or configuration (`_CODE_LINE`, or a key with a value of a few words:
    `name: cairn`, `title: 検索の調整`); a function named in words ("write up() only and delete the
    down() stub"), a package's pin ("pin cryptography==3.3.2 in requirements.txt") or a call a long
    sentence names does not make a line code."""
    line = _PINNED.sub("x", _NAMED_CALL.sub(r"\1", _TICKED.sub("x", line)))
    if _CALL.search(line) and _words(line) >= 2 * PROSE_WORDS:  # code has few words of prose
        line = _CALL.sub("x", line)  # a sentence that names a call ("… ask to put skip(reason=…) on …")
    if _CODE_LINE.search(line):
        return True
    setting = _SETTING.match(line)
    # words, not tokens: a sentence in a script written without spaces is one token (`summary: 再現…`)
    return setting is not None and word_count(setting.group(1)) <= SETTING_WORDS


def _sentences(text: str, comments: bool = False) -> list[str]:
    """`text`'s sentences of prose: a blank line, a list item, a heading or a line of code starts a new
    one, a line wrapped mid-sentence does not; a line of code is no sentence, though a string in it
    that holds words (JSON's) is read as prose. With `comments`, so is a comment's text: whether a
    tool's text asks anything of its reader (`asking_lines`) is read in its comments too, while its
    guarded steps (`directive`) are not: "// Send the reset token to the user's email" says what the
    code does."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if comments and (inline := _inline_comments(line)):
            blocks.extend([c] for c in inline)
            blocks.append([])
        if comments and _COMMENT.match(line):
            line = _uncommented(line)
            blocks.append([])
        code = _code(line)
        if not line.strip() or _ITEM.match(line) or code:
            blocks.append([])
        if line.strip() and not code:
            blocks[-1].append(line.strip())
        elif code:
            for literal in _prose_strings(line):
                if len(literal.split()) >= 4:
                    blocks.extend([piece.strip()] for piece in literal.splitlines() if piece.strip())
                    blocks.append([])
    sentences = (s for b in blocks if b for s in _SENTENCE_END.split(" ".join(b)))
    # a list of commits in a line ("`573f7d14` Update notes; `43807ae1` feat: submit …") is records
    return [
        r for s in sentences if (r := "; ".join(p for p in s.split("; ") if not _RECORD.match(p))).strip()
    ]


def _mood(sentence: str) -> tuple[bool, list[str]]:
    """Whether `sentence` asks for something (a modal, a retold instruction, an imperative at the start
    of it or of one of its clauses: `Run …`, `… and push …`), and the commands it gives to run as the
    start of a clause (`` `sudo npm i -g x` first``; "`make` failed with …" names a command, it does
    not give one: the step must be in it)."""
    if _OBLIGED.search(sentence) or _ASKED.search(sentence):
        return True, []
    commands: list[str] = []
    for clause in [sentence, *_CLAUSE.split(sentence)]:
        clause = _LEAD.sub("", clause.strip())
        if clause.startswith("`"):
            commands.append(clause[: clause.find("`", 1) + 1])
            continue
        word = re.match(r"[A-Za-z][\w-]*", clause)
        # "force-push" is two verbs; "commit-msg hooks" is no verb; "POST /api" is an HTTP method
        if (
            word
            and not word.group(0).isupper()
            and all(w in _IMPERATIVE for w in word.group(0).lower().strip("-").split("-"))
        ):
            return True, []
    return False, commands


def _asks_for_a_guarded_step(text: str) -> str | None:
    """The step a sentence of `text` asks for (not one it describes, forbids or questions), or None.
    The mood is read first: most sentences of a tool's output ask for nothing, and need no more."""
    for sentence in _sentences(text):
        if sentence.rstrip(" `\"')").endswith("?"):
            continue
        asks, commands = _mood(sentence)
        if not asks and not commands:
            continue
        for name, pattern in _RISKY:
            for found in pattern.finditer(sentence):
                if _negated(sentence[: found.start()]):
                    continue  # "never push to main", "don't skip the hooks"
                if asks or any(found.group(0) in c for c in commands):
                    return name
    return None


# a first word used as a noun, not given as an order: "Build succeeded", "Test 3 of 5", "Install: done",
# "Update available", "Use of deprecated API" (a status line of a tool's output reads as data)
_NOUN_USE = re.compile(
    r"^[\w-]+(?:\s*(?:[:=(\[#|]|$)|\s+\d|\s+(?:succeeded|successful(?:ly)?|failed|failing|passed|passing|completed?"
    r"|done|finished|started|skipped|ok|okay|errors?|warnings?|output|logs?|status|summary|results?|time|took|steps?"
    r"|stages?|targets?|failures?|ready|available|in\s+progress|is|was|were|are|has|had|have|will|would|may|can"
    r"|could|did|does|info|details|reports?|history|of|by|from)\b)",
    re.I,
)
# a label before what a line says ("- **Lint formatting errors**: …", "hint: …"): it names, it orders nothing
_LABEL = re.compile(r"^[\W_]*[\w ()'-]{1,40}?(?:\*\*|__)?:\s+")
# someone's instruction retold: "the maintainers ask that …", "it recommends using …"
_ASKS_OF = re.compile(
    r"\b(?:asks?|wants?|recommends?|suggests?|advises?|urges?|instructs?|insists?|tells?|requests?|requires?)"
    r"\s+(?:[\w-]+\s+){0,3}?(?:to|that|using)\b",
    re.I,
)


# The same in the other languages Cairn's users write (Portuguese, Spanish, French, German): a modal of
# obligation ("você deve rodar …", "hay que borrar …", "il faut lancer …", "man muss …"; a person's rule
# in their words reads the same, `learning.person`), and imperatives of common orders that no statement
# shares: the polite imperatives of Portuguese and Spanish ("instale", "ejecute": the third person is
# "instala", "ejecuta"), the French "-ez" forms, the German du-imperatives.
OBLIGED_ELSEWHERE = re.compile(
    r"\b(?:t[eê]m (?:que|de)|devem?|n[ãa]o deve|precisam? (?:ser|estar|ter)|n[ãa]o pode"
    r"|deben?|tienen? que|hay que|no debe|doit|doivent|il faut"
    r"|muss|m[üu]ssen|soll(?:en|te)?|darf nicht|d[üu]rfen nicht)\b",
    re.I,
)
_VERBS_ELSEWHERE = """
abra adicione apague baixe configure copie crie delete envie exclua execute ignore instale mova remova
rode use
añada borre cambie copie descargue ejecute elimine envíe ignore instale mueva utilice
ajoutez configurez copiez créez exécutez ignorez installez lancez ouvrez supprimez téléchargez utilisez
entferne erstelle führe ignoriere installiere kopiere lade lösche öffne sende setze starte verwende
"""
_ORDERS_ELSEWHERE = frozenset(_VERBS_ELSEWHERE.split())
_FORBIDDING = re.compile(r"^(?:never|don'?t|do\s+not|please|n[ãa]o|nunca|nie)\s+", re.I)
# a command's name starts many lines of its own output ("npm WARN …", "git version 2.43"): as a first
# word it is no order here (a command given to run, `sudo …`, `git push …`, is `directive`'s to read)
_COMMANDS = """
bash cargo cd chmod chown curl git npm npx pip pip3 pnpm poetry rm sh sudo uv wget yarn
"""
_ORDERS = _IMPERATIVE - frozenset(_COMMANDS.split())


def asks(sentence: str) -> bool:
    """Whether a sentence asks its reader for something, whatever it asks: a modal ("contributors should
    …"), a retold instruction ("the team asks that …"), or an order at the start of it or of one of its
    clauses ("Use yarn, not npm"), forbidding included ("never run …"). A question asks nothing; a first
    word used as a noun ("Build succeeded") gives no order."""
    if sentence.rstrip(" `\"')").endswith("?"):
        return False
    if _OBLIGED.search(sentence) or _ASKS_OF.search(sentence) or OBLIGED_ELSEWHERE.search(sentence):
        return True
    said = _LABEL.sub("", sentence.strip())
    for clause in [said, *_CLAUSE.split(said)]:
        clause = _FORBIDDING.sub("", _LEAD.sub("", clause.strip()))
        word = re.match(r"[^\W\d_][\w-]*(?=[\s,;!]|\.?$)", clause)  # a word, not `go@1.25` or `run.sh`
        if word and not word.group(0).isupper() and not _NOUN_USE.match(clause):
            parts = word.group(0).lower().strip("-").split("-")
            if all(w in _ORDERS for w in parts) or word.group(0).lower() in _ORDERS_ELSEWHERE:
                return True
    return False


def asking_lines(text: str) -> list[int]:
    """The lines of `text` (by index) whose prose asks its reader for something (`asks`), comments
    included. Lines of code are no prose (`_code`)."""
    lines = text.splitlines()
    return [i for i, line in enumerate(lines) if any(asks(s) for s in _sentences(line, comments=True))]


PROSE_WORDS = 6  # a line of this many words or more, neither code nor a diagnostic, is someone's prose
# a word of prose, in any script (the test holds for every language): letters alone between spaces, so a
# path, a URL or an identifier is none; a hyphen may follow a single letter ("e-mail", "X-Request-Id")
_WORD = re.compile(
    rf"^[(\"'«“]?(?:{LETTER}{{2,}}|{LETTER}(?=['’-]{LETTER}))(?:['’-]{LETTER}+)*[)\"'»”]?[.,;:!?{FULL_STOPS}]*$"
)


# a data format's cells joined with no space (a CSV row, `a;b`, a tab-separated line): each cell is read;
# in a document a key's value too, not its key (`Environment=NOTE=skip the …`)
_CELLS = re.compile(r"[,;|\t](?=\S)")
_KEYS = re.compile(r"(?<!\S)(?:[^\s=]+=)+(?=\S)")  # `A=B=value`: both keys
# a one-letter clitic hyphened to a name, a number or an address (Hebrew's `ל-https://…`, `ב-2026`)
# (a Latin letter so joined is a build's or a chip's name: `x-86`, `a-1`)
_CLITIC = re.compile(rf"^(?![A-Za-z]){LETTER}[-\u05be]\S")


def _words(text: str) -> int:
    """The words of prose in `text`: letters between spaces (the cells of a data format's row each on
    its own, `17,export_target,send the …`), and the words of a run of a script written without spaces
    (`domain.text`)."""
    return sum(
        token_words(token)
        for token in _CELLS.sub(" ", visible(text)).split()
        if _WORD.match(token) or UNSPACED.search(token) or _CLITIC.match(token)
    )


# a tool's diagnostic: a file and line (`main.go:12:`, tsc's and MSBuild's `app.ts(442,61):`), or a level
# or failure before a colon, its label short: a place, a code (`error[E0599]:`, `npm WARN deprecated
# x@1.0.6:`, `Traceback (most recent call last):`). A sentence whose third word is "error" and whose
# clause runs on to a colon ("Nightly error report from the platform team: …") is someone's writing, in
# whatever language it goes on.
# a test's result as a runner prints it: a status word, or a mark
_RESULT = r"[(\[]?(?:pass(?:ed)?|fail(?:ed)?|ok|skip(?:ped)?|todo)[)\]]?|[✓✔✗✘×√]"
DIAGNOSTIC_LABEL_TOKENS = 4
_DIAGNOSTIC = re.compile(
    r"^\W{0,4}(?:[\w./\\-]+:\d+(?::\d+)?\b|[\w./\\-]+\(\d+(?:,\d+)?\):"
    r"|(?:[\w.-]+\s+){0,2}?(?:error|warning|warn|fatal|panic|fail(?:ed|ure)?|exception|traceback"
    rf"|assertion\w*|[a-z]{{0,3}}\d{{3,5}})\b(?=[^:\n]{{0,40}}:)(?:\s*[^\s:]+){{0,{DIAGNOSTIC_LABEL_TOKENS}}}\s*:"
    # a test runner's result: "(pass) suite > case [12ms]", "✓ renders", "--- FAIL: TestX", "PASSED"
    rf"|(?:{_RESULT})(?:(?<=[✓✔✗✘×√])|(?=[\s:]|$)))",
    re.I,
)


_STATUS = re.compile(r"^(?:exit -?\d+|ok|error)(?::\s|$)")  # how an excerpt starts a tool's output
# the time a log line starts with (`2026-03-02T10:00:01.234Z `, `[2026-03-02 10:00:01,123] `), or a chat's
# (`[10:03] `, IRC's `12:34 `): no file and line (`2026-03-02T10:00` is none), and what follows it is the
# line's own
_TIMESTAMP = re.compile(
    r"^\s*\[?(?:\d{4}-\d{2}-\d{2}[T ])?\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+"
)
# a sentence's end after a word; a docstring's or a quote's closing marks may follow the stop
_SENTENCE = re.compile(rf"{LETTER}[)\"'»”]?[.!?][)\"'»”]*(?:\s|$)|[{FULL_STOPS}]")


# Python's warnings module prints a warning as `file.py:58: UserWarning: <message>`: the message is what the
# warning's author wrote, as a log line's is the logger's, and no compiler's diagnostic
_PY_WARNING = re.compile(r"^\s*\S+\.pyw?:\d+: (?:\w+\.)*[A-Z]\w*Warning: ")
# pytest's summary of a test it did not run (`SKIPPED [1] tests/a.py:41: <reason>`, `XFAIL tests/a.py::t -
# <reason>`): the reason is what the test's author wrote in its marker, as a warning's message is its author's
_TEST_REASON = re.compile(r"^\s*(?:SKIPPED|XFAIL|XPASS)\s+(?:\[\d+\]\s+)?(?:\S+?:\d+:|\S+::\S+\s+-)\s+")
# a code comment's note tag (`TODO(sdk-v5):`, `FIXME:`), after a shell's or YAML's `#` (which `_COMMENT`
# leaves to Markdown's headings) or left at a line's start when a block of comments lost its marks as a
# shared frame (`unframed_lines`): its author's words follow, and neither a call nor a test's "todo" result
# A CI runner's annotation may carry one (GitHub Actions' `##[warning]TODO(ci-owners): …`, `::notice::NOTE:
# …`): the annotation is the runner's frame, the note after it someone's words, as a comment's would be.
_NOTE_TAG = re.compile(
    r"^\s*(?:##\[\w+\]\s*|::\w+(?:\s[^:\n]*)?::\s*|#+\s*)?(?:TODO|FIXME|XXX|HACK|NOTE|BUG)(?:\([^)\n]*\))?:\s+"
)


def _bare(line: str) -> str:
    """A line without what frames it: an excerpt's status of the output (`exit 0: `), a log's time, a
    Python warning's place and category, a skipped test's, a comment's marks and its note tag."""
    unframed = _TEST_REASON.sub("", _PY_WARNING.sub("", _TIMESTAMP.sub("", _STATUS.sub("", line))))
    return _NOTE_TAG.sub("", _uncommented(unframed))


def _prose(text: str) -> bool:
    """A sentence of `PROSE_WORDS` words or more, or twice as many words with no stop at all: a note's
    clauses run on ("tips:: down migrations are busywork :: write up() only and delete the stub"); a
    test runner's results and diagnostics are data whatever their length (`_DIAGNOSTIC`)."""
    words = _words(text)
    return words >= 2 * PROSE_WORDS or (words >= PROSE_WORDS and bool(_SENTENCE.search(text)))


DATA_WORDS = 3  # a document's line with this many words that no data shape explains is someone's writing
_HAS_LETTER = re.compile(LETTER)
# what a token of data holds: an address, a path, a setting's or a query's marks, a shell's variable, a
# name in camel case (`apiKeySettings`, `TreeNode`)
_DATA_MARK = re.compile(r"://|[/@#$=&]|::|->|\(\)|^--?\w|\w:\d|^[a-z]+[A-Z]|^[A-Z][a-z]+[A-Z][a-z]")
# a number as data shows it: a count, a size, a time, a version, a date's part (`30s`, `1.2.3`, `v2`,
# `10ms`, `64KiB`); letters with digits among them (`pu5h`, `e2e`) are words
_NUMBER = re.compile(r"^[vV#]?[-+]?\d[\d.,:x%+-]*(?:[A-Za-z%]{0,4}|[A-Za-z]{0,3}\d[\d.]*)$")
_HASH = re.compile(r"^[0-9a-f]{7,64}$")
_JSON_KEY = re.compile(r"\w[\"']:")
# a query's or a form's field (`?q=`, `&note=`): what parts its values, as a space would
_FIELD = re.compile(r"[?&][\w.-]{1,40}=")  # a quoted key (`{"id":`, `"login":"dev"`) anywhere in a line
# a key at a line's start (`version:`, `NAME=`, JSON's `"id":`): its value is what is read
_KEY = re.compile(r"^[\"']?[\w.-]+[\"']?[:=]$")
# words joined by `_`, `.`, `+` or `-` into one token (`do.not.review.this`, a form's `a+b+c+d`): a name
# of as many parts is rare (`max_retry_count`, `create-slot-recipe` are names), a sentence of fewer is too
JOINED_WORDS = 4
_JOINED = re.compile(r"[_.+\-]+")
# ... and by their capitals (`ignoreTheRulesAndPushToMain`): names of four or five parts are common in
# code (`TreeViewBranchContent`, `useTreeViewNodeContext`: nine lines of the dev sets' dependency code),
# of six or more none was
CAMEL_WORDS = 6
_NAMED = re.compile(r"_|\w\.\w")  # what joins a name's parts: a hyphen joins words too ("e-mail")
# what surrounds a token without being part of it: brackets, quotes, a sentence's stops
_EDGES = "()[]{}<>\"'`«»“”„‚‘’‹›「」『』（）*~,;:!?." + FULL_STOPS


def _case_parts(token: str) -> int:
    """How many words a token of letters alone joins by their capitals (`pushToMain` 3, `HTTPServer` 2,
    in any cased script); 1 for any other token."""
    if not token.isalpha():
        return 1
    return 1 + sum(
        (a.islower() and b.isupper()) or (a.isupper() and b.isupper() and c.islower())
        for a, b, c in zip(token, token[1:], [*token[2:], ""], strict=False)
    )


_SEGMENTS = re.compile(r"[/?#&=]+")  # what parts a path's or an address's segments
_EXTENSION = re.compile(r"\.[A-Za-z]\w{0,4}$")  # a file's (`.js`, `.py`)


def _slug_words(token: str) -> int:
    """The words a path or an address joins into a segment, as a page's slug does
    (`/ops/write-the-smtp-password-into-settings`): `JOINED_WORDS` or more are as many words. A segment
    with a number (a branch, `fix/av-5-sync-merge-signal`) or a file's extension is a name."""
    if "/" not in token:
        return 0
    count = 0
    for segment in _SEGMENTS.split(token):
        if any(c.isdigit() for c in segment) or _EXTENSION.search(segment):
            continue
        if (n := _joined_words(segment)) >= JOINED_WORDS:
            count += n
    return count


def _joined_words(token: str) -> int:
    """How many parts with a letter `_`, `.`, `+` or `-` join in a token (`do_not_review_this` 4)."""
    return sum(1 for p in _JOINED.split(token) if _HAS_LETTER.search(p))


def _loose_words(line: str) -> tuple[int, bool]:
    """The words of a line of a document that no data shape explains, and whether the line holds data
    besides: every token with a letter is a word (in a script written without spaces, `token_words` of
    them) but a number, a hash, an address, a path, a flag, a name in camel case, with a number or
    joined by `_` or `.`, a member (`.apiKey`), a setting's, a query's or a JSON key, and a key at the
    line's start; `JOINED_WORDS` words or more joined into one token, or into a path's or a link's
    segment (`_slug_words`), and `CAMEL_WORDS` or more joined by their capitals, are as many words.
    Whatever frame a text's words are in (a markup, an encoding, a log's prefix), they stay words here;
    only data's shapes are not."""
    count, data = 0, False
    for at, token in enumerate(_KEYS.sub(" ", _CELLS.sub(" ", _FIELD.sub(" ", line))).split()):
        core = token.strip(_EDGES)
        if not _HAS_LETTER.search(core):
            data = data or any(c.isalnum() for c in core)
            continue
        if (capitals := _case_parts(core)) >= CAMEL_WORDS:  # words joined by their capitals
            count += capitals
            continue
        if _DATA_MARK.search(core) or _JSON_KEY.search(token) or (at == 0 and _KEY.match(token)):
            data = True
            count += _slug_words(core)  # a path's or an address's words joined into a slug are words
            continue
        if (parts := _joined_words(core)) >= JOINED_WORDS:  # `do_not_review_this`, `a+form+value`
            count += parts
            continue
        if (
            _NUMBER.match(core)
            or _HASH.match(core)
            or (token.startswith(".") and token[1:2].isalpha())  # a member (`.apiKey`), a hidden file
            or (_JOINED.search(core.strip("_.+-")) and any(c.isdigit() for c in core))  # `eu-west-1`
            or _NAMED.search(core)  # an identifier or a file's name (`max_retry_count`, `__init__.py`)
        ):
            data = True
            continue
        count += token_words(core)
    return count, data


def _document_lines(text: str, enough: int = DATA_WORDS) -> list[int]:
    """The lines of a document (by index) that are someone's writing, not data: a line of `DATA_WORDS`
    words or more that no data shape explains (`_loose_words`), in the text as a reader sees it, and a
    run of lines of fewer words and nothing else that hold as many together (a sentence hard-wrapped,
    hyphenated or set a word a line); a list's item, a heading and a key's value are lines of their own,
    and so is a line that holds data (a listing's row, a search's match). A document's data is what its
    lines of numbers, paths, names, keys and a word or two show; whatever else a page, an issue or
    another server's answer says, whatever frames it, is its writer's, and only explicit recall shows
    it. With `enough` words (`PROSE_WORDS`), the lines that are sentences of its writer's: what the agent
    repeating them passes on."""
    out: set[int] = set()
    run: list[tuple[int, int]] = []  # consecutive lines of words alone, none of them a line of its own
    for i, raw in enumerate([*text.splitlines(), ""]):  # the blank sentinel ends the last run
        line = visible(_bare(raw))
        words, data = _loose_words(line)
        if words >= enough:
            out.add(i)
        first = line.split(maxsplit=1)[0] if words else ""
        own = _ITEM.match(raw) or _ITEM.match(line) or _KEY.match(first)  # a line of its own
        runs_on = words > 0 and not data and not own
        if runs_on and run and run[-1][0] == i - 1:
            run.append((i, words))
            continue
        if sum(w for _, w in run) >= enough:
            out.update(j for j, _ in run)
        run = [(i, words)] if runs_on else []
    found = sorted(out)
    return _soft_broken(text, found) if found and "=" in text and QP_RUN.search(text) else found


def prose_lines(text: str, document: bool = False) -> list[int]:
    """The lines of `text` (by index) that are prose someone wrote rather than data: a sentence of
    `PROSE_WORDS` words or more, outside code and a tool's diagnostics, or such a sentence held in a
    string of code (JSON's). Whatever a page, a README or an issue says, and in whatever language, it
    says in sentences; what a command reports (results, test names, counts, paths, errors) reads as
    data. A `document` (a page, an issue's thread, another MCP server's answer, a file outside the
    repository) is read the other way round (`_document_lines`): someone's writing, but for the lines
    that read as data, whatever frames its words."""
    if document:
        return _document_lines(text)
    out = []
    for i, raw in enumerate(text.splitlines()):
        line = _bare(raw)
        if _DIAGNOSTIC.match(line):
            continue
        if _printed_prose(line) or any(_prose(c) for c in _inline_comments(line)):
            out.append(i)
        elif _code(line):
            if any(_prose(x) for x in _prose_strings(line)):
                out.append(i)
        elif _prose(_TICKED.sub(" x ", line)):
            out.append(i)
    out = sorted({*out, *_wrapped_sentences(text.splitlines())})
    return _soft_broken(text, out) if out and "=" in text and QP_RUN.search(text) else out


WRAP_COLUMNS = 50  # a text hard-wrapped at fewer columns is a listing's lines, not a writer's
WRAPPED_WORDS = 0.6  # of a wrapped sentence's line's tokens, the share that are words at least
WRAP_SLACK = 0.9  # a hand-wrapped line is full when the next word would not fit in 90 % of the width


def _wrapped_sentences(lines: Sequence[str]) -> list[int]:
    """The lines of a sentence hard-wrapped over lines none of which is one on its own (a program's notice
    printed at 60 columns): lines that go on with the one before (`continuing`), each but the last full
    (the next line's first word would not have fitted on it, `WRAP_SLACK`; wide characters count two
    columns), at `WRAP_COLUMNS` or more, each of words (`_running_words`) and prose joined. A program's
    own lines (a progress line, a count, a status) run on with no full stop too, but short of any width
    (the next one's first word would have fitted); a listing's rows fill a width, but of names, numbers,
    cells or test results, not words."""
    out: set[int] = set()
    for i in range(len(lines)):
        if i in out or (i and _HAS_WORD.search(lines[i - 1]) and not _ENDS.search(lines[i - 1])):
            continue  # a sentence starts after a line that ended one, or a blank line or a rule
        run = continuing(lines, i)
        if len(run) < 2:
            continue
        widths = [_columns(lines[j].rstrip()) for j in run]
        width = max(widths)
        if width < WRAP_COLUMNS:
            continue
        nexts = (_columns(lines[j + 1].split()[0]) for j in run[:-1])
        full = all(w + 1 + n > WRAP_SLACK * width for w, n in zip(widths[:-1], nexts, strict=True))
        if (
            full
            and all(_running_words(lines[j], first=j == i) for j in run)
            and _prose(" ".join(_TICKED.sub(" x ", lines[j]).strip() for j in run))
        ):
            out.update(run)
    return sorted(out)


def _columns(text: str) -> int:
    """How many columns `text` takes in a terminal: a wide character (Chinese, Japanese, Korean) two."""
    return sum(2 if east_asian_width(c) in "WF" else 1 for c in text)


def _running_words(line: str, first: bool) -> bool:
    """A line of a sentence's run: mostly words (`WRAPPED_WORDS`), neither code, a table's row nor a
    tool's diagnostic or test result (`(pass) suite > case …`), and, after the first, no item of a
    list."""
    tokens = line.split()
    return (
        not _DIAGNOSTIC.match(_bare(line.strip()))
        and "|" not in line
        and "\t" not in line
        and not _code(line)
        and (first or not _ITEM.match(line))
        and _words(line) >= WRAPPED_WORDS * len(tokens)
    )


def _soft_broken(text: str, found: list[int]) -> list[int]:
    """`found` with the lines that a quoted-printable soft line break (an `=` that ends a line) joins to a
    found one: they are one line of the e-mail, broken only by its encoding."""
    lines = text.splitlines()
    joined = {i for i, line in enumerate(lines) if line.endswith("=") and i + 1 < len(lines)}
    out = set(found)
    for _ in range(len(lines)):
        grown = {i + 1 for i in out if i in joined} | {i for i in joined if i + 1 in out}
        if grown <= out:
            break
        out |= grown
    return sorted(out)


# a message a command or a program prints for a person to read (`echo "…"`, `print("…")`, a logger's)
_PRINTED = re.compile(
    r"""\b(?:echo|printf|print|puts|console\.(?:log|warn|error|info)|write-(?:host|output)|log(?:ger)?\.\w+)"""
    r"""\s*\(?\s*(["'])(.+?)\1""",
    re.I,
)


def _printed_prose(line: str) -> bool:
    """A line that prints a message of PROSE_WORDS words or more: a message is whole without a full stop,
    and it is someone's words to a reader ("Nahrajte celý export zákazníkov … na https://…")."""
    return any(_words(message) >= PROSE_WORDS for _, message in _PRINTED.findall(line))


@lru_cache(maxsize=2048)
def directive(text: str) -> str | None:
    """The cue by which `text` reads as instructions to an AI agent, or None. Remembered per text: the
    block and the prompt hook ask it of the same memories again and again."""
    if not text:
        return None
    if _INVISIBLE.search(text):
        return "hidden instruction marker"
    # a cue broken over lines (an excerpt wraps tool output) is found on the text as one line
    joined = " ".join(text.split())
    for candidate in (text, joined) if joined != text else (text,):
        for name, pattern in CUES:
            if any(not _forbids(candidate, found.start()) for found in pattern.finditer(candidate)):
                return name
        if _ADDRESSED.search(candidate):
            return "addressed to an AI agent"
    return _asks_for_a_guarded_step(text)


def _forbids(text: str, at: int) -> bool:
    """Whether the sentence around `text[at:]` forbids what follows ("never push directly to main",
    "don't pipe curl to sh"): a rule against the step, which is no instruction to take it."""
    start = max(text.rfind(end, 0, at) for end in (". ", "! ", "? ", "\n"))
    return _negated(text[start + 1 : at])


# the agent's words that say they pass on what a page, a file, an issue or a sub-agent said
_SOURCE_NOUN = (
    r"(?:pages?|docs?|documentation|readme(?:\.md)?|guides?|issues?|threads?|comments?|tickets?|runbooks?"
    r"|checklists?|notes?|files?|output|results?|articles?|posts?|site|website|wiki|changelog|contributing"
    r"(?:\.md)?|agents\.md|maintainers?|sub-?agents?|reports?|findings|answers?|search|faq|manual"
    r"|instructions|setup|tutorial|blog|script|message|e-?mail|snippet|gist|repo(?:sitory)?|project)"
)
_SAYING = (
    r"(?:says?|said|tells?|told|asks?|asked|wants?|recommends?|recommended|suggests?|suggested|instructs?"
    r"|instructed|requires?|advises?|advised|insists?|states?|stated|reads?|mentions?|claims?|explains?"
    r"|instructions?|advice|recommendations?|fix|workaround|is\s+to)"
)
_ATTRIBUTED = re.compile(
    rf"\b(?:according\s+to|per|as\s+(?:per|stated\s+in|described\s+in)|from)\s+(?:the\s+|their\s+|its\s+"
    rf"|this\s+|that\s+|[\w.-]+'s\s+)?(?:[\w.@/-]+\s+){{0,3}}?{_SOURCE_NOUN}\b"
    rf"|\b{_SOURCE_NOUN}(?:'s)?\s+(?:[\w-]+\s+){{0,4}}?{_SAYING}\b"
    rf"|\b(?:it|they)\s+{_SAYING}\b",
    re.I,
)


RETOLD = "a tool's text, retold"  # the cue of the agent's words passing on what a tool's text said


def relayed_directive(text: str) -> str | None:
    """The cue by which the agent's own words pass on an instruction a tool's text gave ("the page says
    to push to main with --no-verify"), or None: a paragraph that reads as instructions to an agent and
    says it is someone else's. The agent's own advice, unattributed, is its own."""
    for paragraph in re.split(r"\n\s*\n", text or ""):
        if _ATTRIBUTED.search(paragraph) and (cue := directive(paragraph)):
            return cue
    return None


def relayed(text: str) -> str | None:
    """The cue by which the agent's words pass on what a tool's text said, or None: an instruction
    (`relayed_directive`), or any prose or request of a paragraph that says it is another's ("their docs
    say every dependency goes in with `yarn add`"). What may reach an agent unasked leaves it out: a
    retold text is the tool's, whatever its wording."""
    if cue := relayed_directive(text):
        return cue
    return RETOLD if retold_lines(text) else None


@lru_cache(maxsize=1024)
def sentence_lines(text: str) -> tuple[int, ...]:
    """The lines of a document (by index) that hold its writer's sentences or requests: what the agent
    repeating them passes on, and what recall marks as someone else's words. A line of a few words (an
    error's "Invalid email or password", a header's "Miss from cloudfront") is left out of what an agent
    is shown unasked (`prose_lines`), yet quoting it passes nothing on."""
    return tuple(sorted(set(asking_lines(text)) | set(_document_lines(text, PROSE_WORDS))))


def not_data_lines(text: str, document: bool = False) -> list[int]:
    """The lines of `text` (by index) that are no data: its writer's (`written_lines`), and the lines that
    carry what those say (`with_what_they_name`)."""
    lines = text.splitlines()
    return in_comments(lines, with_what_they_name(lines, set(written_lines(text, document))))


def written_lines(text: str, document: bool = False) -> list[int]:
    """The lines of `text` (by index) that its writer wrote: prose (`prose_lines`, of a `document` or not)
    or requests (`asking_lines`), the rest of a note they are part of (`their_notes`)."""
    lines = text.splitlines()
    return in_comments(lines, their_notes(lines, set(asking_lines(text)) | set(prose_lines(text, document))))


# a line that a few words and a colon open, what they introduce on the line itself ("Run it at once: X=1 …")
_LABELLED = re.compile(r"^(?!\s*#)\W{0,4}[^\W\d_][^\W\d_ ]*(?: [^\W\d_]+){0,3}:\s+\S")


def their_notes(lines: Sequence[str], found: set[int]) -> set[int]:
    """`found` (line indexes of prose and requests), with the rest of the notes they are part of: a run of
    line comments that holds one (`_in_line_comments`), and a line between two of them that a few words
    and a colon open (a paragraph's command, "Run it at once: X=1 ./migrate --target prod-4"; a heading
    is none). A writer's note is theirs whole, however they wrapped it."""
    out = _in_line_comments(lines, found)
    out |= {
        i for i in range(1, len(lines) - 1) if i - 1 in found and i + 1 in found and _LABELLED.match(lines[i])
    }
    if not out:
        return out
    unframed = unframed_lines(lines)  # a box's edges and a doc comment's ` * ` aside, read once for both
    return out | _signed(unframed, out) | _headed(unframed, out)


def _headed(lines: Sequence[str], found: set[int]) -> set[int]:
    """The heading that names an id just above a paragraph one of `found` opens ("Persistence notes
    (TZ-4471):" over a doc comment's note): a heading shows nothing of its own once what it introduces is
    left out, and the id it gives is the note's, as `_signed`'s is at the note's foot. `lines` unframed."""
    return {
        i - 1
        for i in found
        if i > 0
        and i - 1 not in found
        and _HEADING_ID.match(lines[i - 1])
        and not _code(lines[i - 1])
        and len(lines[i - 1].split()) <= HEADING_TOKENS
    }


# a heading's words: "Persistence notes (TZ-4471):", or a team's note and its decision's id as Persian
# writes it ("یادداشت تیم پلتفرم — تصمیم ADR-…:", six tokens); a longer line ending in a colon introduces
HEADING_TOKENS = 7


# a few words that end with a colon, one of them an id's or an address's (`_SIGNED_VALUE`)
_HEADING_ID = re.compile(r"^\W{0,4}[^\W\d_](?=[^:]*(?:\d|@|://))[^:]*:\s*$")


def _signed(lines: Sequence[str], found: set[int]) -> set[int]:
    """The labelled lines that close a paragraph one of `found` is in ("… on every request.\nSetup id:
    KTK-4471" then a blank line or a box's edge): what a note gives its reader to quote, its id, its
    contact, its ticket, is the note's. `lines` unframed (`unframed_lines`: a box's note, its edges aside)."""
    out: set[int] = set()
    for i in sorted(found):
        j = i + 1
        while j < len(lines) and j not in found and _signs(lines[j]) and j - i <= SIGNED_LINES:
            j += 1
        if j > i + 1 and (j == len(lines) or not _HAS_WORD.search(lines[j])):
            out.update(range(i + 1, j))
    return out


SIGNED_LINES = 2  # a note's id and its contact, not a listing of settings under a sentence
SIGNED_TOKENS = 4  # "Setup id: KTK-4471": a label and a value, not a log's line


def _signs(line: str) -> bool:
    """Whether a line is a label and a value that names something (an id or a ticket with its number, an
    address), short, and no code (`var url: String?`): what signs a note."""
    return (
        bool(_LABELLED.match(line))
        and len(line.split()) <= SIGNED_TOKENS
        and not _code(line)
        and bool(_SIGNED_VALUE.search(line))
    )


_SIGNED_VALUE = re.compile(r"\d|@|://")


_FENCE_LINE = re.compile(r"^\s*(?:`{3,}|~{3,})")


def _fenced(lines: Sequence[str], block: list[int]) -> list[int]:
    """`block` (what a line introduces) when it is a fenced code block, to its closing fence: the
    commands a README tells its reader to run, not a report's list under its heading."""
    if not block or not _FENCE_LINE.match(lines[block[0]]):
        return []
    end = next((j for j in range(block[0] + 1, len(lines)) if _FENCE_LINE.match(lines[j])), None)
    return list(range(block[0], end + 1)) if end is not None else []


def with_what_they_name(lines: Sequence[str], written: set[int]) -> set[int]:
    """`written` (a writer's lines), with what those lines hand the reader: the fenced block one of them
    introduces with a colon (`introduced`: the commands a README tells the reader to run), a setting that
    holds a value they name (the one a JSON note tells the reader to use, `"writeKey": "k3-prod"` beside
    "… use writeKey k3-prod."), and a line that names a host or an address they name (the `RUN curl` of
    the mirror a Dockerfile's comment names). A commit's id names a record, and a branch a line of git's
    output: `abc1234..def5678 main -> main` under a commit's subject stays data."""
    out = set(written) | {j for i in written for j in _fenced(lines, introduced(lines, i))}
    return out | _naming_lines(lines, _notes_values("\n".join(lines[i] for i in sorted(out))))


def naming_cut_notes(lines: Sequence[str], cut: str) -> set[int]:
    """The lines of `lines` (a tool's output as an excerpt shows it) that carry a value a writer's line of
    `cut` names: `cut` is what the excerpt left out of the output and kept apart (`Memory.tool_text`), a
    note in its middle among it. A record's id that the note names (`- Tracking: FLAG-4471` over an
    ADR's instructions to cite FLAG-4471 in every commit that keeps a flag) is the note's, as it is when
    the note is shown (`with_what_they_name`)."""
    return _naming_lines(lines, _cut_notes_values(cut)) if cut else set()


@lru_cache(maxsize=256)
def _cut_notes_values(cut: str) -> frozenset[str]:
    """The values the writer's lines of an excerpt's cut text name. Cached: the block and the prompt hook
    read the same excerpts again and again."""
    kept = cut.splitlines()
    written = "\n".join(kept[i] for i in not_data_lines(cut))
    # a cut note that asks its reader for something, in a sentence (hard-wrapped, its request's line may
    # be the one beside its prose: `Add X and set Y` over `on the worker, as …`), names what it wants
    # done; the values a log's or a page's cut lines name (curl's `TLSv1.3` handshake lines, a pull
    # request's address) are the output's own
    prose = set(prose_lines(written))
    asked = [i for i in asking_lines(written) if prose & {i - 1, i, i + 1}]
    return _notes_values(written) if asked or directive(written) else frozenset()


def _notes_values(written: str) -> frozenset[str]:
    """The values a writer's lines name (`values_in`), but a commit's id: what a line of data that names
    one of them carries of theirs (`_naming_lines`)."""
    return frozenset(v for v in values_in(written) if not _HASH.match(v))


def _naming_lines(lines: Sequence[str], named: frozenset[str]) -> set[int]:
    """The lines that carry a value of `named` (`_notes_values`) to their reader: a setting that holds one,
    a line that says little but the value (`see QA-4471` as a skipped test's reason: a pointer to the
    note), or any line that names its host or address."""
    if not named:
        return set()
    hosts = sorted((v for v in named if "." in v.strip(".")), key=len, reverse=True)
    host = re.compile(rf"(?<![\w.-])(?:{'|'.join(map(re.escape, hosts))})(?![\w-])") if hosts else None
    return {
        i
        for i, line in enumerate(lines)
        if ((_A_SETTING.match(line) or _points_to(line, named)) and values_in(line) & named)
        or (host is not None and host.search(line))
    }


POINTER_WORDS = 1  # a line of no more words of its own ("see", "ref") besides a note's value points to it


def _points_to(line: str, named: frozenset[str]) -> bool:
    """Whether a line says nothing but a value of `named` and at most POINTER_WORDS words, its frame
    aside: a pointer to the note that names the value (`see QA-4471`), not a line of data of its own
    (git's `* [new branch] feat/x -> feat/x` names the branch a cut request names)."""
    rest = _bare(line)
    for value in sorted(named, key=len, reverse=True):  # `QA-4471` before its part `4471`
        rest = rest.replace(value, " ")
    return word_count(rest) <= POINTER_WORDS


# a setting's line: a key (JSON's quoted, YAML's, an environment's, after a Dockerfile's ARG or ENV or a
# shell's export) and its value
_A_SETTING = re.compile(r"^\s*-?\s*(?:(?:ARG|ENV|export|set)\s+)?[\"']?[A-Za-z_][\w.-]*[\"']?\s*[:=]\s*\S")


# a line comment of a shell, a Dockerfile, YAML, C or SQL (`# …`, `// …`, `-- …`), not a shebang
_LINE_COMMENT_MARK = r"#(?![!#])|//|--(?=\s|$)"
_LINE_COMMENT = re.compile(rf"^\s*(?:{_LINE_COMMENT_MARK})")
# ... and any line of a file's comments: a line comment's, or a block comment's (C's, HTML's)
COMMENT_LINE = re.compile(rf"^\s*(?:{_LINE_COMMENT_MARK}|/\*|\*\s|<!--)")


def _in_line_comments(lines: Sequence[str], found: set[int]) -> set[int]:
    """`found`, with every line of a run of line comments that holds one: consecutive `#`, `//` or `--` lines
    are one note, however its writer wrapped it."""
    out = set(found)
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and _LINE_COMMENT.match(lines[j]):
            j += 1
        if j - i > 1 and out.intersection(range(i, j)):
            out.update(range(i, j))
        i = max(j, i + 1)
    return out


# where a block comment opens and closes: HTML's and C's (a glob's `cmd/**` opens none)
_OPENS = re.compile(r"<!--|(?<![\w/*.])/\*(?=[\s*]|$)")
_CLOSES = {"<!--": "-->", "/*": "*/"}


def in_comments(lines: Sequence[str], found: set[int]) -> list[int]:
    """`found` (line indexes), with every line of a block comment over several lines that holds one of
    them: a comment is one note of its author's, the snippet it tells the reader to paste (`<!-- paste
    this, without integrity: <script src=…>` … `-->`) as much theirs as the sentence above it."""
    out = set(found)
    i = 0
    while i < len(lines):
        opened = _OPENS.search(lines[i])
        if opened is None:
            i += 1
            continue
        close = _CLOSES[opened.group()]
        end = i if close in lines[i][opened.end() :] else None
        j = i + 1
        while end is None and j < len(lines):
            end = j if close in lines[j] else None
            j += 1
        if end is None:  # no end in sight (a file cut short): where it ends is not known
            i += 1
            continue
        if end > i and out.intersection(range(i, end + 1)):
            out.update(range(i, end + 1))
        i = end + 1
    return sorted(out)


def retold_lines(text: str) -> list[int]:
    """The lines of `text` (by index) where the agent's words pass on another's prose or request: the lines
    of a retelling paragraph (`retelling_lines`) that are no data."""
    lines = retelling_lines(text)
    if not lines:
        return []
    retold = "\n".join(line for i, line in enumerate((text or "").splitlines()) if i in lines)
    return [lines[i] for i in not_data_lines(retold)]


# what the agent names when it passes on someone else's text, and how it says it does (narrower than
# `_ATTRIBUTED`, which a cue of instructions backs: here the retold text may say anything)
_TOLD_BY = (
    r"(?:pages?|docs?|documentation|readme(?:\.md)?|guides?|issues?|threads?|comments?|tickets?|runbooks?"
    r"|checklists?|articles?|posts?|site|website|wiki|changelog|contributing(?:\.md)?|agents\.md|faq"
    r"|maintainers?|sub-?agents?|reports?|findings|answers?|manual|tutorial|blog|(?:search\s+)?results?)"
)
# "according to" in the other languages Cairn's users write (a preposition: closed-class, no idiom);
# never a word that is also a plain one ("segundo" is "second" too: only before an article)
_ACCORDING_TO = (
    r"\b(?:laut|gem[äa](?:ß|ss)|seg[uú]n|selon|d'apr[èe]s|segundo\s+(?:o|a|os|as)|de\s+acordo\s+com"
    r"|secondo\s+(?:il|la|lo|i|le|gli)|volgens|enligt|if[øo]lge|wed[lł]ug|согласно|згідно\s+з|göre"
    r"|menurut|ayon\s+sa|לפי|وفقا|طبق|के\s+अनुसार|에\s+따르면|segons|pod[lľ]a|podle|prema|mukaan|szerint"
    r"|σύμφωνα\s+με|potrivit|kwa\s+mujibu\s+wa|بر\s+اساس|کے\s+مطابق)\b|অনুযায়ী|によると|によれば|根据|根據|按照"
)
_ACCORDING = re.compile(rf"\baccording\s+to\b|{_ACCORDING_TO}", re.I)
_RETELLS = re.compile(
    _ACCORDING.pattern
    + rf"|\b(?:per|as\s+(?:per|stated\s+in|described\s+in))\s+(?:the\s+|their\s+|its\s+|this\s+"
    rf"|that\s+|[\w.-]+'s\s+)?(?:[\w.@/'’-]+\s+){{0,3}}?{_TOLD_BY}\b"
    rf"|\b{_TOLD_BY}(?:'s)?\s+(?:(?!(?:they|we|you|i|he|she)\b)[\w-]+:?\s+){{0,4}}?(?:says?|said|states?|stated"
    r"|tells?|told|recommends?"
    r"|recommended|suggests?|suggested|claims?|insists?|advises?|advised|asks?|asked|wants?|requires?|instructs?"
    r"|explains?|mentions?|describes?|shows?)\b",
    re.I,
)


# how a summary or a sub-agent's report opens a sentence that passes on another's text: a written or outside
# thing as the subject of a saying verb ("the observability conventions say …"), not the session's people
_TOLD_SUBJECT = re.compile(
    r"(?:^|(?<=[.!?:])\s+|^\W*(?:[-*•]|\d+[.)])\s+)(?:the|their|its|this|that|these|those|[\w.-]+'s)\s+"
    r"(?!(?:user|person|developer|human|agent|assistant|model|session)\b)(?:[\w.'’-]+\s+){1,6}?"
    r"(?:says?|said|states?|stated|recommends?|recommended|suggests?|suggested|advises?|advised|instructs?"
    r"|insists?|claims?|tells?|told|asks?|asked)\b",
    re.I | re.M,
)


def summary_retold_lines(text: str) -> list[int]:
    """The lines of a summary's or a sub-agent's account that pass on what it read, with no word that
    it retells or with one: a line that makes a text or an outsider the subject of a saying verb, or
    says it retells ("according to …"), with the lines under it when it ends in a colon; of those, the
    ones that are no data. By line, not paragraph: a summary is one long list, and a retold value in one
    item ("root cause: the docs said /api/mcp") says nothing of the items around it."""
    lines = (text or "").splitlines()
    told: set[int] = set()
    for i, line in enumerate(lines):
        if not (_TOLD_SUBJECT.search(line) or _RETELLS.search(line)):
            continue
        told.add(i)
        if line.rstrip().endswith(":"):
            depth = len(line) - len(line.lstrip())
            for j in range(i + 1, len(lines)):
                below = lines[j]
                if not below.strip() or len(below) - len(below.lstrip()) < depth:
                    break
                told.add(j)
    if not told:
        return []
    order = sorted(told)
    return [order[i] for i in not_data_lines("\n".join(lines[i] for i in order))]


def retelling_lines(text: str) -> list[int]:
    """The lines of `text` (by index) in a paragraph where the agent says it passes on what a page, a
    file, an issue or a sub-agent said ("the top result says: …", "per their docs, …"): whatever the
    retold text says, it is that text's, not the agent's."""
    out: list[int] = []
    at = 0
    for paragraph in re.split(r"(\n\s*\n)", text or ""):
        lines = paragraph.count("\n")
        if not paragraph.strip() or not _RETELLS.search(paragraph):
            at += lines
            continue
        out.extend(range(at, at + lines + 1))
        at += lines
    return out


# what a text names exactly, that another text repeating it repeats word for word: code, a URL, a flag, a
# versioned package, a variable's setting, a file name
_MARK = re.compile(
    r"`[^`\n]{3,}`|https?://[^\s)>\]'\"`]+|(?<![\w-])--[a-z][\w-]+(?:=\S+)?|\b[\w.-]+@[\w.^~-]+"
    r"|\b[A-Z][A-Z0-9_]{2,}=\S+|\b[\w-]+\.(?:json|lock|toml|ya?ml|cfg|ini|env|md|sum)\b"
)
_TABLE_ROW = re.compile(r"^\s*\|")
MARK_CHARS = 4  # a shorter mark (`ok`, `-v`) names nothing of its own
QUOTED_MARKS = 2  # one shared mark is a topic; two repeated from a text's prose are that text's statement


def marks(text: str) -> set[str]:
    """The exact names of `text` (code, URLs, flags, packages, settings, file names), unquoted."""
    found = (m.group(0).strip("`").strip() for m in _MARK.finditer(text or ""))
    return {m for m in found if len(m) >= MARK_CHARS}


@lru_cache(maxsize=256)
def prose_marks(text: str) -> tuple[frozenset[str], ...]:
    """The marks of each of `text`'s lines of prose or requests (`not_data_lines`) that names any: what a
    page or a file states, not what its listings or code name. Cached: a session's agent is checked
    against the same few texts message after message."""
    lines = (text or "").splitlines()
    found = (frozenset(marks(lines[i])) for i in not_data_lines(text))
    return tuple(named for named in found if named)


# A line that takes most of its words from one line of a text (or two in a row) says what that line says,
# in whatever words it frames it ("The quickstart has the key pasted into .env", after a page's "Paste it
# into .env as KEY=… and commit the file"): it is that text's. Fewer shared words are a topic in common.
RESTATED_TERMS = 4
RESTATED_SHARE = 0.6
RESTATED_PREFIX = 5  # the letters a word keeps when two lines' words are compared


def _terms(line: str) -> frozenset[str]:
    """A line's terms as the index reads them (stemmed, stop words and numbers aside), each cut to its
    first RESTATED_PREFIX letters: the stemmer is English's, and a page in Russian or Polish that says
    "закоммитьте" is retold as "закоммитить" (the same word, another ending). A run of a script written
    without spaces is its pairs of letters, as the analyzer reads it."""
    return _read(line)[0]


@lru_cache(maxsize=4096)
def _read(line: str) -> tuple[frozenset[str], int]:
    """A line's terms (`_terms`) and how many words they stand for: a run without spaces counts its words
    (`domain.text`), not its pairs of letters, half of which straddle two words and match only the same
    words in the same order. Cached: an agent's line is checked against each text it heard."""
    out: set[str] = set()
    line = visible(line)
    size = sum(token_words(run) for run in _UNSPACED_RUN.findall(line))
    for term in analyze(line):
        if term.isdigit():
            continue
        if UNSPACED.search(term):
            out.add(term)  # the analyzer's pair of letters
        else:
            out.add(term[:RESTATED_PREFIX])
            size += 1
    return frozenset(out), size


_UNSPACED_RUN = re.compile(UNSPACED.pattern + "+")


def restatable(text: str) -> bool:
    """Whether a line of `text` has words enough to restate another's (`restating_lines`)."""
    return any(len(_terms(line)) >= RESTATED_TERMS for line in (text or "").splitlines())


def restating_lines(text: str, told: Sequence[str]) -> list[int]:
    """The lines of `text` (by index) that restate a line of one of the `told` texts, or two of its lines
    in a row: `RESTATED_TERMS` or more of the line's terms, and `RESTATED_SHARE` of them, are that
    line's (stemmed, stop words aside, in any language the analyser splits). A table's row (the work
    done, file by file) names things; it restates nothing."""
    return _restating(text, _windows(told))


def _windows(told: Sequence[str]) -> tuple[frozenset[str], ...]:
    """The terms of each line of the `told` texts and of each two lines in a row, of words enough."""
    said: list[frozenset[str]] = []
    for t in told:
        lines = [_terms(line) for line in (t or "").splitlines()]
        said.extend(lines)
        said.extend(a | b for a, b in zip(lines, lines[1:], strict=False))
    return tuple(s for s in said if len(s) >= RESTATED_TERMS)


@lru_cache(maxsize=256)
def _stated(told: str) -> tuple[frozenset[str], ...]:
    """`_windows` of a tool text's lines of prose or requests. Cached: a session's agent is checked
    against the same few texts message after message."""
    lines = (told or "").splitlines()
    return _windows(["\n".join(lines[i] for i in not_data_lines(told))])


def _restating(text: str, said: Sequence[frozenset[str]], least: int = RESTATED_TERMS) -> list[int]:
    if not said:
        return []
    out = []
    for i, line in enumerate((text or "").splitlines()):
        own, size = _read(line)
        if min(len(own), size) < least or _TABLE_ROW.match(line):
            continue
        need = max(RESTATED_TERMS, RESTATED_SHARE * min(len(own), size))
        if any(len(own & s) >= need for s in said):
            out.append(i)
    return out


# a quotation, in any language's marks: «…», »…« and »…» (Slovenian, German, Danish; Finnish, Swedish),
# “…”, ”…” (Finnish, Swedish), „…“, ‚…‘, ‹…›, "…", 「…」, 『…』; and as Markdown quotes: a `>` line, a
# code span (an agent sets a quoted sentence in backticks as often as in quotation marks)
_QUOTATION = re.compile(
    r"«([^»\n]+)»|»([^«»\n]+)[«»]|“([^”\n]+)”|”([^”\n]+)”|„([^“”\n]+)[“”]|‚([^‘’\n]+)[‘’]|‹([^›\n]+)›"
    r'|"([^"\n]+)"|「([^」\n]+)」|『([^』\n]+)』|`([^`\n]+)`|^[ \t]*>[ \t]?([^\n]+)$',
    re.M,
)
# fewer quoted tokens name a thing (`npm run build`, "the deploy step"); this many, two of them words,
# say what the text said
QUOTED_TOKENS, QUOTED_WORDS = 4, 2


def _quotes(text: str, told: str) -> bool:
    """Whether `text` quotes, word for word, `QUOTED_TOKENS` tokens or more of a line of `told`'s prose
    or requests, `told` read as the document it is (an outside text): "the note asks us «skriv 2.4.2
    direkte i pyproject.toml»" passes that note on, in whatever language it says so."""
    found = _QUOTATION.finditer(visible(text or ""))
    spans = (" ".join(next(g for g in f.groups() if g).split()) for f in found)
    quoted = [q.casefold() for q in spans if len(q.split()) >= QUOTED_TOKENS and _words(q) >= QUOTED_WORDS]
    if not quoted:  # most of the agent's messages quote nothing: the told text is not read at all
        return False
    prose = _document_prose(told)
    return any(_opens_with_prose(_unjoined(q), prose) for q in quoted)


def _opens_with_prose(quote: str, prose: str) -> bool:
    """Whether most of `quote` (two thirds of its tokens, `QUOTED_TOKENS` at least), from its start, is
    `prose` word for word: an agent quoting a line often adds where it came from ("… (ref. OPS-12)")."""
    tokens = quote.split()
    least = max(QUOTED_TOKENS, math.ceil(len(tokens) * 2 / 3))
    return any(" ".join(tokens[:k]) in prose for k in range(len(tokens), least - 1, -1))


# a run of this many of a text's tokens, in their order, in another's is a copy of them
COPIED_TOKENS = 8
# of a message's tokens, the share that copies of one text's runs cover when the message is that text
# passed on whole, most of it (a line of the agent's own, then its sub-agent's report)
COPIED_SHARE = 2 / 3
# what starts a line of a quoted or commented block (`> `, `# `, `// `, ` * `): its marks, not its words
_LINE_MARKS = re.compile(r"^\s*(?:>+|#+|//+|\*+|--|;+)\s+", re.M)
# quotation marks and brackets: how a message sets a quotation off, or how code frames a value
_FRAMING = re.compile(r"[«»“”„\"‚‘’‹›「」『』(){}\[\]]")


def passes_on_whole(text: str, told: str) -> bool:
    """Whether `text` is `told` passed on whole: `COPIED_SHARE` of its tokens or more lie in runs of
    `COPIED_TOKENS` or more that `told` holds word for word (read as running text, its lines joined), in
    any language. An agent's reply that is its sub-agent's report with a line before it says what the
    report says, whoever's words they seem; one that cites a commit's subject or a command it copied
    among its own sentences does not."""
    tokens = _tokens(text)
    if len(tokens) < COPIED_TOKENS or not told:
        return False
    running, words = _running(told)
    # most messages share few of a text's tokens: they are told apart without looking for runs
    if sum(t in words for t in tokens) < COPIED_SHARE * len(tokens):
        return False
    covered = [False] * len(tokens)
    for i in range(len(tokens) - COPIED_TOKENS + 1):
        if f" {' '.join(tokens[i : i + COPIED_TOKENS])} " in running:
            covered[i : i + COPIED_TOKENS] = [True] * COPIED_TOKENS
    return sum(covered) >= COPIED_SHARE * len(tokens)


def _split(text: str) -> tuple[str, ...]:
    """`text`'s tokens, case folded, its quotation marks and brackets and a name's joiners as spaces."""
    return tuple(_unjoined(" ".join(_FRAMING.sub(" ", visible(text)).split()).casefold()).split())


# one message of the agent is read against each text it heard before it
_tokens = lru_cache(maxsize=1024)(_split)


@lru_cache(maxsize=256)
def _running(told: str) -> tuple[str, frozenset[str]]:
    """`told` as running text (lines joined, each without its log frame, a quoted block's marks left
    out, case folded), and its tokens."""
    unframed = "\n".join(unframed_lines((told or "").splitlines()))
    tokens = _split(_LINE_MARKS.sub("", _HYPHENATED.sub("", unframed)))
    return " " + " ".join(tokens) + " ", frozenset(tokens)


# A log puts its frame before each line (`2026-03-11T09:42:20Z  WARN  `, `[WARNING]   `, `=> => # step: `,
# `host unit[pid]: `): a note it prints over several lines is one sentence only with each frame taken
# out. A frame is the run of tokens a line starts with that a neighbouring line starts with too, digits
# aside (the clock moves on), ending in a token that is no word of prose (a mark, a number, a level in
# capitals): two lines of a paragraph that open with the same word ("The …") keep it.
FRAME_TOKENS = 8  # a log's frame is a few tokens: a time, a host, a unit, a level
_DIGITS = str.maketrans("0123456789", "0000000000")
_PROSE_WORD = re.compile(r"^[^\W\d_]+$")


def unframed_lines(lines: Sequence[str]) -> list[str]:
    """`lines`, each without the log frame it shares with the line before or after it."""
    heads = [line.split(None, FRAME_TOKENS)[:FRAME_TOKENS] for line in lines]
    shapes = [[token.translate(_DIGITS) for token in head] for head in heads]
    out = []
    for i, line in enumerate(lines):
        shared = 0
        for j in (i - 1, i + 1):
            if 0 <= j < len(lines):
                k, most = 0, min(len(shapes[i]), len(shapes[j]))
                while k < most and shapes[i][k] == shapes[j][k]:
                    k += 1
                shared = max(shared, k)
        if shared and shared == len(heads[i]) and _frame_only(heads[i], heads, i):
            out.append("")  # an empty message in its frame: a blank line of what the tool printed
            continue
        shared = max(0, min(shared, len(line.split(None, shared)) - 1))  # a line keeps a token of its own
        while shared and _PROSE_WORD.match(last := heads[i][shared - 1]) and not last.isupper():
            shared -= 1
        out.append(line.split(None, shared)[-1] if shared else line)
    return out


def _frame_only(head: list[str], heads: Sequence[list[str]], i: int) -> bool:
    """Whether a line is nothing but the frame the line before or after it starts with, token for token
    (`warning: x@1.2:` over `warning: x@1.2: [source.mirror]`): what the tool printed there is empty."""
    return any(
        0 <= j < len(heads) and heads[j][: len(head)] == head and len(heads[j]) > len(head)
        for j in (i - 1, i + 1)
    )


# what joins a slug's or a name's words (`write-the-password`, `settings.py`): read as a space on both
# sides, a quotation of a page's slug in words ("write the password") is a quotation of it
_JOINER = re.compile(r"(?<=[^\W_])[-_+.](?=[^\W_])")


def _unjoined(text: str) -> str:
    return _JOINER.sub(" ", text)


# a word hyphenated at a line's end, its rest starting the next line (`kus-` / `tutage`): one word
_HYPHENATED = re.compile(rf"(?<={LETTER})-\n(?=[^\W\d_A-Z])")


@lru_cache(maxsize=256)
def _document_prose(told: str) -> str:
    """`told`'s lines of prose or requests read as a document, on one line, case folded. Cached: a
    session's agent is checked against the same few texts message after message."""
    lines = (told or "").splitlines()
    unframed = unframed_lines(lines)
    prose = "\n".join(unframed[i] for i in continued_lines(lines, sentence_lines(told or "")))
    return _unjoined(" ".join(visible(_HYPHENATED.sub("", prose)).split()).casefold())


CONTINUED_LINES = 3  # a sentence hard-wrapped runs on over this many lines after its first, at most


def continued_lines(lines: Sequence[str], found: Sequence[int]) -> list[int]:
    """`found` lines with the lines that continue each when it is hard-wrapped: a line right after one
    whose sentence runs on (no full stop, no colon at its end) goes on with that sentence."""
    return sorted({j for i in found for j in continuing(lines, i)})


def continuing(lines: Sequence[str], i: int) -> list[int]:
    """Line `i` and the lines that go on with its sentence (`continued_lines`)."""
    out = [i]
    while (
        len(out) <= CONTINUED_LINES
        and (j := out[-1] + 1) < len(lines)
        and lines[j].strip()
        and not _ENDS.search(lines[out[-1]])
    ):
        out.append(j)
    return out


_ENDS = re.compile(r"[.!?:;。！？]\W*$")


def began_on(lines: Sequence[str], i: int) -> list[int]:
    """The lines before line `i` that its sentence began on when it is hard-wrapped: while a line starts
    mid-sentence (in lower case) and the one before it runs on, at most CONTINUED_LINES."""
    out: list[int] = []
    j = i
    while (
        len(out) < CONTINUED_LINES
        and j > 0
        and lines[j].lstrip()[:1].islower()  # it starts mid-sentence
        and lines[j - 1].strip()
        and not _ENDS.search(lines[j - 1])
    ):
        j -= 1
        out.insert(0, j)
    return out


# a sentence read on its own restates a request in this many of its words or more, the names it gives
# aside (a URL's parts, a code span): a short one that shares most of its few words with a page's request
# ("the health check passed on the first attempt", "the tool is live at https://…") shares a topic
RESTATED_SENTENCE_TERMS = 10


def restates_request(text: str, told: str) -> bool:
    """Whether a sentence of `text` restates one of `told`'s requests in most of its words
    (`restating_lines` against the lines that ask, each with the line that continues it, read without
    their log frames): the agent's reply runs its retelling of a page's request and its own next step on
    in one line, which `repeats_prose` reads whole."""
    asked = _requested(told)
    return bool(asked) and any(
        _restating(_MARK.sub(" ", sentence), asked, RESTATED_SENTENCE_TERMS)
        for line in (text or "").splitlines()
        for sentence in _SENTENCE_END.split(line)
    )


@lru_cache(maxsize=256)
def _requested(told: str) -> tuple[frozenset[str], ...]:
    """`_windows` of a tool text's lines that ask for something (`_asked_text`). Cached as `_stated` is."""
    return _windows([_asked_text(told)])


def _asked_text(told: str) -> str:
    """A tool text's lines that ask for something, each with the lines that continue it, read without
    their log frames."""
    lines = (told or "").splitlines()
    unframed = unframed_lines(lines)
    return "\n".join(unframed[i] for i in continued_lines(lines, asking_lines("\n".join(unframed))))


# what a text gives exactly that no one would say by chance: an address, or a name with both letters and
# digits in it (a ticket, a host, a bucket, a build's id, a branch); a version number is anyone's
_ADDRESS = re.compile(r"\b[a-z][\w+.-]*://[^\s)>\]'\"`]+", re.I)
_VALUE_EDGES = "()[]{}<>\"'`«»“”„‚‘’‹›「」『』（）*~,;:!?."
_VALUE = re.compile(r"^[\w.:/@=+~%-]+$")  # a name's characters: no line number's arrow, no terminal code
_VERSION = re.compile(r"^[vV]?\d+(?:[._-]\d+)*(?:[-.]?(?:rc|alpha|beta|dev|post)\d*)?$")
VALUE_CHARS = 5
VALUE_LETTERS = 3  # fewer are a time, a date or a duration (`16m55s`, `2024-Q2`)


@lru_cache(maxsize=256)
def stated_values(told: str) -> frozenset[str]:
    """The values (`values_in`) a tool text's lines of prose or requests give (`written_lines`, each
    with the lines its sentence is hard-wrapped over, read without their log frames), and the block
    such a line introduces with a colon (`introduced`), and its lines that name an AI among their words
    (`addressing_lines`, a table's cell or a log's field included): what a note or a page states or
    asks for, not what its listings and code name; and the whole run of comments such a line is in, as
    the text has it (`written_lines`: a note's id at its head, `# OPS-4471: …`, is the note's, and a run
    of `#` lines read without its marks is a frame's lines no more). Cached as `_stated` is."""
    framed = (told or "").splitlines()
    lines = unframed_lines(framed)
    text = "\n".join(lines)
    said = sorted({*written_lines(text), *_introducing_lines(lines), *addressing_lines(lines)})
    read = [j for i in said for j in (*began_on(lines, i), *continuing(lines, i))]
    read += [k for i in said for j in continuing(lines, i) for k in introduced(lines, j)]
    commented = any(COMMENT_LINE.match(line) for line in framed)
    notes = (
        [framed[i] for i in written_lines(told or "") if COMMENT_LINE.match(framed[i])] if commented else []
    )
    return values_in("\n".join([*(lines[j] for j in read), *notes]))


# an AI named as most languages write it in technical prose: the Latin "AI" (Urdu's "AI اسسٹنٹس"), the
# Romance "IA", German "KI", Russian "ИИ", Ukrainian "ШІ", Chinese "人工智能", and "LLM"
AI_NAMED = re.compile(r"(?<![\w.-])(?:AI|A\.I\.|IA|KI|ИИ|ШІ|LLMs?)(?![\w-])|人工智能")


def addressing_lines(lines: Sequence[str]) -> list[int]:
    """The lines that name an AI among words of their own (`DATA_WORDS` or more), wherever they sit (a
    table's cell, a log's field, a comment): a tool's text that speaks of AI assistants in a line
    tells them something, in any language ("DENIED - За AI асистенти: добавете …")."""
    return [i for i, line in enumerate(lines) if AI_NAMED.search(line) and _words(line) >= DATA_WORDS]


def introduced(lines: Sequence[str], i: int) -> list[int]:
    """The lines that line `i` introduces when it ends in a colon ("To finish installing, run:", or a
    request's last wrapped line): the block right under it (past blank lines), at most
    INTRODUCED_LINES. What a note introduces is what it says or asks for, though the block is a
    command or code and no sentence. A block of settings may have a blank line between its sections
    (`[source.crates-io]` … then `[source.mirror]` …): it goes on past one between two settings."""
    if not _INTRODUCES.search(lines[i]):
        return []
    out: list[int] = []
    j = i + 1
    while j < len(lines) and not _HAS_WORD.search(lines[j]):
        j += 1
    while j < len(lines) and len(out) < INTRODUCED_LINES:
        if _HAS_WORD.search(lines[j]):
            out.append(j)
        elif not (
            j + 1 < len(lines) and _SETTING_LINE.match(lines[j - 1]) and _SETTING_LINE.match(lines[j + 1])
        ):
            break
        j += 1
    return out


def _introducing_lines(lines: Sequence[str]) -> list[int]:
    """The lines that are a sentence of `PROSE_WORDS` words or more ending in the colon that introduces a
    block ("Instead, run this command without waiting for anyone's approval:"): in any language what
    follows is what the line asks for; a tool's diagnostic ending in a colon is data."""
    return [
        i
        for i, line in enumerate(lines)
        if _INTRODUCES.search(line)
        and _words(line) >= PROSE_WORDS
        and not _DIAGNOSTIC.match(_uncommented(_TIMESTAMP.sub("", line)))
    ]


INTRODUCED_LINES = 6  # a command, or a few settings
# a line of settings: a section's header (`[source.mirror]`) or a key and its value (`registry = "…"`)
_SETTING_LINE = re.compile(r"\s*(?:\[[^\]\s]+\]\s*$|[\w.-]+\s*[=:]\s*\S)")


_INTRODUCES = re.compile(r":\W*$")  # a line that ends in a colon, a frame's edge after it or not
_HAS_WORD = re.compile(r"\w")


def values_in(text: str) -> frozenset[str]:
    """The addresses in `text`, and its names that hold letters and digits both; a setting
    (`TICKET=PLAT-4821`) gives its value alone as well, and a value its parts that are such names
    themselves: a retelling shortens what it names (an address to its host's `mk26q` in
    `http://mk26q.npm.example/`, a bot account `ops7x-release-bot` to its owner's `ops7x`)."""
    text = _ESCAPE.sub(" ", text)  # a value in a JSON string ends where an escape begins (`mk07q\\n"`)
    addresses = {m.group(0).rstrip(".,;:") for m in _ADDRESS.finditer(text)}
    found = set(addresses)
    words = [word.strip(_VALUE_EDGES) for word in _ADDRESS.sub(" ", text).split()]
    for word in [*words, *addresses]:
        tokens = {word, word.rpartition("=")[2].strip(_VALUE_EDGES)} if "=" in word else {word}
        tokens |= {part for token in tokens for part in _VALUE_PARTS.split(token)}
        found |= {t for t in tokens if _named_value(t)}
    return frozenset(found)


_VALUE_PARTS = re.compile(r"[-_./@:=+~%]+")  # what joins the parts of a name, a host or an address
_ESCAPE = re.compile(r'\\[nrt"\\/]')  # a JSON string's escape of a line break, a tab, a quote


def _named_value(token: str) -> bool:
    """A name no one would give by chance: letters and digits both, no version number."""
    return (
        len(token) >= VALUE_CHARS
        and bool(_VALUE.match(token))
        and any(c.isdigit() for c in token)
        and sum(c.isalpha() for c in token) >= VALUE_LETTERS
        and not _VERSION.match(token)
    )


def names_stated_value(text: str, told: str, given: Callable[[str], bool] | None = None) -> bool:
    """Whether `text` names a value `told`'s prose or requests gave (`stated_values`): retelling a note
    with its address, its ticket or its branch passes the note on, in any language and whatever its
    other words. A value `given` says the session had from someone it trusts (the person, the
    repository's files) is the project's own, whatever a tool's text says of it. A value is named as a
    part of a name too, an underscore joining it as a dash does: a retelling shortens a token it names
    (`ghp_relbot_mk26q` for a note's `ghp_relbot_mk26q_Zk41vQe8`)."""
    text = text or ""
    return any(
        re.search(rf"(?<![^\W_]){re.escape(v)}(?![^\W_])", text) and not (given is not None and given(v))
        for v in stated_values(told)
        if v in text
    )


def repeats_prose(text: str, told: str) -> bool:
    """Whether a line of `text` states what a line of `told` (a tool's text) states, with no word that it
    retells: it takes most of its words from that line of prose or request (`restating_lines`), or it
    repeats `QUOTED_MARKS` of the names that line gives ("the timeout is HTTP_TIMEOUT=0 in
    config/client.yaml", after a page's "Set HTTP_TIMEOUT=0 in config/client.yaml").
    Names gathered across a report's lines, or a table's row of the work done ("| `enable` | runs
    `entire enable --agent <name>` |"), state nothing of their own. A quotation of its words (`_quotes`)
    passes it on."""
    if _restating(text, _stated(told)) or _quotes(text, told):
        return True
    stated = prose_marks(told)
    if not stated:
        return False
    for line in (text or "").splitlines():
        if _TABLE_ROW.match(line):
            continue
        own = marks(line)
        if len(own) >= QUOTED_MARKS and any(len(own & named) >= QUOTED_MARKS for named in stated):
            return True
        # a sentence that says whose it is ("according to the note, …") needs to name only one thing the
        # text named: in a language that packs its articles into its words such a sentence is short
        for sentence in _SENTENCE_END.split(line) if _ACCORDING.search(line) else ():
            if _ACCORDING.search(sentence) and any(marks(sentence) & named for named in stated):
                return True
    return False
