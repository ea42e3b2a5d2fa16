"""The Simplified Chinese catalogue is complete: no entry untranslated, none fuzzy."""

from __future__ import annotations

import re
from pathlib import Path

PO = Path(__file__).resolve().parent.parent / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def entries(text: str) -> list[dict]:
    """Every active entry of a .po file: its flags, msgid, plural id and msgstr(s).

    Obsolete entries (``#~``) are left out; a header entry has an empty msgid."""
    found: list[dict] = []
    entry: dict = {}
    field = None

    def finish():
        if "msgid" in entry:
            found.append(entry.copy())
        entry.clear()

    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            finish()
            field = None
        elif line.startswith("#~"):
            continue
        elif line.startswith("#,"):
            if "msgid" in entry:
                finish()
            entry.setdefault("flags", set()).update(f.strip() for f in line[2:].split(","))
        elif line.startswith("#"):
            if "msgid" in entry and field is not None and field.startswith("msgstr"):
                finish()
        else:
            keyword, _, rest = line.partition(" ")
            if keyword.startswith("msg"):
                if keyword in ("msgid", "msgctxt") and any(k.startswith("msgstr") for k in entry):
                    finish()
                field = keyword
                entry.setdefault("line", number)
                entry[field] = ""
                rest = rest.strip()
            else:
                rest = line
            match = _STRING.fullmatch(rest)
            assert match and field, f"django.po line {number}: cannot read {line!r}"
            entry[field] += match.group(1)
    finish()
    return found


def problems(text: str) -> list[str]:
    """``line N: msgid`` for every entry that is fuzzy or has an empty translation."""
    bad = []
    for entry in entries(text):
        if entry["msgid"] == "" and "msgctxt" not in entry:
            continue  # the header
        strings = [v for k, v in entry.items() if k.startswith("msgstr")]
        if "fuzzy" in entry.get("flags", set()) or not strings or not all(strings):
            bad.append(f"line {entry['line']}: {entry['msgid'][:80]}")
    return bad


def test_every_entry_is_translated_and_none_is_fuzzy():
    assert problems(PO.read_text(encoding="utf-8")) == []


def test_the_check_finds_untranslated_fuzzy_and_plural_gaps():
    sample = (
        'msgid ""\nmsgstr ""\n"Language: zh_Hans\\n"\n\n'
        'msgid "Done"\nmsgstr "完成"\n\n'
        'msgid "Empty"\nmsgstr ""\n\n'
        '#, fuzzy, python-format\nmsgid "Fuzzy %(n)s"\nmsgstr "模糊 %(n)s"\n\n'
        'msgid "One"\nmsgid_plural "Many"\nmsgstr[0] ""\n\n'
        'msgid ""\n"Split "\n"across lines"\nmsgstr ""\n"分"\n"行"\n\n'
        '#~ msgid "Old"\n#~ msgstr ""\n'
    )
    assert problems(sample) == ["line 8: Empty", "line 12: Fuzzy %(n)s", "line 15: One"]
    assert [e["msgid"] for e in entries(sample)][-1] == "Split across lines"
