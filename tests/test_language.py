"""Language detection: script rules for CJK, function words for plain English and for telling
prose from code, the statistical detector for the rest. The texts here were written for
these tests, a few per language, short and long, as users type them."""

from __future__ import annotations

import pytest

from habitus.extract import language

LABELLED = {
    "en": [
        "From now on, always run the linter before committing.",
        "Please don't push to main, open a pull request instead.",
        "fix the failing test in the parser and then run it again",
        "Can you make sure the docs build before you tag a release?",
        "I'm getting: \n\nAccess to script at 'file:///Users/me/code/app/app.js' from origin 'null' has been blocked by CORS policy",
    ],
    "fr": [
        "Bonjour, je voudrais que tu utilises toujours pytest pour les tests",
        "Merci de ne jamais modifier le fichier de configuration sans me demander.",
        "Il faut lancer les tests avant chaque commit, c'est important.",
    ],
    "de": [
        "Bitte immer die Tests vor dem Commit laufen lassen",
        "Ich möchte, dass du für dieses Projekt nur pnpm benutzt und nicht npm.",
        "Wenn der Build fehlschlägt, dann zeig mir bitte die ganze Ausgabe.",
    ],
    "es": [
        "Por favor usa siempre pnpm en este proyecto",
        "No quiero que cambies los archivos de configuración sin preguntarme primero.",
        "Hay que ejecutar las pruebas antes de cada commit, es muy importante.",
    ],
    "it": [
        "Usa sempre pytest per i test di questo progetto, grazie",
        "Non modificare mai il file di configurazione senza chiedermelo prima.",
    ],
    "pt": [
        "Use sempre o pnpm neste projeto, não o npm",
        "Eu quero que você rode os testes antes de cada commit, por favor.",
    ],
    "ru": ["Всегда используй pytest для тестов в этом проекте"],
    "zh": ["以后都用 uv 管理依赖，不要用 pip。"],
    "ja": ["これからはいつもテストを実行してからコミットしてください。"],
}

#: Not prose: code, logs, commands, placeholders. Nothing is learnt from their language, and
#: the statistical detector is not asked about them.
NOT_PROSE = [
    "[REDACTED_MESSAGE len=516 sha=05857781]",
    "Traceback (most recent call last): File x.py line 3 KeyError foo",
    "run pytest -q --maxfail=1 tests/unit",
    "npm ERR! code ERESOLVE unable to resolve dependency tree",
]


@pytest.mark.parametrize(("code", "text"), [(code, text) for code, texts in LABELLED.items() for text in texts])
def test_detects_the_language_of_prose(code: str, text: str) -> None:
    assert language.detect(text) == code


@pytest.mark.parametrize("text", LABELLED["en"] + NOT_PROSE)
def test_english_and_non_prose_are_decided_without_the_statistical_detector(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its models take about 0.1 s to load in every reading process: plain English and text
    that is not prose must not need them."""

    def refuse() -> None:
        raise AssertionError("the statistical detector was asked")

    monkeypatch.setattr(language, "_detector", refuse)
    assert language.detect(text) == ("en" if text in LABELLED["en"] else None)
