"""Write ``demo_corpus.jsonl``: short fictitious English clinical notes with exact PII spans.

Run ``python -m site_agent.demo.make_demo_corpus`` to regenerate; the output is identical on
every run (fixed seed, fixed word lists). Every person, date, number, address and hospital
is invented; any resemblance to a real one is a coincidence of common words.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

SEED = 20240607
N_NOTES = 48

FIRST = (
    "Alma",
    "Bruno",
    "Clara",
    "Dmitri",
    "Edith",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kira",
    "Lionel",
    "Maren",
    "Nils",
    "Olga",
    "Pavel",
    "Quinn",
    "Rosa",
    "Silas",
    "Tamsin",
)
LAST = (
    "Abernethy",
    "Brightwater",
    "Castellan",
    "Dunmore",
    "Everly",
    "Fairbanks",
    "Gillespie",
    "Hollis",
    "Ingram",
    "Jessop",
    "Kettering",
    "Lockhart",
    "Marchetti",
    "Northcote",
    "Oakley",
    "Pemberton",
    "Quarles",
    "Rowntree",
    "Sandford",
    "Thorne",
)
HOSPITALS = (
    "St Aldric Hospital",
    "Riverside General Hospital",
    "Northfield Infirmary",
    "Mercy Vale Medical Center",
    "Harbor Point Clinic",
    "Westbrook Community Hospital",
)
CITIES = ("Larkston", "Millbridge", "Ashford Vale", "Corran Bay", "Elmsworth", "Fenwick")
STREETS = (
    "12 Juniper Lane",
    "48 Quarry Road",
    "7 Beacon Street",
    "230 Orchard Avenue",
    "5 Kestrel Close",
    "91 Mill Street",
)
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
FINDINGS = (
    "presented with chest pain radiating to the left arm",
    "reported three days of fever and productive cough",
    "was referred for evaluation of persistent headaches",
    "presented after a fall with pain in the right hip",
    "complained of shortness of breath on exertion",
    "was seen for follow-up of poorly controlled diabetes",
    "reported abdominal pain and nausea since the previous evening",
    "was admitted with confusion and a urinary tract infection",
)
PLANS = (
    "An ECG showed sinus rhythm and troponin was negative.",
    "Chest X-ray showed a right lower lobe consolidation; antibiotics were started.",
    "MRI of the brain was unremarkable and analgesia was adjusted.",
    "X-ray confirmed a non-displaced fracture; orthopaedics were consulted.",
    "Spirometry was ordered and inhalers were reviewed.",
    "Metformin was increased and dietary advice was given.",
    "Ultrasound showed gallstones without cholecystitis.",
    "Intravenous fluids and antibiotics were given with good response.",
)

Segment = tuple[str, str | None]


class Note:
    """Builds text and spans together so every offset is exact by construction."""

    def __init__(self) -> None:
        self.text = ""
        self.spans: list[dict[str, object]] = []

    def add(self, *segments: Segment) -> None:
        for piece, label in segments:
            if label is not None:
                self.spans.append(
                    {"start": len(self.text), "end": len(self.text) + len(piece), "label": label}
                )
            self.text += piece


def _date(rng: random.Random) -> str:
    day, month, year = rng.randint(1, 28), rng.randint(1, 12), rng.randint(2015, 2023)
    if rng.random() < 0.5:
        return f"{day:02d}/{month:02d}/{year}"
    return f"{day} {MONTHS[month - 1]} {year}"


def _phone(rng: random.Random) -> str:
    return f"(555) {rng.randint(100, 999)}-{rng.randint(1000, 9999)}"


def _person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(FIRST), rng.choice(LAST)


# What each kind of identifier is called in a label scheme (None: the scheme leaves it
# unannotated). Every scheme maps onto SHARED, the federation's coarse label space.
Fields = dict[str, str | None]
SHARED: dict[str, str] = {
    "patient": "PER",
    "doctor": "PER",
    "record": "ID",
    "hospital": "ORG",
    "date": "TIME",
    "age": "AGE",
    "city": "LOC",
    "street": "LOC",
    "phone": "CONTACT",
}
SCHEMES: dict[str, Fields] = {
    # the shipped demo corpus: short generic names
    "ward": {
        "patient": "PER",
        "doctor": "PER",
        "record": "ID",
        "hospital": "HOSPITAL",
        "date": "DATE",
        "age": "AGE",
        "city": "LOCATION",
        "street": "LOCATION",
        "phone": "PHONE",
    },
    # a fine-grained scheme in the style of i2b2: who, which number, which kind of place
    "fine": {
        "patient": "PATIENT",
        "doctor": "DOCTOR",
        "record": "MEDICAL_RECORD",
        "hospital": "ORGANIZATION",
        "date": "DATE",
        "age": "AGE",
        "city": "CITY",
        "street": "STREET",
        "phone": "PHONE",
    },
    # a coarse scheme whose guidelines do not annotate ages (they stay in the text)
    "coarse": {
        "patient": "PER",
        "doctor": "PER",
        "record": "ID",
        "hospital": "ORG",
        "date": "TIME",
        "age": None,
        "city": "LOC",
        "street": "LOC",
        "phone": "CONTACT",
    },
}


def scheme_mapping(scheme: str) -> dict[str, str]:
    """The scheme's labels -> the shared coarse labels (what a label mapping file holds)."""
    return {label: SHARED[field] for field, label in SCHEMES[scheme].items() if label is not None}


def ward_note(rng: random.Random, note: Note, f: Fields, index: int) -> None:
    """An admission or ward note: header, history, address, follow-up, signature."""
    first, last = _person(rng)
    doctor = " ".join(_person(rng))
    style = index % 3
    if style == 0:
        note.add(
            ("Patient: ", None),
            (f"{first} {last}", f["patient"]),
            (". MRN: ", None),
            (f"MRN{rng.randint(100000, 999999)}", f["record"]),
            (".\n", None),
        )
    elif style == 1:
        note.add(
            ("Admission note for ", None),
            (f"{first} {last}", f["patient"]),
            (", admitted to ", None),
            (rng.choice(HOSPITALS), f["hospital"]),
            (" on ", None),
            (_date(rng), f["date"]),
            (".\n", None),
        )
    else:
        note.add(("Clinic letter dated ", None), (_date(rng), f["date"]), (".\n", None))
    note.add(
        ("The patient, a ", None),
        (f"{rng.randint(19, 92)}-year-old", f["age"]),
        (" resident of ", None),
        (rng.choice(CITIES), f["city"]),
        (", ", None),
        (rng.choice(FINDINGS), None),
        (". ", None),
        (rng.choice(PLANS), None),
        ("\n", None),
    )
    if rng.random() < 0.6:
        note.add(
            ("Home address: ", None),
            (rng.choice(STREETS), f["street"]),
            (", ", None),
            (rng.choice(CITIES), f["city"]),
            (". Contact: ", None),
            (_phone(rng), f["phone"]),
            (".\n", None),
        )
    if rng.random() < 0.4:
        note.add(
            ("Follow-up at ", None),
            (rng.choice(HOSPITALS), f["hospital"]),
            (" on ", None),
            (_date(rng), f["date"]),
            (". ", None),
            ("Mr/Ms ", None),
            (last, f["patient"]),
            (" agreed with the plan.\n", None),
        )
    note.add(("Signed: Dr ", None), (doctor, f["doctor"]), (".", None))


def letter_note(rng: random.Random, note: Note, f: Fields, index: int) -> None:
    """An outpatient letter to the family doctor: salutation, one paragraph, sign-off."""
    first, last = _person(rng)
    gp, consultant = " ".join(_person(rng)), " ".join(_person(rng))
    note.add(
        ("Outpatient clinic letter\n", None),
        (rng.choice(HOSPITALS), f["hospital"]),
        (", ", None),
        (_date(rng), f["date"]),
        ("\nDear Dr ", None),
        (gp, f["doctor"]),
        (",\nRe: ", None),
        (f"{first} {last}", f["patient"]),
        (", hospital number ", None),
        (f"H{rng.randint(1000000, 9999999)}", f["record"]),
        ("\nI reviewed this ", None),
        (f"{rng.randint(19, 92)} year old", f["age"]),
        (" from ", None),
        (rng.choice(CITIES), f["city"]),
        (" in clinic today. The patient ", None),
        (rng.choice(FINDINGS), None),
        (". ", None),
        (rng.choice(PLANS), None),
    )
    if index % 2 == 0:
        note.add(
            (" Please write to ", None),
            (rng.choice(STREETS), f["street"]),
            (" or call ", None),
            (_phone(rng), f["phone"]),
            (" with any concerns.", None),
        )
    note.add(("\nYours sincerely,\nDr ", None), (consultant, f["doctor"]))


def radiology_note(rng: random.Random, note: Note, f: Fields, index: int) -> None:
    """A radiology report: labelled header lines, findings and an impression."""
    first, last = _person(rng)
    year, month, day = rng.randint(2015, 2023), rng.randint(1, 12), rng.randint(1, 28)
    note.add(
        ("RADIOLOGY REPORT\nEXAM DATE: ", None),
        (f"{year}-{month:02d}-{day:02d}", f["date"]),
        ("\nACCESSION: ", None),
        (f"RAD-{rng.randint(10000, 99999)}", f["record"]),
        ("\nPATIENT: ", None),
        (f"{last.upper()}, {first}", f["patient"]),
        (" AGE: ", None),
        (str(rng.randint(19, 92)), f["age"]),
        ("\nREFERRER: Dr ", None),
        (" ".join(_person(rng)), f["doctor"]),
        (", ", None),
        (rng.choice(HOSPITALS), f["hospital"]),
        (", ", None),
        (rng.choice(CITIES), f["city"]),
        ("\nFINDINGS: ", None),
        (rng.choice(PLANS), None),
        ("\nIMPRESSION: patient ", None),
        (rng.choice(FINDINGS), None),
        (".\nReported by Dr ", None),
        (" ".join(_person(rng)), f["doctor"]),
        (".", None),
    )


NoteWriter = Callable[[random.Random, Note, Fields, int], None]
STYLES: dict[str, NoteWriter] = {
    "ward": ward_note,
    "letter": letter_note,
    "radiology": radiology_note,
}


def make_note(
    index: int, rng: random.Random, style: str = "ward", scheme: str = "ward"
) -> dict[str, object]:
    note = Note()
    STYLES[style](rng, note, SCHEMES[scheme], index)
    return {
        "id": f"{style}-{index:03d}" if style != "ward" else f"demo-{index:03d}",
        "text": note.text,
        "spans": note.spans,
        "source": f"{style}-{index % 4}" if style != "ward" else f"demo-ward-{index % 4}",
    }


def build_corpus(
    n: int = N_NOTES, seed: int = SEED, style: str = "ward", scheme: str = "ward"
) -> list[dict[str, object]]:
    """``n`` notes written in ``style`` and annotated with ``scheme`` (defaults: the shipped
    demo corpus)."""
    rng = random.Random(seed)
    return [make_note(i, rng, style, scheme) for i in range(n)]


def write_corpus(out: Path, rows: list[dict[str, object]]) -> Path:
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def main(argv: list[str]) -> None:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("demo_corpus.jsonl")
    rows = build_corpus()
    write_corpus(out, rows)
    print(f"wrote {len(rows)} notes to {out}")


if __name__ == "__main__":
    main(sys.argv)
