"""Relations from a chunk's layout (`ingest.fields`): a key–value record relates its
subject to each name or value under a key, an e-mail its sender to its recipients, subject and
date, a table row its first cell's name to each other cell under the column's header, a
signature the signer to the company they work for. A job title after a name is the role
the name is related in. Names are found by the same rules as in sentences
(`ingest.mentions`); keys are never names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from hopgraph.ingest import fields
from hopgraph.ingest.mentions import Rules, is_code, without_legal_form
from hopgraph.ingest.names import names_in
from hopgraph.ingest.roles import job_title, person_like
from hopgraph.ingest.vocabulary import Vocabulary
from hopgraph.records import Triplet

MAX_VALUE_WORDS = 5
DESCRIPTION_WORDS = 16  # words of a row's description its relations carry
# A row's place in its table ("A6", "12", "3.2"), not a name used anywhere else
_LOCAL_REFERENCE = re.compile(r"[A-Za-z]{0,2}\d{1,3}[a-z]?|\d+(?:\.\d+)+")

_PARTS = re.compile(r"[;,](?!\d)")  # a value's parts: its commas and semicolons, not "14,720"
# Where a value's first sentence ends: a full stop after a word of two lower-case letters or
# more, or after a number, before a capital; not "Dr. Lee", "J. Smith", "Mrs. Hale" or
# "Ltd. Unit 9"
_SENTENCE_END = re.compile(r"(?:(?<=[a-z]{2})|(?<=\d))(?<!Mrs)(?<!Ltd)(?<!Inc)(?<!etc)"
                           r"\.\s+(?=[A-Z])")


def first_sentence(value: str) -> str:
    """A key's value up to the end of its first sentence. A value may run on ("Owner: Chief
    Financial Officer. Reviewed quarterly; this version September 2025."): what the next
    sentence says is about the document, not what the key names."""
    return _SENTENCE_END.split(value, maxsplit=1)[0]


def _objects(value: str, rules: Rules, vocabulary: Vocabulary) -> list[str]:
    """What a field's value or a table cell relates to (`_objects_and_roles`, roles left
    out)."""
    return [name for name, _ in _objects_and_roles(value, rules, vocabulary)]


def _objects_and_roles(value: str, rules: Rules, vocabulary: Vocabulary
                       ) -> list[tuple[str, str]]:
    """What a field's value or a table cell relates to, part by part (split at commas and
    semicolons): its codes and its other names, a short part without codes or dates that
    opens with a capital and names something being a name as a whole ("Recycled PET flake",
    "United Kingdom"; not "returned to Coalville 14 March", which is "Coalville" and "14
    March"); else a short value with a digit (a date, an amount: "12 September 2025" of
    "Closed 12 September 2025").

    Each comes with the role a job title after it gives it ("Priya Raman, Quality
    Manager"), else "": the title is what the person is there as, said of them, not a thing
    of its own to relate to.
    """
    objects: list[tuple[str, str]] = []
    alone: int | None = None  # where the name a part held alone is in `objects`
    for part in _PARTS.split(value):
        part = part.strip().rstrip(".")
        if not part:
            continue
        if alone is not None and (role := job_title(part)) is not None:
            objects[alone] = (objects[alone][0], role)
            alone = None
            continue
        bracketed = _BRACKETED.match(part)  # "Lena Vos (Account Manager)"
        if bracketed and (role := job_title(bracketed.group(2))) is not None \
                and person_like(bracketed.group(1)) \
                and names_in(bracketed.group(1), rules, vocabulary) == [bracketed.group(1)]:
            objects.append((bracketed.group(1), role))
            alone = None
            continue
        if part[:1].isupper() and job_title(part) is not None:
            objects.append((part, ""))  # a post alone ("Housing Officer (Wrenfield North)",
            alone = None  # a row's "Responsible"): whoever holds it, other documents say
            continue
        found = len(objects)
        names = _without_opener(part, names_in(part, rules, vocabulary), vocabulary)
        codes = [name for name in names if is_code(name)]
        values = [name for name in names if not is_code(name) and _VALUE.fullmatch(name)]
        others = [name for name in names if not is_code(name) and name not in values]
        objects.extend((code, "") for code in codes)
        if others and not codes and len(part.split()) <= MAX_VALUE_WORDS and _one_phrase(part) \
                and part[:1].isupper() and not values:
            objects.append((without_legal_form(part), ""))
        elif others:
            objects.extend((name, "") for name in others + values)
        elif not codes and (found_value := _value(part)) is not None:
            objects.append((found_value, ""))
        alone = found if len(objects) == found + 1 and not codes and not values \
            and person_like(objects[found][0]) else None
    seen: dict[str, str] = {}
    for name, role in objects:
        seen[name] = seen.get(name) or role
    return list(seen.items())


def _one_phrase(part: str) -> bool:
    """Whether a value's part reads as one phrase: no bracket (a list cut at its commas,
    "MASONRY)", or an aside) and no gap of spaces (two columns run together)."""
    return not any(mark in part for mark in "()[]") and "  " not in part


def _without_opener(part: str, names: list[str], vocabulary: Vocabulary) -> list[str]:
    """A value's or a cell's names, less its first word when that opens a phrase of four
    words or more, the next in lower case, and is capitalized for grammar only
    (`Vocabulary.capitalized_for_grammar`, the prose's "common words" rule): "Mobility
    scooters stored on the landings", "Could not gain access"; not "Keller to send the
    certificates" where another document writes "supplied by Keller"."""
    words = part.split()
    if not names or len(words) < 4 or names[0] != words[0] or not words[1][:1].islower() \
            or not _WORD.fullmatch(names[0]) or not vocabulary.capitalized_for_grammar(names[0]):
        return names  # (a code or an abbreviation, "PP", "CH4–CH5", is no opener's capital)
    return names[1:]


_WORD = re.compile(r"[A-Z][a-z]+")  # a word capitalized, and nothing else


# The last word of a job title ("Quality Manager", "lead auditor", "Head of Property
# Management": the word before "of"): English words for a post, not any folder's own.
_BRACKETED = re.compile(r"^(.+?)\s*\(([^()]+)\)$")
MAX_SIGNATURE_NAME_WORDS = 4


_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|"
          r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?")
_UNIT = (r"(?:%|per cent|percent|kg|g|mg|t|tonnes?|km|m|cm|mm|l|ml|litres?|hours?|days?|"
         r"weeks?|months?|years?|million|billion|thousand)")
_TIME = r"\d{1,2}:\d{2}(?:\s?[ap]\.?m\b\.?)?"  # 07:52, 4:15 pm
_VALUE = re.compile(
    rf"\d{{1,2}}\s*(?:[-–]|to)\s*\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?"  # 6 to 8 October 2025
    rf"|\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?|{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|{_MONTH}\s+\d{{4}}"
    rf"|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?|\d{{4}}-\d{{2}}-\d{{2}}"  # 13/01/2025, 2025-01-13
    rf"|\d{{4}}\s?[-–/]\s?\d{{2}}(?:\d{{2}})?\b"  # a span of years: 1951-58, 2024/25
    rf"|{_TIME}(?:\s*(?:[-–]|to)\s*{_TIME})?"  # a time of day or a span: 07:52, 01:00–04:00
    rf"|(?:[£$€]\s?)?\d[\d,.]*(?:\s?{_UNIT}\b)?")


def _subject(value: str, rules: Rules, vocabulary: Vocabulary) -> str | None:
    """What a record is about, from its first value: the one name it holds, or the one name
    before its first comma ("Supplier: Dunmore Recycling Ltd, Dundalk, County Louth" is about
    Dunmore Recycling; its town is another of its facts); None when neither is one name, the
    name is a date or an amount, or a person given with their job title ("Signed: Priya
    Raman, lead auditor, 14 July 2025": a party to the record, not what it is about)."""
    found = _objects_and_roles(value, rules, vocabulary)
    if any(role for _, role in found):
        return None
    if len(found) != 1:
        found = _objects_and_roles(_PARTS.split(value)[0], rules, vocabulary)
    return found[0][0] if len(found) == 1 and not _VALUE.fullmatch(found[0][0]) else None


def _value(text: str) -> str | None:
    """The date or amount a short text holds ("7 May 2025" of "Closed 7 May 2025",
    "£38,400"), as written; None when it holds none or is long."""
    if len(text.split()) > 6:
        return None
    found = _VALUE.search(text)
    return found.group(0).strip() if found else None


def layout_triplets(layout: fields.Layout, title: str | None, rules: Rules,
                       vocabulary: Vocabulary) -> list[Triplet]:
    """Triplets from a chunk's key–value records and table rows (`ingest.fields`)."""
    triplets: list[Triplet] = []
    subject = title
    for record in layout.records:
        if record.is_email:
            triplets.extend(_email(record, rules, vocabulary))
            continue
        first = _subject(first_sentence(record.fields[0][1]), rules, vocabulary)
        if first is not None:
            subject = first
        for key, whole in record.fields:
            value = first_sentence(whole)
            if fields.legend(value):  # "Depot codes: LEE = Leeds, HUL = Hull"
                triplets.extend(Triplet(code, key.lower(), name)
                                for code, name in fields.coded_names(value))
            elif is_code(key):  # "CA-2025-021: Orrin & Tate adds annealing ...": about the code
                triplets.extend(Triplet(key, "concerns", name)  # every sentence of it
                                for name in names_in(whole, rules, vocabulary) if name != key)
            elif subject is not None:
                triplets.extend(_field(subject, key, value, rules, vocabulary))
    for table in layout.tables:
        for row in table.rows:
            heads = _objects(row[0], rules, vocabulary) if row else []
            if len(heads) != 1:
                continue
            described = _description(row)
            named = _row_name(row, rules, vocabulary)
            keyed = _keyed_description(row, rules, vocabulary)
            for column, (header, cell) in enumerate(zip(table.header[1:], row[1:],
                                                        strict=False), start=1):
                predicate = header.lower().strip() or "has"
                found = _objects_and_roles(cell, rules, vocabulary)
                if named is not None and column != named[0]:
                    triplets.extend(Triplet(named[1], _predicate(predicate, role), name)
                                    for name, role in found if name != named[1])
                if described is not None and column != described[0]:
                    predicate = f"({described[1]}) {predicate}"
                elif keyed is not None and column == keyed[0]:
                    predicate = f"({keyed[1]}) {predicate}"
                triplets.extend(Triplet(heads[0], _predicate(predicate, role), name)
                                for name, role in found if name != heads[0])
    for signed in layout.signings:
        triplets.extend(_signing(signed, rules, vocabulary))
    return triplets + _signatures(layout.prose, rules, vocabulary)


def _row_name(row: list[str], rules: Rules, vocabulary: Vocabulary) -> tuple[int, str] | None:
    """For a row keyed by a bare number (a fleet, staff or room number), its first name
    (`_first_name`: "RU73 BZR" of "304 | RU73 BZR | Caledon Metro 10.8e", "Kevin Roper" of
    "4417 | Kevin Roper | Driver"); None for any other row.

    A number is a value: it seeds no question and bridges nothing, or every "37" would join
    every 37-seat bus. The row's name stands for the row too, so its facts are one step from
    where other documents name the thing ("Vehicle: 304 (RU73 BZR)")."""
    if not row or not row[0].strip().isdigit():
        return None
    return _first_name(row, rules, vocabulary)


def _first_name(row: list[str], rules: Rules, vocabulary: Vocabulary
                ) -> tuple[int, str] | None:
    """The column and the name of the row's first cell after its key that holds anything,
    when that is one name; None otherwise."""
    for column, cell in enumerate(row[1:], start=1):
        found = _objects(cell, rules, vocabulary)
        if found:
            return (column, found[0]) if len(found) == 1 and not _VALUE.fullmatch(found[0]) \
                else None
    return None


def _signing(signed: fields.Signing, rules: Rules, vocabulary: Vocabulary) -> list[Triplet]:
    """A signing's facts: the signer signed for the party, in their role ("Claire Ashworth
    | signed for, managing director | Harrowgate Cold Chain"), on its date. The party is
    the one name it holds, else as written ("the Supplier", a contract's own term for a
    party: `Supplier`). Nothing when the signer is not named first."""
    party = _objects(signed.party, rules, vocabulary)
    if len(party) != 1:
        written = re.sub(r"^the\s+", "", signed.party.strip(), flags=re.IGNORECASE)
        party = [without_legal_form(written)] if written[:1].isupper() \
            and len(written.split()) <= MAX_VALUE_WORDS else []
    found = _objects_and_roles(signed.signer, rules, vocabulary)
    if not party or not found or _VALUE.fullmatch(found[0][0]):
        return []
    (signer, role), rest = found[0], found[1:]
    return [Triplet(signer, _predicate("signed for", role), party[0])] + [
        Triplet(signer, "signed on", value) for value, _ in rest if _VALUE.fullmatch(value)]


def _field(subject: str, key: str, value: str, rules: Rules, vocabulary: Vocabulary
           ) -> list[Triplet]:
    """A key–value line's facts: the subject related under the key to each name or value
    the value holds, in its role. A company given with its legal form and then its address
    ("Contractor: Tolland & Reeve Building Services Ltd, Unit 9, Follingsby Park, Gateshead")
    is what the key says; the places after it are where the company is (`Tolland & Reeve
    Building Services | at | Unit 9`), not more contractors of the subject."""
    found = [(name, role) for name, role in _objects_and_roles(value, rules, vocabulary)
             if name != subject]
    parts = [part.strip().rstrip(".") for part in _PARTS.split(value)
             if part.strip()]
    company = without_legal_form(parts[0]) if parts else ""
    if len(found) < 2 or company == parts[0] or found[0] != (company, "") \
            or any(without_legal_form(part) != part or job_title(part) for part in parts[1:]):
        return [Triplet(subject, _predicate(key, role), name) for name, role in found]
    places = [name for name, _ in found[1:] if not _VALUE.fullmatch(name)]
    return [Triplet(subject, key.lower(), company)] + [
        Triplet(company, "at", place) for place in places] + [
        Triplet(subject, key.lower(), name) for name, _ in found[1:] if name not in places]


def _description(row: list[str]) -> tuple[int, str] | None:
    """For a row keyed by a local reference (`_LOCAL_REFERENCE`), its description: the
    column of its longest other cell of four words or more, and that cell's first
    DESCRIPTION_WORDS words; None for any other row.

    An action plan's row "A6 | Mobility scooters stored on the landings | Low | Housing
    Officer" related as `A6 responsible Housing Officer` holds none of the words a question
    asks by ("the action on mobility scooters"), and "A6" is the sixth row of many a table.
    Its relations carry the description: `A6 (mobility scooters stored on the landings)
    responsible Housing Officer`. For a row keyed by a code or a name, see
    `_keyed_description`.
    """
    if not row or not _LOCAL_REFERENCE.fullmatch(row[0].strip()):
        return None
    return _longest_cell(row, lambda cell: True)


def _keyed_description(row: list[str], rules: Rules, vocabulary: Vocabulary
                       ) -> tuple[int, str] | None:
    """For a row keyed by a code or a name (not by a local reference or a bare number:
    `_description`, `_row_name`), the column of its first name (`_first_name`) and the
    row's description: its longest other cell of four words or more, most of them in lower
    case, cut at DESCRIPTION_WORDS words; None for any other row, or one without both.

    A register keyed by its own codes ("S-12 | Hargreave & Lowe LLP | External audit of
    the annual accounts | £38,000") relates `S-12 supplier Hargreave & Lowe` and `S-12
    annual cost £38,000`: none of the words a question asks by ("the firm that audits the
    annual accounts"). One keyed by the supplier's name ("Vestrum UK Ltd | Chiller
    manufacturer's service and parts | SC-2024-08") relates `Vestrum UK agreement
    SC-2024-08`, and a question asks "the chiller maker's subcontract". The relation to the
    row's first name carries the description, and only that one: in every relation of the
    row, a register's long notes had crowded out what the other cells say
    (benchmarks/RESULTS.md, "A row keyed by its place in the table"). A cell mostly
    capitalized is names ("Wendy Shotton, School Business Manager"), not a description."""
    key = row[0].strip() if row else ""
    if not key or _LOCAL_REFERENCE.fullmatch(key) or key.isdigit():
        return None
    named = _first_name(row, rules, vocabulary)
    if named is None:
        return None
    found = _longest_cell(row, lambda cell: 2 * sum(
        word[:1].islower() for word in cell.split()) > len(cell.split()), leave_out=named[0])
    return None if found is None else (named[0], found[1])


def _longest_cell(row: list[str], wanted: Callable[[str], bool], leave_out: int = 0
                  ) -> tuple[int, str] | None:
    """The column of the row's longest cell after its key (and other than `leave_out`) of
    four words or more that is `wanted`, and that cell's first DESCRIPTION_WORDS words."""
    cells = [(column, " ".join(cell.split())) for column, cell in enumerate(row)
             if column and column != leave_out and len(cell.split()) >= 4 and wanted(cell)]
    if not cells:
        return None
    column, text = max(cells, key=lambda found: len(found[1]))
    return column, " ".join(text.split()[:DESCRIPTION_WORDS])


def _signatures(lines: list[str], rules: Rules, vocabulary: Vocabulary) -> list[Triplet]:
    """A signature, as a letter or an e-mail is signed: a line that is one name alone, over
    a line that opens with a job title, then a company with its legal form (after a comma
    on that line, or opening the next). "Ben Akers / Sales Engineer, Sealwise Machinery
    Ltd" gives `Ben Akers | sales engineer at | Sealwise Machinery`: whom the person works
    for, which no sentence says."""
    triplets: list[Triplet] = []
    for number, (line, below) in enumerate(pairwise(lines)):
        name = line.strip()
        title, _, rest = below.strip().partition(",")
        if not 2 <= len(name.split()) <= MAX_SIGNATURE_NAME_WORDS \
                or job_title(title.strip()) is None \
                or names_in(name, rules, vocabulary) != [name]:
            continue
        following = lines[number + 2] if number + 2 < len(lines) else ""
        for place in (rest, following):
            company = re.split(r"[;,](?!\d)", place.strip())[0].strip().rstrip(".")
            if company and without_legal_form(company) != company:
                triplets.append(Triplet(name, f"{title.strip().lower()} at",
                                        without_legal_form(company)))
                break
    return triplets


def _predicate(key: str, role: str) -> str:
    """A key as a predicate, with the role its name is there in ("lead auditor, quality
    manager")."""
    return f"{key.lower()}, {role.lower()}" if role else key.lower()


def _email(record: fields.Record, rules: Rules, vocabulary: Vocabulary) -> list[Triplet]:
    """An e-mail's headers: the sender wrote to each recipient, about what the subject
    names, on its date."""
    by_key = [(key.lower(), value) for key, value in record.fields]
    senders = [n for key, value in by_key if key == "from"
               for n in names_in(value, rules, vocabulary)]
    if not senders:
        return []
    triplets: list[Triplet] = []
    for key, value in by_key:
        predicate = fields.EMAIL_KEYS.get(key)
        if predicate is None or key == "from":
            continue
        objects = names_in(fields.bare_subject(value) if key in ("subject", "re") else value, rules,
                           vocabulary)
        if key in ("date", "sent"):
            objects = [v for v in [_value(value)] if v is not None]
        triplets.extend(Triplet(senders[0], predicate, name) for name in objects
                        if name != senders[0])
    return triplets

