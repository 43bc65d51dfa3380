"""Surrogate providers, one small function per PII family of ``shared.label_families``.

Each keeps the original's shape (seed paper 004: pseudonymised text must stay as useful as
the real text): dates keep their format, numbers their layout, names their number of words,
their titles (``Dr.``, ``Sra.``) and initials, care sites their kind words (``Hospital``,
``Medical Center``); the letter case is matched afterwards (``replace.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from site_agent.pseudonymise.dates import shift_date
from site_agent.pseudonymise.surrogates import NoteContext, register_family, shape_preserving

_TIME = re.compile(r"(\d{1,2}):(\d{2})")
_WORD = re.compile(r"^(\W*)(.*?)([.,;:)]*)$")
_TITLE_WORDS = "dr dra mr mrs ms miss mx prof sr sra srta don doña dª d herr frau sir dame rev"
_CREDENTIALS = "md rn np phd dds jr snr"
TITLES = frozenset(f"{_TITLE_WORDS} {_CREDENTIALS}".split())
_CARE_WORDS = (
    "hospital hosp hospitalario clinic clinica clínica center centre centro medical general"
    " memorial university universitario universitaria health healthcare salud institute"
    " instituto institución fundación foundation complejo sanatorio ambulatorio consultorio"
    " residencia nursing home rehab rehabilitation care unit unidad regional county community"
    " children's childrens infantil materno policlínico primary atención primaria st st. saint"
    " san santa sant inc llc ltd gmbh sa sl corp co facultad faculty universidad school"
    " escuela servicio service department departamento laboratorio laboratory lab labs"
    " diagnostic diagnostics scientific ciencias sciences planta floor ward"
)
# joining words of names: kept wherever they stand
_FUNCTION_WORDS = "de del la las los el y e i d' d´ of the and for & von van der"
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
CARE_WORDS = frozenset(_CARE_WORDS.split()) | FUNCTION_WORDS | TITLES
_STREET_WORDS = (
    "calle c/ c avenida avda av avenido paseo plaza pza carretera ctra camino ronda travesía"
    " rambla vía via km piso puerta bajo street st road rd avenue ave lane ln drive boulevard"
    " blvd way court ct place pl apt suite unit floor north south east west n s e w dcha dch"
    " drcha izda izq s/n sn bis esc escalera portal bloque planta local esquina"
)
STREET_WORDS = frozenset(_STREET_WORDS.split()) | FUNCTION_WORDS


@register_family("email")
def email(surface: str, note: NoteContext) -> str:
    return str(note.fake.email())


@register_family("url")
def url(surface: str, note: NoteContext) -> str:
    if re.fullmatch(r"[\d.]+", surface):
        return str(note.fake.ipv4())
    return str(note.fake.url()).rstrip("/") if "/" in surface else str(note.fake.domain_name())


@register_family("phone")
def phone(surface: str, note: NoteContext) -> str:
    """Keep the site's number layout (spaces, prefixes) with fresh digits."""
    return shape_preserving(surface, note)


@register_family("id")
def identifier(surface: str, note: NoteContext) -> str:
    return shape_preserving(surface, note)


@register_family("date")
def date(surface: str, note: NoteContext) -> str:
    """The note's shift in the original format; times of day get a new time, words stay."""
    moved = shift_date(
        surface, note.date_shift_days, month_first=note.month_first, language=note.language
    )
    if moved is not None:
        return moved
    time = _TIME.search(surface)
    if time:
        hour, minute = note.rng.randrange(24), note.rng.randrange(60)
        hours = f"{hour:0{len(time.group(1))}d}" if len(time.group(1)) == 2 else str(hour)
        new = f"{hours}:{minute:02d}"
        return surface[: time.start()] + new + surface[time.end() :]
    if re.search(r"\d", surface):
        return shape_preserving(surface, note)
    return surface  # "Christmas", "ayer": not a date to move


@register_family("age")
def age(surface: str, note: NoteContext) -> str:
    """Move the number by the note's age shift, keep the unit words (``70 años``)."""
    if not re.search(r"\d", surface):
        return surface
    return re.sub(
        r"\d+", lambda m: str(max(0, int(m.group()) + note.age_shift_years)), surface, count=1
    )


@register_family("sex")
def sex(surface: str, note: NoteContext) -> str:
    """Kept as is: not identifying alone, and a random swap contradicts grammatical gender."""
    return surface


@register_family("country")
def country(surface: str, note: NoteContext) -> str:
    return str(note.fake.country())


@register_family("street")
def street(surface: str, note: NoteContext) -> str:
    """Street-kind words (``Calle``, ``c/``, ``Avenue``) stay, numbers get fresh digits, the
    names change: ``c/ del Abedul 5-7, 2º dcha`` keeps its layout."""
    return _map_words(surface, lambda core, i: _proper_word(core, note, STREET_WORDS))


@register_family("place")
def place(surface: str, note: NoteContext) -> str:
    """Postal codes keep their shape; place names become a locale city."""
    if re.fullmatch(r"[\d\s-]+", surface):
        return shape_preserving(surface, note)
    return str(note.fake.city())


@register_family("care_site")
def care_site(surface: str, note: NoteContext) -> str:
    """Kind words stay (``Hospital``, ``Medical Center``, ``St.``); the proper names change.

    Joining words (``de``, ``of``) and titles stay too, numbers get fresh digits; a name without any
    kind word becomes surnames of as many words (``Mercy`` -> ``Kennedy``), never a city.
    """
    return _map_words(surface, lambda core, i: _proper_word(core, note, CARE_WORDS))


def _proper_word(core: str, note: NoteContext, kind_words: frozenset[str]) -> str:
    """Digits are redrawn, kind and joining words stay, letters (``5 B``) get another
    letter, every other word (``Getafe``, ``pez``) becomes a surname.

    A name made only of kind words ("Facultad de Ciencias de la Salud") names no one and
    stays as it is."""
    if any(c.isdigit() for c in core):
        return re.sub(r"\d", lambda _: note.rng.choice("0123456789"), core)
    if core.lower() in kind_words:
        return core
    if len(core) == 1:
        return note.rng.choice("ABCDEFGHIJKLMNOPRSTV")
    return _remembered(core, note, first=False)


@register_family("profession")
def profession(surface: str, note: NoteContext) -> str:
    return str(note.fake.job()).lower() if surface[:1].islower() else str(note.fake.job())


@register_family("relative")
def relative(surface: str, note: NoteContext) -> str:
    """Relation words (``madre``, ``primo materno``) stay; relatives' names change as names."""
    if not any(c.isupper() for c in surface):
        return surface
    return name(surface, note)


@register_family("name")
def name(surface: str, note: NoteContext) -> str:
    """Titles and credentials stay, initials stay initials, the name words change.

    With two or more name words the first is a given name and the rest surnames (a comma
    after the first, ``Smith, John``, makes it the surname); one word after a title is a
    surname. Each real word keeps one surrogate within the note.
    """
    words = [_core(w) for w in surface.split()]
    names = [i for i, core in enumerate(words) if core and core.lower().rstrip(".") not in TITLES]
    titled = len(names) < len([w for w in words if w])
    comma_first = bool(names) and surface.split()[names[0]].endswith(",")

    def role(core: str, i: int) -> str:
        if i not in names:
            return core
        if len(core.rstrip(".")) == 1:
            return note.rng.choice("ABCDEFGHIJKLMNOPRSTVW") + core[1:]
        if len(names) == 1:
            first = not titled and note.rng.random() < 0.5
        else:
            first = (i == names[0]) != comma_first
        return _remembered(core, note, first=first)

    return _map_words(surface, role)


def _core(word: str) -> str:
    match = _WORD.match(word)
    return match.group(2) if match else word


def _map_words(surface: str, change: Callable[[str, int], str]) -> str:
    """Apply ``change(core, index)`` to the core of every word; spaces and punctuation stay."""
    pieces = re.split(r"(\s+)", surface)
    out: list[str] = []
    index = 0
    for piece in pieces:
        if not piece or piece.isspace():
            out.append(piece)
            continue
        match = _WORD.match(piece)
        lead, core, tail = match.groups() if match else ("", piece, "")
        new = change(core, index) if core else core
        out.append(f"{lead}{_same_word_case(core, new)}{tail}")
        index += 1
    return "".join(out)


def _same_word_case(original: str, new: str) -> str:
    if len(original) > 1 and original.isupper():
        return new.upper()
    if original.islower():
        return new.lower()
    return new


def _remembered(core: str, note: NoteContext, *, first: bool) -> str:
    """One surrogate per real word within the note; hyphenated names change part by part.

    Faker names of several words (German ``Koch II``) are redrawn: a word stays one word.
    """
    key = core.casefold()
    if key not in note.name_words:
        parts = core.split("-")
        drawn = []
        for part in parts:
            new = part
            for _ in range(5):
                new = str(note.fake.first_name() if first else note.fake.last_name())
                if new.casefold() != part.casefold() and " " not in new and "-" not in new:
                    break
            drawn.append(new)
        note.name_words[key] = "-".join(drawn)
    return note.name_words[key]
