"""Write ``demo_corpus.jsonl``: short fictitious English clinical notes with exact PII spans.

Run ``python -m site_agent.demo.make_demo_corpus`` to regenerate; the output is identical on
every run (fixed seed, fixed word lists). Every person, date, number, address and hospital
is invented; any resemblance to a real one is a coincidence of common words.
"""

from __future__ import annotations

import json
import random
import sys
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


def make_note(index: int, rng: random.Random) -> dict[str, object]:
    first, last = _person(rng)
    doctor = " ".join(_person(rng))
    note = Note()
    style = index % 3
    if style == 0:
        note.add(
            ("Patient: ", None),
            (f"{first} {last}", "PER"),
            (". MRN: ", None),
            (f"MRN{rng.randint(100000, 999999)}", "ID"),
            (".\n", None),
        )
    elif style == 1:
        note.add(
            ("Admission note for ", None),
            (f"{first} {last}", "PER"),
            (", admitted to ", None),
            (rng.choice(HOSPITALS), "HOSPITAL"),
            (" on ", None),
            (_date(rng), "DATE"),
            (".\n", None),
        )
    else:
        note.add(("Clinic letter dated ", None), (_date(rng), "DATE"), (".\n", None))
    note.add(
        ("The patient, a ", None),
        (f"{rng.randint(19, 92)}-year-old", "AGE"),
        (" resident of ", None),
        (rng.choice(CITIES), "LOCATION"),
        (", ", None),
        (rng.choice(FINDINGS), None),
        (". ", None),
        (rng.choice(PLANS), None),
        ("\n", None),
    )
    if rng.random() < 0.6:
        note.add(
            ("Home address: ", None),
            (rng.choice(STREETS), "LOCATION"),
            (", ", None),
            (rng.choice(CITIES), "LOCATION"),
            (". Contact: ", None),
            (_phone(rng), "PHONE"),
            (".\n", None),
        )
    if rng.random() < 0.4:
        note.add(
            ("Follow-up at ", None),
            (rng.choice(HOSPITALS), "HOSPITAL"),
            (" on ", None),
            (_date(rng), "DATE"),
            (". ", None),
            ("Mr/Ms ", None),
            (last, "PER"),
            (" agreed with the plan.\n", None),
        )
    note.add(("Signed: Dr ", None), (doctor, "PER"), (".", None))
    return {
        "id": f"demo-{index:03d}",
        "text": note.text,
        "spans": note.spans,
        "source": f"demo-ward-{index % 4}",
    }


def build_corpus(n: int = N_NOTES, seed: int = SEED) -> list[dict[str, object]]:
    rng = random.Random(seed)
    return [make_note(i, rng) for i in range(n)]


def main(argv: list[str]) -> None:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("demo_corpus.jsonl")
    lines = [json.dumps(row, ensure_ascii=False) for row in build_corpus()]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} notes to {out}")


if __name__ == "__main__":
    main(sys.argv)
