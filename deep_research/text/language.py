"""The report's language: which one a question is written in, how a setting names one, and
the headings code adds to a report, in that language.

Detection is by script first (Han, kana, Hangul, Cyrillic, Arabic, ... name their language
outright), then, for Latin script, by the short words every sentence of a language has.
Statistical detectors (langdetect, py3langid) guess poorly on one short sentence and bring
a model file; a question the rules below cannot place gets "" and the writer is told to use
the language of the question, which any chat model can follow.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Literal

from deep_research.text import language_names

# What detection reads of a question: its start says its language as well as the whole.
SAMPLE_CHARS = 2_000

# ISO 639-1 code: the language's English name (what the prompt says) and its own name.
LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("English", "English"),
    "de": ("German", "Deutsch"),
    "fr": ("French", "français"),
    "es": ("Spanish", "español"),
    "it": ("Italian", "italiano"),
    "pt": ("Portuguese", "português"),
    "nl": ("Dutch", "Nederlands"),
    "pl": ("Polish", "polski"),
    "tr": ("Turkish", "Türkçe"),
    "vi": ("Vietnamese", "Tiếng Việt"),
    "ru": ("Russian", "русский"),
    "uk": ("Ukrainian", "українська"),
    "zh": ("Chinese", "中文"),
    "ja": ("Japanese", "日本語"),
    "ko": ("Korean", "한국어"),
    "ar": ("Arabic", "العربية"),
    "fa": ("Persian", "فارسی"),
    "he": ("Hebrew", "עברית"),
    "el": ("Greek", "Ελληνικά"),
    "hi": ("Hindi", "हिन्दी"),
    "th": ("Thai", "ไทย"),
}

# Latin-script languages told apart by their commonest short words: each is one vote.
_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "en": "the and of is are what how which why does do did with for in on this was "
        "who about to a an can should when where were will would it its has have between",
        "de": "der die das und ist sind wie was welche warum nicht mit für ein eine im",
        "fr": "le la les et est sont quels quelle pourquoi comment des du une dans pour",
        "es": "el los las la y es son cuál cuáles qué cómo por qué del de una en para",
        "it": "il lo gli e è di sono quali quale quanto perché della degli una nel per",
        "pt": "o os as é são quais qual porque como da dos uma em para não",
        "nl": "de het en is zijn wat hoe welke waarom niet met voor een van",
        "pl": "i w jest są jak co dlaczego które nie się na dla z",
        "tr": "ve bir bu ne nasıl neden için ile mi mı değil olan",
    }.items()
}
# Words two lists share count for neither.
_SHARED = frozenset(
    word
    for code, words in _FUNCTION_WORDS.items()
    for other, others in _FUNCTION_WORDS.items()
    if other != code
    for word in words & others
)
# Letters only Vietnamese writes among the Latin-script languages above.
_VIETNAMESE = re.compile("[ơưđƠƯĐ\u1ea0-\u1ef9]")
# A language is named only on this many votes, and by as many more than the next one: a
# name or a title in another language ("Who founded Die Zeit?", "Tell me about Jürgen
# Klopp") must not turn an English question's report German.
MIN_VOTES = 2
MIN_LEAD = 2
_WORD = re.compile(r"[^\W\d_]+")


def _script(char: str) -> str:
    """The script a letter is written in, from its Unicode name ("" for a non-letter)."""
    if not char.isalpha():
        return ""
    name = unicodedata.name(char, "")
    if name.startswith(("CJK UNIFIED", "CJK COMPATIBILITY IDEOGRAPH")):
        return "han"
    if name.startswith(("HIRAGANA", "KATAKANA")):
        return "kana"
    return name.split(" ", 1)[0].lower()  # LATIN, CYRILLIC, ARABIC, HANGUL, GREEK, ...


def detect(text: str) -> str:
    """The ISO 639-1 code of the language `text` is written in, or "" when it is unclear."""
    sample = text[:SAMPLE_CHARS]
    # One Han, kana or Hangul character carries about a word: weigh it as three letters.
    scripts = Counter(_script(char) for char in sample)
    scripts.pop("", None)
    for wide in ("han", "kana", "hangul"):
        if wide in scripts:
            scripts[wide] *= 3
    if not scripts:
        return ""
    script = scripts.most_common(1)[0][0]
    if script in ("han", "kana"):
        return "ja" if scripts["kana"] else "zh"
    if script == "cyrillic":
        return "uk" if re.search("[іїєґІЇЄҐ]", sample) else "ru"
    if script == "arabic":
        return "fa" if re.search("[پچژگ]", sample) else "ar"
    by_script = {"hangul": "ko", "hebrew": "he", "greek": "el", "devanagari": "hi", "thai": "th"}
    if script in by_script:
        return by_script[script]
    if script != "latin":
        return ""
    if _VIETNAMESE.search(sample):
        return "vi"
    return _latin_language(sample)


def _latin_language(sample: str) -> str:
    """The Latin-script language whose short words `sample` uses most, if one leads."""
    votes: Counter[str] = Counter()
    for word in _WORD.findall(sample.lower()):
        if word in _SHARED:
            continue
        for code, words in _FUNCTION_WORDS.items():
            if word in words:
                votes[code] += 1
    ranked = [*votes.most_common(2), ("", 0), ("", 0)]
    (leader, most), (_, next_most) = ranked[0], ranked[1]
    return leader if most >= MIN_VOTES and most - next_most >= MIN_LEAD else ""


# A `report_language` that is no code or name above must name a language Unicode's CLDR
# knows (`text/language_names.py`: "Swahili", "Brazilian Portuguese", "Farsi", codes such
# as "sw"; case, accents and hyphens aside); anything else, a phrase such as "ignore the
# rules" included, is refused, as it is no language. The writer is told CLDR's name.
_OTHER_NAME_CHARS = 40


def setting_language(value: str) -> str:
    """A `report_language` value as a code of `LANGUAGES`, or another language's English
    name (headings then stay English); "" for "auto". Raises `ValueError` for anything else."""
    value = " ".join(value.split())
    if value.lower() in ("", "auto"):
        return ""
    for code, names in LANGUAGES.items():
        if value.lower() in (code, names[0].lower(), names[1].lower()):
            return code
    known = language_names.code_of(value) if len(value) <= _OTHER_NAME_CHARS else None
    if known is not None:
        return known if known in LANGUAGES else language_names.NAMES[known]
    raise ValueError(
        "not a language: give 'auto' (the question's "
        f"language), a code such as {', '.join(list(LANGUAGES)[:6])}, or a name such as "
        "German or Swahili"
    )


def language_name(language: str) -> str:
    """The English name the writer is told: a code's, or a name as the setting gave it."""
    return LANGUAGES[language][0] if language in LANGUAGES else language


HeadingKey = Literal["sources", "retrieved", "gaps", "budget", "cut", "evidence"]

# The headings code writes into a report (and the word before a source's retrieval date).
# A language missing here gets English ones.
HEADINGS: dict[str, dict[HeadingKey, str]] = {
    "en": {
        "sources": "Sources",
        "retrieved": "retrieved",
        "gaps": "Research gaps",
        "budget": "Cost budget",
        "cut": "Cut short",
        "evidence": "Quoted evidence",
    },
    "de": {
        "sources": "Quellen",
        "retrieved": "abgerufen",
        "gaps": "Forschungslücken",
        "budget": "Kostenbudget",
        "cut": "Abgebrochen",
        "evidence": "Zitierte Belege",
    },
    "fr": {
        "sources": "Sources",
        "retrieved": "consulté le",
        "gaps": "Lacunes de la recherche",
        "budget": "Budget",
        "cut": "Coupé",
        "evidence": "Extraits cités",
    },
    "es": {
        "sources": "Fuentes",
        "retrieved": "consultado el",
        "gaps": "Lagunas de la investigación",
        "budget": "Presupuesto",
        "cut": "Cortado",
        "evidence": "Pruebas citadas",
    },
    "it": {
        "sources": "Fonti",
        "retrieved": "consultato il",
        "gaps": "Lacune della ricerca",
        "budget": "Budget",
        "cut": "Interrotto",
        "evidence": "Prove citate",
    },
    "pt": {
        "sources": "Fontes",
        "retrieved": "acessado em",
        "gaps": "Lacunas da pesquisa",
        "budget": "Orçamento",
        "cut": "Interrompido",
        "evidence": "Evidências citadas",
    },
    "ru": {
        "sources": "Источники",
        "retrieved": "дата обращения",
        "gaps": "Пробелы в исследовании",
        "budget": "Бюджет",
        "cut": "Оборвано",
        "evidence": "Цитаты из источников",
    },
    "zh": {
        "sources": "来源",
        "retrieved": "检索于",
        "gaps": "研究空白",
        "budget": "费用预算",
        "cut": "内容被截断",
        "evidence": "引用的原文",
    },
    "ja": {
        "sources": "出典",
        "retrieved": "取得日",
        "gaps": "調査できなかった点",
        "budget": "費用の上限",
        "cut": "途中で切れた回答",
        "evidence": "引用した原文",
    },
    "ko": {
        "sources": "출처",
        "retrieved": "검색일",
        "gaps": "조사하지 못한 부분",
        "budget": "비용 한도",
        "cut": "잘린 답변",
        "evidence": "인용한 원문",
    },
    "vi": {
        "sources": "Nguồn",
        "retrieved": "truy cập",
        "gaps": "Những phần chưa nghiên cứu được",
        "budget": "Ngân sách",
        "cut": "Bị cắt ngắn",
        "evidence": "Trích dẫn nguyên văn",
    },
}


def heading(key: HeadingKey, language: str) -> str:
    """A heading code adds to the report, in `language` where the table has it."""
    return HEADINGS.get(language, HEADINGS["en"])[key]


def sources_titles() -> frozenset[str]:
    """Every Sources heading above, lower-cased: the model's own list under one is dropped."""
    return frozenset(table["sources"].lower() for table in HEADINGS.values())
