"""What a person typed, read by grammar: the rules, decisions and facts they state in their own words.

The rule-based extractor (`learning.rules`) hands every message the person typed on the main thread to
`from_user`. A sentence is a preference when it states a rule: a taste ("I prefer…", "never force-push")
or an obligation in the grammar of the person's language ("the icons must be PNGs", "o app tem que estar
buildando", "no debe exponer la clave"); a decision when it chooses ("let's go with…", "instead of…"); a
fact when it states a value (a URL, a port, a version) in the message's own lead. What the person quotes
or pastes (a quoted passage, a code block, console output that repeats a sentence) is what they point at,
not what they say; a question, a hedge or a step's expected outcome states no rule. What the person
chose when the agent put a question to them (`answers`) is a decision of theirs too.
"""

from __future__ import annotations

import re
from collections import Counter

from cairn.domain.models import MemoryKind
from cairn.domain.vocabulary import Tag
from cairn.pipeline.models import Candidate, EventDoc
from cairn.search.language import written_in
from cairn.services.directives import OBLIGED_ELSEWHERE, asks, is_code
from cairn.transcripts.model import Role
from cairn.transcripts.noise import CAIRN_CONTEXT_OPEN
from cairn.transcripts.tools import ASK_TOOLS

_I = re.I


def _patterns(*patterns: str) -> list[re.Pattern[str]]:
    """Each pattern compiled, case aside."""
    return [re.compile(p, _I) for p in patterns]


def _spaced(*languages: str) -> str:
    """Words of languages written with spaces, each whole: bounded by `(?<!\\w)` and `(?!\\w)` rather
    than `\\b`, since Python's `\\w` knows no combining mark and `\\b` never closed a word that ends in
    one (Hindi "हमेशा", Tamil "எப்போதும்")."""
    return r"(?<!\w)(?:" + "|".join(languages) + r")(?!\w)"


# A standing rule in the other languages Cairn's users write, as "always …" and "never …" state one in
# English (`PREFERENCE`): the words for always and never, a prohibition ("forbidden") and a negative
# order where a language has a word of its own for it (Finnish "älä", Khmer "កុំ", Korean "마세요").
# Closed-class words of a language only, never its plain "not" (Polish "nie"); "still" is no "always"
# (German "immer noch", Dutch "nog altijd"); a word another language spells alike for something else is
# left out (Estonian "alati", Croatian for "tools"). Scripts written without spaces match as they are.
ALWAYS_NEVER_ELSEWHERE = re.compile(
    _spaced(
        # Romance
        r"sempre|nunca|jamais|siempre|jam[aá]s|toujours|vietato|prohibido|interdit|[îi]ntotdeauna"
        r"|niciodat[ăa]"
        r"|interzis",
        # Germanic
        r"immer(?!\s+noch)|niemals|(?<!nog )altijd(?!\s+nog)|nooit|verboden|altyd|verbode|alltid"
        r"|aldrig|altid"
        r"|aldri|f[öo]rbjudet|forbudt|alltaf|aldrei|banna[ðd]",
        # Slavic in Latin letters
        r"zawsze|nigdy|zabronione|v[zž]dy|nikdy|zak[aá]z[aá]no|zak[aá]zan[eé]|uvijek|uvek|nikada"
        r"|nikad|zabranjeno"
        r"|vedno|nikoli|prepovedano",
        # in Cyrillic: Russian, Ukrainian, Bulgarian, Serbian, Macedonian, Kazakh, Mongolian
        r"всегда|никогда|запрещено|нельзя|завжди|ніколи|заборонено|не можна|винаги|никога"
        r"|забранено|увек|увијек"
        r"|никада|никад|забрањено|секогаш|никогаш|әрқашан|ешқашан|тыйым салынады|үргэлж|хэзээ ч|хориотой",
        # Baltic, Finnic, Hungarian
        r"vienm[ēe]r|nekad|aizliegts|visada|visuomet|niekada|niekuomet|draud[žz]iama|mitte kunagi|keelatud"
        r"|koskaan|ikinä|älä|älkää|kielletty|mindig|soha(?:sem)?|tilos",
        # Turkic
        r"her zaman|hi[çc]bir zaman|asla|yasak|sakın|h[əe]mi[şs][əe]|he[çc] vaxt"
        r"|qada[ğg]an(?:d[ıi]r)?|har doim"
        r"|hech qachon|taqiqlan(?:adi|gan)",
        # Greek, Albanian, Welsh, Basque
        r"πάντα|ποτέ|απαγορεύεται|gjithmon[ëe]|kurr[ëe]|ndalohet|bob amser|byth|inoiz ez|debekatuta",
        # Arabic, Persian, Urdu, Hebrew, Georgian, Armenian, Amharic
        r"دائما|أبدا|ممنوع|همیشه|هرگز|هیچ\u200cوقت|هیچ وقت|ہمیشہ|کبھی نہیں|کبھی بھی|תמיד|אף פעם"
        r"|לעולם לא|אסור"
        r"|ყოველთვის|არასდროს|აკრძალულია|միշտ|երբեք|արգելվում է|ሁልጊዜ|ሁሌም|በፍጹም|ፈጽሞ|በጭራሽ|የተከለከለ",
        # Hindi, Marathi, Nepali, Bengali
        r"हमेशा|कभी नहीं|कभी भी|निषिद्ध|वर्जित|नेहमी|कधीही|कधीच|सधैं|कहिल्यै|সবসময়|সবসময়|কখনও না|কখনো না"
        r"|কখনোই|কখনই|নিষিদ্ধ",
        # Indonesian, Malay, Tagalog, Vietnamese, Korean, Swahili
        r"selalu|sentiasa|senantiasa|jangan|tidak boleh|dilarang|laging|palagi|kailanman|huwag|bawal"
        r"|lu[ôo]n lu[ôo]n|kh[ôo]ng bao gi[ờo]|tuy[ệe]t đ[ốo]i kh[ôo]ng|c[ấa]m|daima|kamwe|marufuku|usiwahi"
        r"|항상|절대|금지|마세요|마십시오|말 것|말아 ?주세요",
    )
    # Japanese, Chinese, Thai, Tibetan, Tamil, Telugu, Kannada, Malayalam, Gujarati, Punjabi, Sinhala,
    # Burmese, Khmer, Lao: a word is found inside the run it is written in
    + r"|必ず|絶対に|常に|決して|ないでください|てはいけない|てはならない|べからず|禁止"
    r"|永远不要|从不|从来不|决不|不要"
    r"|始终|总是|不得|不許|切勿|请勿|請勿|严禁|嚴禁|不准|不许|เสมอ|ไม่เคย|ห้าม|อย่า(?!ง)|ནམ་ཡང|རྟག་ཏུ"
    r"|எப்போதும்|ஒருபோதும்|கூடாது|ఎల్లప్పుడూ|ఎప్పుడూ|ఎప్పటికీ|కూడదు|ಯಾವಾಗಲೂ|ಎಂದಿಗೂ|ಕೂಡದು|എപ്പോഴും|ഒരിക്കലും"
    r"|പാടില്ല|હંમેશા|ક્યારેય|ਹਮੇਸ਼ਾ|ਕਦੇ ਨਹੀਂ|සැමවිටම|සෑම විටම|කිසිවිටෙක|කිසි විටෙක|එපා|තහනම්|အမြဲ"
    r"|ဘယ်တော့မှ"
    r"|မလုပ်ရ|တားမြစ်|ជានិច្ច|កុំ|ហាមឃាត់|មិនដែល|ສະເໝີ|ຫ້າມ|ຢ່າ",
    _I,
)
# ... and what nobody here does, as a norm is stated ("nobody runs DDL against prod", "Niemand draait
# Flyway handmatig"): each language's word for no one, where it has one of its own (French's only before
# its "ne", where "personne" is no one and not a person)
NOBODY_ELSEWHERE = re.compile(
    _spaced(
        r"nobody|no one|no-one|niemand|nadie|ningu[ée]m|nessuno|personne ne|personne n'|nimeni|senki",
        r"nikt|nikto|nikdo|nitko|nihče|никто|ніхто|никой|нико|κανείς|hi[çc] kimse|kimse|kh[ôo]ng ai",
        r"tak seorang pun|tidak seorang pun|walang sinuman|אף אחד|لا أحد|هیچ\u200cکس|هیچ کس|कोई नहीं|아무도",
    )
    + r"|誰も|谁都不|任何人都不|没有人|沒有人",
    _I,
)
# ... and "never … not", "no … not" where the negation closes the clause after its object (Hindi, Urdu,
# Bengali: "কখনো StrictHostKeyChecking বন্ধ করবে না", "کوئی بھی انسٹالر … نہیں چلایا جائے گا"): the
# words for never and for any, then the clause's own negation, two words or more apart ("कोई बात नहीं",
# no matter, is no rule)
NEVER_NOT_ELSEWHERE = re.compile(
    r"(?<!\w)(?:कभी|कोई)(?:\s+भी)?(?:\s+[^\s।.!?]+){2,12}?\s+(?:नहीं|न)(?!\w)"
    r"|(?<!\w)(?:کبھی|کوئی)(?:\s+بھی)?(?:\s+[^\s۔.!?]+){2,12}?\s+(?:نہیں|نہ)(?!\w)"
    r"|(?<!\w)(?:কখনো|কখনও|কোনো)(?:ই)?(?:\s+[^\s।.!?]+){2,12}?\s+(?:না|নয়)(?!\w)"
)
# ... and a word for never that another language writes for its plain "not" (German "nie"; Polish's and
# Afrikaans's "nie" is "not"): read only in a sentence the language model says is written in its language
NEVER_IN_ITS_LANGUAGE = {"de": re.compile(r"(?<!\w)nie(?!\w)", re.I)}


def _never_in_its_language(s: str) -> bool:
    return _in_its_language(s, NEVER_IN_ITS_LANGUAGE)


def _in_its_language(s: str, words: dict[str, re.Pattern[str]]) -> bool:
    """Whether `s` holds a word of `words` where the language model reads `s` as written in its language."""
    found = [language for language, word in words.items() if word.search(s)]
    return bool(found) and written_in(s) in found


# ... and a must, as English's modals (`OBLIGATION`)
MUST_ELSEWHERE = re.compile(
    _spaced(
        # Italian, Dutch, Afrikaans, Scandinavian, Icelandic
        r"bisogna|devono|moeten|moet|mag niet|mogen niet|mag nie|m[åa]ste|f[åa]r inte|m[åa] ikke"
        r"|ver[ðd]ur a[ðd]"
        r"|m[áa] ekki",
        # Slavic in Latin letters
        r"musimy|musi|musisz|musicie|musz[aą]|nie wolno|nale[zż]y|mus[ií]|mus[ií]te|mus[ií][šs]"
        r"|musia|nesm[ií]"
        r"|nesm[ií]te|nesmie(?:te|[šs])?|treba|mora[šs]|morate|moraju|morajo|ne smije|ne smiju"
        r"|ne sme|ne smeju"
        r"|ne smete|obavezno|obvezno",
        # Romanian, Hungarian, Finnish, Estonian, Latvian, Lithuanian
        r"trebuie|kell|kötelező|nem szabad|täytyy|on pakko|peab|peavad|ei tohi|oblig[āa]ti|nedr[īi]kst"
        r"|privalo|privalote|privaloma|b[ūu]tina|negalima",
        # in Cyrillic
        r"должн[ыао]?|должен|обязательно|следует|необходимо|повинн[іа]|повинен|обов'язково"
        r"|потрібно|необхідно"
        r"|трябва|не бива|задължително|морате|не сме|обавезно|задолжително|міндетті|тиіс|болмайды"
        r"|заавал|ёстой"
        r"|болохгүй",
        # Turkic, Indonesian, Malay, Tagalog, Swahili, Albanian, Welsh
        r"mutlaka|kesinlikle|m[üu]tl[əe]q|laz[ıi]md[ıi]r|mumkin emas|harus|wajib|mesti|dapat"
        r"|lazima|hairuhusiwi"
        r"|duhet|rhaid",
        # Arabic, Persian, Urdu, Hebrew, Georgian, Armenian, Amharic
        r"يجب|باید|نباید|חייב|חייבים|چاہیے|لازمی|უნდა|აუცილებლად|არ შეიძლება|պետք է|պարտադիր|չի կարելի"
        r"|አለበት|አለባቸው|አለብህ|አለብሽ|አለብን|አለባችሁ|የለበትም|የለብህም|የለብንም|አይፈቀድም|ግዴታ",
        # Hindi, Marathi, Nepali, Bengali, Greek, Korean, Vietnamese; Japanese, Chinese, Thai, the
        # Dravidian languages, Burmese, Khmer and Lao after them
        r"चाहिए|ज़रूर|जरूर|अवश्य|आवश्यक|पाहिजे|नका|पर्छ|हुँदैन|অবশ্যই|উচিত|যাবে না|πρέπει|반드시"
        r"|안 ?됩니다|안 ?된다|안 ?돼요|b[ắa]t bu[ộo]c|kh[ôo]ng đ[ưu][ợo]c ph[ée]p",
    )
    + r"|必须|一定要|务必|必須|应该|應該|应当|なければならない|なければなりません|なくてはならない|べき|ต้อง"
    r"|வேண்டும்|கட்டாயம்|வேண்டாம்|తప్పనిసరిగా|వద్దు|ಕಡ್ಡಾಯ|ಬೇಡ|നിർബന്ധമായും|വേണം|വേണ്ട|ရမည်|ရမယ်"
    r"|ត្រូវតែ|ចាំបាច់|ຕ້ອງ"
    # Korean's must ends the verb it follows: "통과해야 합니다"
    r"|야 (?:합니다|한다|해요)",
    _I,
)

# never a word inside a command's flag or a path (`--only functions:x`, `src/each/`)
_AS_WORDS = r"(?<![-/.])"
# ... and what is done one way only ("the prod hosts are only reachable through the bastion", "μόνο σε
# ψευδωνυμοποιημένη μορφή"): each language's word for only. A restriction states a rule in a message the
# agent took in without acting on it (`told`); in one it acted on, it scopes the task ("fix only the
# critical ones"). Words another language writes for something else are left out (Slovak "len", Swahili
# "tu", English "just") or read in their language only (`ONLY_IN_ITS_LANGUAGE`).
ONLY_ELSEWHERE = re.compile(
    _AS_WORDS
    + _spaced(
        r"only|solely|exclusively|nur|ausschlie(?:ß|ss)lich|seulement|uniquement|s[oó]lo|solamente"
        r"|[úu]nicamente|só|somente|apenas|soltanto|alleen|uitsluitend|slechts|udelukkende|bara"
        r"|endast|enbart|tylko|wy[łl][ąa]cznie|jen|jenom|pouze|iba|v[ýy]hradne|samo|isklju[čc]ivo"
        r"|izklju[čc]no|csak|kiz[áa]r[óo]lag|vain|ainoastaan|ainult|tikai|tik|doar|numai|hanya|cuma"
        r"|lamang|tanging|ch[ỉi]|sadece|yaln[ıi]zca|faqat|vet[ëe]m",
        r"только|лишь|исключительно|лише|тільки|виключно|само|единствено|зөвхөн|μόνο|αποκλειστικά",
        r"فقط|רק|تنها|صرف|केवल|सिर्फ़|सिर्फ|শুধু|কেবল|მხოლოდ|միայն|오직",
    )
    + r"|只|仅|僅|だけ|のみ|เท่านั้น|ብቻ|மட்டும்|മാത്രം|మాత్రమే|ಮಾತ್ರ|માત્ર|ફક્ત|ਸਿਰਫ",
    _I,
)
# ... and what holds for each one of a kind ("send_default_pii stays off in every environment", "bawat
# pagbabago sa payments/ ay dumadaan sa review"): each language's word for every, read as `ONLY_ELSEWHERE`
# is. Not its word for all, which a report or a complaint says as often ("all tests pass", "всё сломалось").
EVERY_ELSEWHERE = re.compile(
    _AS_WORDS
    + _spaced(
        r"every|each|jede[rsmn]?|chaque|cada|ogni|elke|iedere?|hver[t]?|varje|ka[żz]d\w*|ka[žz]d\w*|svak\w*"
        r"|kiekvien\w*|katr\w*|jokai\w*|minden|fiecare|setiap|tiap|bawat|kila|mỗi|кажд\w*|кожн\w*|κάθε",
        r"כל|كل|هر|हर|प्रत्येक|প্রতিটি|모든",
    )
    + r"|每|毎",
    _I,
)

# ... and what is kept as it is ("build artifacts stay private", "raw emails stay on the phone", "as
# dependências ficam com versão exata"): each language's verb for stays or remains, read as
# `ONLY_ELSEWHERE` is. Not a verb that also means becomes or lives (Polish "zostaje", Hindi "रहता").
STAYS_ELSEWHERE = re.compile(
    _AS_WORDS
    + _spaced(
        r"stays?|remains?|bleib(?:t|en)|reste(?:nt)?|demeuren?t?|resta(?:no)?|rimane|rimangono|blij(?:ft|ven)"
        r"|permanece[mn]?|ficam?|se\s+queda[n]?|f[öo]rblir|forbliver|pozostaj[ąea]|z[ůu]st[áa]v[áa](?:j[íi])?"
        r"|zost[áa]va(?:j[úu])?|ostaje|ostaju|ostane|ostanejo|r[ăa]m[âa]ne?|pysyv[äa]t?|marad(?:nak)?"
        r"|kal[ıi]r|tetap|v[ẫa]n\s+gi[ữu]|παραμένει|μένει",
        r"оста[её]тся|остаются|залишається|залишаються|остава|נשאר(?:ים|ת|ות)?|يبقى|تبقى|يظل|تظل",
    )
    + r"|のまま|保持",
    _I,
)

PREFERENCE = _patterns(
    r"\b(?:i|we)\s+(?:always|usually|generally)\s+\w+",
    r"\b(?:i|we)\s+(?:really\s+|strongly\s+)?prefer\b",
    r"\b(?:i|we)\s+(?:don'?t|do not|never)\s+(?:want|like|use)\b",
    r"^(?:please\s+)?(?:always|never)\s+\w+",
    r"\bplease\s+(?:always\s+|don'?t\s+|do not\s+|never\s+)?(?:use|keep|run|write|avoid)\b",
    r"^(?:don'?t|do not)\s+(?:ever\s+)?(?:use|add|commit|push|run|touch|change)\b",
    r"\b(?:always|never)\s+(?:use|run|commit|push|write|add|call|put|mock)\b",
    r"\bfrom now on\b",
    ALWAYS_NEVER_ELSEWHERE.pattern,
    NOBODY_ELSEWHERE.pattern,
    NEVER_NOT_ELSEWHERE.pattern,
    # a rule stated in passing: "never force-push", "anything in the next tag can be removed"
    r"\b(?:never|always)\s+(?!(?:been|was|were|had|did|worked|happened|seen)\b)[a-z][\w-]*",
    r"\b(?:anything|everything|any \w+)\b[^.?!]{0,80}\b(?:can|must|should) (?:always |never )?be\b",
)
# An obligation, in the grammar of the person's language (English, Portuguese, Spanish, French, German):
# how a person states a rule in passing, "the WAL journals have to be deleted before shutdown", "todas as
# features tem que estar atrás de uma flag". A word of a language, not an idiom of one project.
OBLIGATION = [
    OBLIGED_ELSEWHERE,  # the modals of Portuguese, Spanish, French and German, as tool text is read
    MUST_ELSEWHERE,
    *_patterns(
        r"\b(?:must(?:n'?t| not)?|have to|has to|needs? to be|should(?:n'?t| not)?|shall)\b"
        r"(?! have\b|'ve\b)",
        # a rule as a negative order: "Also do not apply linting for the tests"
        r"(?:^|[,;]\s*|\b(?:also|and|but|so|please|just)\s+)(?:do not|don'?t)\s+(?!know\b|think\b)[a-z]",
        # a reminder states what holds beyond the task at hand: "lembrando que todas as features …"
        r"\b(?:remember(?:ing)? that|keep(?:ing)? in mind|bear in mind|lembrando que"
        r"|lembre(?:-se)? (?:que|de)"
        r"|recuerd[ae] que|recordando que|ten(?:iendo)? en cuenta|n'oublie(?:z)? pas|denk(?:t)? daran)\b",
    ),
]
# ... unless it is hedged ("maybe we should…"), asks in passing ("analyse which directories should be
# added") or holds for now only ("do not update the VPS yet")
HEDGED = re.compile(
    r"^(?:maybe|perhaps|talvez|quiz[aá]s|peut-[eê]tre|vielleicht)\b"
    r"|\b(?:which|what|whether|how|qual|quais)\b"
    r"|\b(?:yet|for now|por enquanto|por ahora|pour l'instant|vorerst)\b",
    _I,
)
# ... or gives a step and what it should lead to ("open /connections → should see the request", "test
# with a free user — both should see trainers": a test plan's expectation, not a rule)
NOT_OBLIGATION = re.compile(HEDGED.pattern + r"|→|->|=>|\s[—–]\s", _I)
DECISION = _patterns(
    r"\blet'?s\s+(?:go with|use|switch to|stick with|move to|adopt|keep)\b",
    r"\bwe(?:'ve| have)?\s+decided\b",
    r"\b(?:i|we)\s+(?:decided|chose|picked)\b",
    r"\bwe(?:'ll| will| are going to|'re going to)\s+(?:go with|use|switch to|move to|stick with)\b",
    r"\bswitch(?:ing|ed)?\s+(?:from\s+\S+(?:\s+\S+){0,3}?\s+)?to\b",
    r"\binstead of\b",
    r"\bgo(?:ing)? with\b",
)
FACT_TOKEN = re.compile(
    r"(https?://\S+|\blocalhost:\d{2,5}\b|\bport\s+\d{2,5}\b|\bv?\d+\.\d+(?:\.\d+)?\b|(?:^|\s)/[\w.-]+/[\w./-]+)",
    _I,
)
FACT_VERB = re.compile(r"\b(is|are|runs?|lives?|listens?|uses?|located|serves?|deployed|hosted|pinned)\b", _I)
# what might have been, not what was chosen: "If I used X instead of Y, I would have got Z"
COUNTERFACTUAL = re.compile(r"\b(?:would|could|should|might)(?:n'?t| not)? have\b", _I)
# a question asks with its first words: an auxiliary and its subject ("should we…", "is it…"), or a
# question word and, soon after, its verb ("what did …", "how do I …"). "When clicked, the panel should…"
# and "Should make sure the transcript is loaded" are statements that start with such a word.
_SUBJECT = r"(?:i|we|you|it|they|he|she|the|this|that|these|those|there|a|an|our|my|your|its|their)"
_AUX = r"(?:do|does|did|is|are|was|were|can|could|would|will|should|shall|may|might|must|has|have|had)"
QUESTION = re.compile(
    rf"^(?:(?:should|can|could|would|will|do|does|did|is|are|was|were)\s+{_SUBJECT}\b|(?:what|why|how|which)\b"
    rf"|(?:where|when|who)(?:\s+[\w'-]+){{0,2}}?\s+{_AUX}\b)",
    _I,
)
ALTERNATIVE = re.compile(
    r"\b(?:instead of|rather than|switch(?:ing|ed)? from|move away from)\s+([\w.@/+-]+(?:\s[\w.@/+-]+)?)", _I
)
RATIONALE = re.compile(r"\b(?:because|since|so that|as it|as they)\b\s*(.+)$", _I)

SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")  # a CJK full stop needs no space
_CLAUSE_SPLIT = re.compile(r"\s*(?:;|\s—\s|\s+[┃│|]\s+)\s*")
_COMMA = re.compile(r",\s+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_FENCE = re.compile(r"^`{3,}\s*|\s*`{3,}$")
_NOISE_MARKERS = (CAIRN_CONTEXT_OPEN, "<system-reminder>", "<tool_use_error>", "[REDACTED_")
MIN_SENTENCE, MAX_SENTENCE = 12, 320


def sentences(text: str) -> list[str]:
    out = []
    for raw in _clauses(SENTENCE_SPLIT.split(text)):
        s = _unquoted(_BULLET.sub("", raw).strip())
        if s.endswith(":"):
            continue  # it introduces what follows (a list, a code block): a fragment on its own
        if MIN_SENTENCE <= len(s) <= MAX_SENTENCE and not any(m in s for m in _NOISE_MARKERS):
            out.append(s)
    return out


def _unquoted(s: str) -> str:
    """A sentence without a code fence's backticks around it, or the pair around it when it was typed
    whole as code: a backtick of a code span inside it stays (`listSessions` in … must accept…)."""
    s = _FENCE.sub("", s)
    if len(s) > 1 and s[0] == s[-1] == "`" and "`" not in s[1:-1]:
        return s[1:-1].strip()
    return s


def _clauses(parts: list[str]) -> list[str]:
    """A run-on sentence (a pasted brief) is cut at its clause marks, so a rule inside it is seen."""
    out: list[str] = []
    for part in parts:
        if len(part) <= MAX_SENTENCE:
            out.append(part)
            continue
        for clause in _CLAUSE_SPLIT.split(part):
            # a brief with no clause marks at all is read comma by comma ("…, lembrando que todas as
            # features vão estar atrás de uma remote config, …")
            out.extend([clause] if len(clause) <= MAX_SENTENCE else _COMMA.split(clause))
    return out


def _is_question(s: str) -> bool:
    return s.rstrip().endswith("?") or bool(QUESTION.match(s))


# a passage the person quotes (a tool's text, an error, a sentence of a reply) is what they point at,
# not what they say: "can you hide this from the replies? "IMPORTANT: always state CPM…"". Quoted words
# a few long ("use `x`", "the "dev" branch") stay part of the sentence; a quoted block line is quoted too.
_QUOTED = re.compile(r'"[^"\n]{40,}"|\u201c[^\u201d\n]{40,}\u201d|^\s*>[^\n]*$', re.M)


# a message this many lines long that goes on past its first paragraph carries pasted material (another
# chat's answer, a tool's report): a value stated there is that text's, not the person's knowledge
PASTED_LINES = 8
_PARAGRAPH = re.compile(r"\n\s*\n")


def _own_lead(text: str) -> str:
    """What the person wrote themselves, as far as facts go: a long message's first paragraph."""
    if text.count("\n") < PASTED_LINES:
        return text
    return _PARAGRAPH.split(text.strip(), maxsplit=1)[0]


def from_user(event: EventDoc, told: bool = False) -> list[Candidate]:
    """The rules, decisions and facts one message of the person states. An approved plan (the agent's,
    `EventDoc.is_plan`) states no rule of theirs: its "must"s are what its code is to do. A message the
    agent answered in words only (`told`) told it something: a rule there keeps what follows it."""
    # pasted code says nothing about taste
    text = re.sub(r"```.*?(```|$)", " ", event.text, flags=re.S) if "```" in event.text else event.text
    text = _QUOTED.sub(" ", text)
    own = _own_lead(text)
    said = sentences(text)
    # a sentence said twice in one message is pasted output (a console warning per element), not the
    # person's: they write a rule once
    pasted = {s for s, n in Counter(said).items() if n > 1}
    found = []
    carried: set[str] = set()  # sentences a rule before them carries on (`_with_what_follows`)
    for s in said:
        if _is_question(s) or s in pasted:
            continue
        span = {"line_start": event.line_no, "line_end": event.last_line}
        stated = _states_taste(s)
        # a choice stated as one ("X should run in the terminal instead of through node") stays a
        # decision; an obligation that chooses nothing is a rule
        chosen = not stated and _chooses(s)
        # a restriction the agent took in is a standing rule as "always" and "never" state one
        stated = stated or (not chosen and told and _restricts(s))
        rule = stated or (not chosen and _obligation(s))
        if rule and (event.is_plan or s in carried):
            # what an approved plan's code must do is no rule of the person's; a rule the one before it
            # carries on is said once
            continue
        if rule:
            whole = _with_what_follows(s, text) if told else s
            carried.update(sentences(whole)[1:])
            found.append(
                Candidate(
                    kind=MemoryKind.PREFERENCE,
                    content=_sentence(whole),
                    confidence=0.8 if stated else 0.7,
                    tags=[] if stated else [Tag.OBLIGATION],
                    details={"source": "user"},
                    **span,
                )
            )
        elif chosen:
            details: dict = {"source": "user"}
            if m := ALTERNATIVE.search(s):
                details["alternatives"] = [_alternative(m.group(1))]
            if m := RATIONALE.search(s):
                details["rationale"] = m.group(1).strip(" .")
            found.append(
                Candidate(
                    kind=MemoryKind.DECISION, content=_sentence(s), confidence=0.75, details=details, **span
                )
            )
        elif FACT_TOKEN.search(s) and FACT_VERB.search(s) and s in own:
            found.append(
                Candidate(
                    kind=MemoryKind.FACT,
                    content=_sentence(s),
                    confidence=0.7,
                    details={"source": "user"},
                    **span,
                )
            )
    return found


# a message this short that states a rule, and that the agent took in without acting on it, is that
# rule and what its line says after it: what is done instead, or how far it reaches ("We never log raw
# request bodies. Logs get the request ID, route and status code, nothing more."). A message the agent
# acted on asked for work, and what follows its rule may be that work ("Fix the login bug now.").
RULE_MESSAGE_CHARS = MAX_SENTENCE


def _with_what_follows(rule: str, text: str) -> str:
    """`rule` with the sentences after it on its line, when its message is no longer than
    RULE_MESSAGE_CHARS: up to the next question, rule, choice, request of the person's or code (a rule of
    its own, a decision, a task, a snippet)."""
    if len(text.strip()) > RULE_MESSAGE_CHARS:
        return rule
    for line in text.splitlines():
        said = sentences(line)
        if rule not in said:
            continue
        out = [rule]
        for s in said[said.index(rule) + 1 :]:
            if _is_question(s) or _states_taste(s) or _obligation(s) or _chooses(s) or asks(s) or is_code(s):
                break
            out.append(s)
        return " ".join(out)
    return rule


def _chooses(s: str) -> bool:
    """Whether a sentence states a choice ("we decided to go with PostgreSQL 16"), not what might have
    been."""
    return any(p.search(s) for p in DECISION) and not COUNTERFACTUAL.search(s)


def _states_taste(s: str) -> bool:
    """Whether a sentence states a standing rule as a taste: "always", "never", "prefer" and the like,
    in the person's language."""
    return any(p.search(s) for p in PREFERENCE) or _never_in_its_language(s)


def _obligation(s: str) -> bool:
    return any(p.search(s) for p in OBLIGATION) and not NOT_OBLIGATION.search(s)


# ... the Danish and Norwegian "kun" (only) is the Finnish "kun" (when)
_KUN = re.compile(r"(?<!\w)kun(?!\w)", re.I)
ONLY_IN_ITS_LANGUAGE = {"da": _KUN, "no": _KUN, "nb": _KUN, "nn": _KUN}


def _restricts(s: str) -> bool:
    """Whether a sentence restricts how something is done ("only through the bastion", "in every
    environment", "stays private"), as a rule does."""
    said = (
        ONLY_ELSEWHERE.search(s)
        or EVERY_ELSEWHERE.search(s)
        or STAYS_ELSEWHERE.search(s)
        or _in_its_language(s, ONLY_IN_ITS_LANGUAGE)
    )
    return bool(said) and not HEDGED.search(s)


_STOP = frozenset({"to", "with", "for", "in", "on", "because", "since", "and", "or", "as", "so"})


def _alternative(phrase: str) -> str:
    words = phrase.strip(" .,;").split()
    while len(words) > 1 and words[-1].lower() in _STOP:
        words.pop()
    return " ".join(words)


def _sentence(s: str) -> str:
    s = s.strip()
    return s[0].upper() + s[1:] if s else s


# --- what the person chose when the agent asked ---------------------------------------------------
ANSWER_CHARS = 300  # a longer answer is a message typed at length: its rules and facts, no one choice


def answers(events: list[EventDoc]) -> list[Candidate]:
    """A decision per question the agent put to the person and they answered: the question and what
    they chose ("Como prefere abordar a tradução …? → Apple Translation API (iOS 17.4+)"). The harness
    writes the answers into the tool's result as `"<question>"="<answer>"` (Claude Code: "User has
    answered your questions: …"); each question the call asked is looked up there by its own text, so
    a quote inside an answer cannot shift the pairs. An answer they typed themselves is their words: a
    rule or a fact it states is learned as from their message (a longer one is no single choice). A
    question the person set aside or rejected has no answer and gives nothing."""
    asked: dict[str, list[str]] = {}
    out: list[Candidate] = []
    for e in events:
        if e.is_sidechain:
            continue
        if e.role is Role.TOOL_CALL and (e.tool_name or "").lower() in ASK_TOOLS and e.tool_call_id:
            asked[e.tool_call_id] = _questions(e.tool_input)
        elif (
            e.role is Role.TOOL_RESULT
            and not e.is_error
            and (questions := asked.pop(e.tool_call_id or "", []))
        ):
            for question in questions:
                answer = _answer(e.text, question)
                if not answer:
                    continue
                # what they typed in an answer of their own ("Other") states rules and facts as a
                # message of theirs does; a short answer is itself the decision
                said = e.model_copy(update={"role": Role.USER, "text": answer, "tool_call_id": None})
                typed = from_user(said)
                if len(answer) <= ANSWER_CHARS:
                    typed = [c for c in typed if c.kind is not MemoryKind.DECISION]
                    out.append(
                        Candidate(
                            kind=MemoryKind.DECISION,
                            content=f"{question} → {answer}",
                            tags=[Tag.ANSWER],
                            confidence=0.75,
                            details={"source": "user", "question": question, "answer": answer},
                            line_start=e.line_no,
                            line_end=e.last_line,
                        )
                    )
                out.extend(typed)
    return out


def _questions(tool_input: dict | str | None) -> list[str]:
    """The questions a call asked: `questions[].question`, or the one `question`."""
    if not isinstance(tool_input, dict):
        return []
    listed = tool_input.get("questions")
    found = [q.get("question") for q in listed if isinstance(q, dict)] if isinstance(listed, list) else []
    found.append(tool_input.get("question"))
    return [q.strip() for q in found if isinstance(q, str) and q.strip()]


def _answer(result: str, question: str) -> str:
    """What the result says the person answered to `question`: the quoted text after `"<question>"="`,
    to the closing quote that ends the pair (before the next pair, the harness's closing sentence or the
    end)."""
    at = result.find(f'"{question}"="')
    if at < 0:
        return ""
    rest = result[at + len(question) + 4 :]
    end = re.search(r'"(?=, "|\. |\.?\s*$)', rest)
    return (rest[: end.start()] if end else "").strip()
