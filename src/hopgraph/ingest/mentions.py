"""Names in text, as the offline extractor finds them with no model: sentences and tokens
from syntok (a maintained rule-based segmenter), and the rules that make a run of tokens one
name.

- mentions: runs of capitalized tokens, with inner "of/de/von/the/..." between capitalized
  ones, acronyms, and numbers with the month or unit beside them; a capitalized function
  word opening a sentence ("The", "In", "He") is not a mention; a mention never spans a line
  break (list items, names in a column), a tab or a run of spaces (a table's columns);
- "codes": an identifier written with hyphens or slashes between letters and digits
  (`IR-2322`, `CA-2025-014`, `KX-4`) is one token, so one name; a code starts a name of its
  own (`Incident IR-2322` names IR-2322) and capitalized words after it stay with it
  (`KX-4 Pro`); a short number after a capitalized word stays with it (`Line 3`);
- names hold a possessive before a capital (`Bramley's Fresh Kitchen`) or before "of" and
  a capital (`Baxter's of Ellerby`), `&` and `of`
  (`Orrin & Tate`, `Dairy Farmers of the Dales`), but not `of` after a legal form
  (`Harlow Plastics Ltd` of Brentmoor), and `and` when the ingest writes the whole name more
  than once or it ends as organisations do (`Hollis and Grant Foods` beside `Tom and Priya`:
  `names.joined`, after this module's mentions);
- a place hyphened through small words is one name (`Stockton-on-Tees`); a prefix or a
  letter hyphened to a word is none (`Multi-skilled`, `F-gas`);
- an e-mail's greeting or sign-off names no one ("Hi Lisa,", "Thanks, Helen");
- "lone numbers" (off by default): a number alone ("410", "2025") is a name; by default
  only a number with the month or unit beside it is (a date, an amount), a value;
- a list item's marker or a clause's number ("1.", "3.2") opens no name;
- a hyphen with a space on each side is a dash between two things ("Finding 2 - Gas safety",
  "Coalville - Marek Nowak"), not a joiner, unless the document spaces out every hyphen it
  writes, as text tokenized before it reached us does ("Catherine Zeta - Jones": `dashes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from syntok import segmenter


def set_of(words: str) -> frozenset[str]:
    return frozenset(words.split())


CONNECTORS = set_of("of de von van der den la le du del da di dos das y & the")
# Capitalized at a sentence start for grammar's sake, not because they name something.
OPENERS = set_of("""a an the this that these those it its he she his her they their them we our
    i you in on at by for from with after before during when while since although though as
    if but and or so yet also however there here what which who whom whose where why how both
    each every many most some several other another such one two three under over between
    among into onto upon about against despite unlike following according""")
PRONOUNS = set_of("he she it they his her its their him them")
# Prefixes written with a hyphen before a word ("co-founder", "mid-2001", "Multi-skilled").
PREFIXES = set_of("""anti auto co counter cross de ex inter intra mid multi non over pan post
    pre pro re self semi sub super trans ultra un vice well""")
# Courtesy titles before a person's first and last names: not part of the name.
HONORIFICS = set_of("mr mrs ms mx dr prof")  # not "Miss": "Miss World", "Miss Indian America"
MAX_GREETING_TOKENS = 6  # "Dear Mr Owen Pryce ,"
# An e-mail's greeting or sign-off names whom it greets or who signs, as its header does:
# "Hi Lisa,", "Hello Helen", "Thanks, Helen"; "Morning Colin," only with its comma (the
# "Morning Star" is a name).
GREETINGS = set_of("dear hi hello hey")  # "Dear" keeps the name after it: "Dear Mr Pryce,"
SIGN_OFFS = set_of("thanks regards cheers")
SALUTATIONS = (GREETINGS - {"dear"}) | SIGN_OFFS
DAYTIME_GREETINGS = set_of("morning afternoon evening")
_GREETING_WORDS = SALUTATIONS | DAYTIME_GREETINGS  # what opens a greeting line
# A list item's key: a letter or three and a number ("R3", "A12").
ITEM_KEY = re.compile(r"[A-Z]{1,3}\d{1,3}")
MONTHS = set_of("""january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec""")
UNITS = set_of("""million billion thousand hundred percent per cent km kilometres kilometers miles
    metres meters feet ft kg tonnes tons years year people inhabitants""")
# A company's legal form ends its name: `of` after one starts a place, not more of the name
# ("Harlow Plastics Ltd of Brentmoor"). `and` may join two names before one of these or of
# the words organisations end with ("Hollis and Grant Ltd", "Finance and Audit Board").
LEGAL_FORMS = set_of("""ltd ltd. limited inc inc. incorporated llc llp plc gmbh ag sa bv b.v nv
    n.v co co. corp corp. as asa ab oy oyj aps kg kgaa pty spa srl sarl sas""")
COMPANY_ENDINGS = LEGAL_FORMS | set_of("""company corporation group holdings partners associates
    sons brothers board committee council trust foundation institute university society
    association agency authority department ministry service services""")

WORD = re.compile(r"\w", re.UNICODE)
_SPACED_JOINER = re.compile(r"\s+([-'’])\s+")


@dataclass
class Rules:
    """Which rules run. `surnames` is off by default: measured on the dev questions it cost
    recall on MuSiQue and changed nothing on HotpotQA (benchmarks/RESULTS.md, "Offline
    extractor and its ablation"; docs/extraction.md, ablation)."""

    title: bool = True
    pairs: bool = True
    surnames: bool = False
    numbers: bool = True
    own_subject: bool = True
    topic: bool = True
    common_words: bool = True
    codes: bool = True
    lone_numbers: bool = False
    layout: bool = True
    # Where names come from: "rules", "spacy" or "both" (`ingest.spacy_names`).
    names: str = "rules"


@dataclass
class Mention:
    """A name in a sentence: its text and its tokens' span."""

    text: str
    start: int  # token index in the sentence
    end: int  # one past the last token


def is_cap(value: str) -> bool:
    first = value[0]
    return first.isupper() or (first.isalpha() and not first.islower() and not first.isupper())


GAP = re.compile(r"\n|\t| {2,}")  # a line break, or the gap between two columns


def is_number(value: str) -> bool:
    return any(ch.isdigit() for ch in value) and not any(ch.isalpha() for ch in value[:1])


_OUTWARD = re.compile(r"^[A-Z]{1,2}\d[A-Z\d]?$")  # a UK postcode's halves: "WR4", "6KH"
_INWARD = re.compile(r"^\d[A-Z]{2}$")


def postcode_at(tokens: list[str], i: int) -> bool:
    """Whether a UK postcode starts at token i ("LS22 7DN"): an address's value, neither a
    name nor part of the town's before it ("Wetherby LS22 7DN" is Wetherby)."""
    return (i + 1 < len(tokens) and bool(_OUTWARD.match(tokens[i]))
            and bool(_INWARD.match(tokens[i + 1])))


def _measured(tokens: list[str], k: int) -> bool:
    """Whether the token at k is a unit or a per cent sign after a number ("11 per cent",
    "11 %", "3 million")."""
    return k < len(tokens) and (tokens[k].lower() in UNITS or tokens[k].startswith("%"))


def _amount_ends(tokens: list[str], j: int) -> bool:
    """Whether an amount ends the tokens before `j`: a number and its unit ("5 million",
    "90 per cent"). "of" after one opens what it is an amount of, no part of a name ("90
    per cent of Hong Kong"); "Year of the Dragon" is a name."""
    unit = j - 1
    if j >= 3 and tokens[j - 1].lower() == "cent" and tokens[j - 2].lower() == "per":
        unit = j - 2
    return unit >= 1 and tokens[unit].lower() in UNITS and is_number(tokens[unit - 1])


def _legal_form_ends(tokens: list[str], j: int) -> bool:
    """Whether a legal form ends the tokens before `j`: "Ltd", or "GmbH", which the
    segmenter cuts at its inner capital ("Gmb", "H")."""
    return tokens[j - 1].lower() in LEGAL_FORMS \
        or (j >= 2 and (tokens[j - 2] + tokens[j - 1]).lower() in LEGAL_FORMS)


def _extends(tokens: list[str], j: int, rules: Rules, breaks: list[bool]) -> int:
    """How many tokens from `j` on continue the mention before `j` (0: it ends there; a line
    break before a token ends it too, and so does a dash set apart: `dashes`)."""
    if breaks[j] or postcode_at(tokens, j):
        return 0
    nxt, before = tokens[j], tokens[j - 1]
    lower = nxt.lower()
    dates = j + 1 < len(tokens) and not breaks[j + 1] and (
        tokens[j + 1].lower() in MONTHS if nxt.isdigit() else is_number(tokens[j + 1]))
    if is_cap(nxt) and lower not in PRONOUNS:
        if lower in MONTHS and not is_number(before) and dates:
            return 0  # "Updated | September 2025": a date opens after a word, not in a name
        # a number goes on into a month ("12 May"), not into the word after it ("1.1 The")
        return 0 if is_number(before) and not is_code(before) and lower not in MONTHS else 1
    if is_cap(before) and not is_number(before) and nxt.isdigit() and len(nxt) <= 3 \
            and before.lower() not in MONTHS and not dates and not _measured(tokens, j + 1):
        # "Line 3", "Zone 2": a name with its number, not "Wrexham | 22 August" or "Dales
        # Dairies | 11 per cent"
        return 1
    if rules.numbers:
        dated = is_number(before) or before.lower() in MONTHS
        if (is_number(nxt) or lower in MONTHS) and dated:
            return 1  # "12 May 1850"
        if is_number(before) and lower == "per" and j + 1 < len(tokens) \
                and tokens[j + 1].lower() == "cent" and not breaks[j + 1]:
            return 2  # "31 per cent", as "31 percent"
        if is_number(before) and lower in UNITS:
            return 1  # "5 million", "300 km"
    followed = j + 1 < len(tokens) and is_cap(tokens[j + 1]) and not breaks[j + 1]
    if lower in CONNECTORS and followed and not is_number(before) \
            and not _amount_ends(tokens, j) and not (
            lower == "of" and _legal_form_ends(tokens, j)):
        return 2  # "University of Copenhagen", not "Harlow Plastics Ltd of Brentmoor"
    if lower == "of" and j + 2 < len(tokens) and tokens[j + 1] == "the" \
            and is_cap(tokens[j + 2]) and not breaks[j + 1] and not breaks[j + 2] \
            and not is_number(before) and not _amount_ends(tokens, j) \
            and not _legal_form_ends(tokens, j):
        return 3  # "Dairy Farmers of the Dales", "Battle of the Bulge"
    if lower in ("'s", "’s") and j + 2 < len(tokens) and tokens[j + 1] == "of" \
            and is_cap(tokens[j + 2]) and not breaks[j + 1] and not breaks[j + 2]:
        return 3  # "Baxter's of Ellerby": a firm named by its founder and its town
    if nxt in ("-", "'", "’", "'s", "’s") and followed:
        return 2  # "Saint-Denis", "Bramley's Fresh Kitchen"
    return 0


# The Nordic, German, Australian, Italian and French forms too ("Fjellnett AS", "Lumo Oy",
# "Brenner KG", "Acme Pty Ltd"), written as their registers write them; not "SE", which
# also ends product names ("iPhone SE").
_LEGAL_FORM = re.compile(r"(?:,?\s+(?:Ltd|Limited|Inc|Incorporated|LLC|LLP|plc|PLC|GmbH|AG|"
                         r"S\.?A|B\.?V|N\.?V|Co|Corp|AS|ASA|AB|Oy|Oyj|ApS|KG|KGaA|Pty|SpA|"
                         r"S\.?r\.?l|SARL|SAS)\.?)+$")


def dashes(tokens: list[str], spacing: list[str] | None, spaced_hyphens: bool = False
           ) -> list[int]:
    """Where a hyphen with a space on each side is a dash between two things, not a joiner
    inside a name: "Finding 2 - Gas safety", "Call back 15:40 - Aldgate", "Coalville -
    Marek Nowak - ongoing". In a text that spaces out every hyphen (`spaced_hyphens`:
    "Catherine Zeta - Jones", "air - cooled") it still joins, but not after a number
    ("1987 - On November 1")."""
    if spacing is None:
        return []
    return [k for k in range(1, len(tokens) - 1)
            if tokens[k] == "-" and spacing[k] != "" and spacing[k + 1] != ""
            and (not spaced_hyphens or is_number(tokens[k - 1]))]


def without_legal_form(name: str) -> str:
    """A company's name without its legal form ("Keller Polymers B.V." is the "Keller
    Polymers" other documents write): one entity however its documents write it."""
    short = _LEGAL_FORM.sub("", name).strip()
    return short if len(short) >= 3 and short[:1].isupper() else name


def written(tokens: list[str], spacing: list[str] | None, i: int, j: int) -> str:
    """Tokens i..j as a name: as written (`spacing`: the text before each token; one space
    each when None), without a legal form. Text tokenized before it reached us spaces out
    hyphens and apostrophes inside names ("Saint - Denis"): the name is the same without
    the spaces."""
    if spacing is None:
        text = " ".join(tokens[i:j])
    else:
        text = tokens[i] + "".join(spacing[k] + tokens[k] for k in range(i + 1, j))
    return without_legal_form(_SPACED_JOINER.sub(r"\1", text))


def mentions(tokens: list[str], rules: Rules, spacing: list[str] | None = None,
             spaced_hyphens: bool = False, compounds: bool = False) -> list[Mention]:
    """The mentions of one sentence's tokens (`spacing`: the text before each token, to
    write a mention as it was written; one space each by default; `spaced_hyphens`: the
    text spaces out every hyphen, `Vocabulary.spaced_hyphens`; `compounds`: a capitalized
    word hyphened to lower-case ones is a mention as a whole, as in a value or a cell)."""
    found: list[Mention] = []
    i, n = 0, len(tokens)
    greeting = n > 0 and tokens[0].lower() in _GREETING_WORDS
    if greeting and ((n <= MAX_GREETING_TOKENS and tokens[-1] == ",")
                     or (n <= 3 and tokens[0].lower() in SALUTATIONS)):
        return found  # "Hi Lisa,": a greeting, no mention of a lone first name
    # A line break ends a name, and so does a gap of spaces (columns of a table or a form).
    breaks = ([GAP.search(space) is not None for space in spacing] if spacing is not None
              else [False] * n)
    for k in dashes(tokens, spacing, spaced_hyphens):
        breaks[k] = True
    while i < n:
        value = tokens[i]
        if postcode_at(tokens, i):
            i += 2
            continue
        opener = value.lower() in OPENERS or (  # "Dear Mr Pryce," (not "Dear Brother is")
            value == "Dear" and (tokens[-1] == "," or n <= 3) and n <= MAX_GREETING_TOKENS) or (
            greeting and i == 0 and tokens[2:3] == [","])  # "Hi Lisa, the ..."
        # a full stop the sentence splitter did not end a sentence at ("... at
        # helpdesk@tollandreeve.example. Each call", "Clause 7.2. Three of the") opens one too
        opening = i == 0 or tokens[i - 1] == "."
        starts = (is_cap(value) and not (opening and opener)
                  and value.lower() not in PRONOUNS) or (rules.numbers and is_number(value))
        if not starts or not WORD.search(value):
            i += 1
            continue
        j = i + 1
        while True:
            while j < n and (step := _extends(tokens, j, rules, breaks)):
                if rules.codes and is_code(tokens[j]) and not is_code(tokens[i]):
                    break  # "Incident IR-2322": the code is the name
                j += step
            if (through := _hyphened_name(tokens, spacing, j)) is None:
                break
            j = through
        if spacing is not None and j < n and spacing[j] == "-" and tokens[j][:1].islower():
            if j - i > 1 and is_number(tokens[j - 1]):
                j -= 1  # "Refrigeration 24-hour line": the number is the compound's
            elif j - i == 1 and (value.lower() in PREFIXES or _letter(value)):
                # "Multi-skilled", "Non-executive", "F-gas": a word, not a name; a value or
                # a cell may be the word itself ("Role: Vice-chair")
                if not compounds:
                    i += 1
                    continue
                while j < n and spacing[j] == "-" and tokens[j][:1].islower():
                    j += 1
        if j - i >= 3 and value.lower() in HONORIFICS and all(map(is_cap, tokens[i + 1:j])):
            i += 1  # "Mr Owen Pryce" is the Owen Pryce other lines write; "Mr Bean" stays
        text = written(tokens, spacing, i, j)
        if value == "I" and j - i == 1:
            pass  # the pronoun; "I" inside a name ("World War I") is part of it
        elif rules.lone_numbers or j - i > 1 or not is_number(value) or is_code(value):
            found.append(Mention(text, i, j))
        i = j
    return found


def _letter(token: str) -> bool:
    return len(token) == 1 and token.isalpha()


def _hyphened_name(tokens: list[str], spacing: list[str] | None, j: int) -> int | None:
    """Where a name goes on to after lower-case words joined by hyphens to a capitalized one
    ("Stockton-on-Tees", "Newbiggin-by-the-Sea"), from token `j`; None if none does."""
    if spacing is None:
        return None
    k = j
    while k < len(tokens) and k - j < 3 and spacing[k] == "-" and tokens[k].isalpha() \
            and tokens[k].islower():
        k += 1
    if k > j and k < len(tokens) and spacing[k] == "-" and is_cap(tokens[k]):
        return k + 1
    return None


_CODE = re.compile(r"^[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)+$")


def is_code(token: str) -> bool:
    """An identifier: letters and digits joined by hyphens, slashes or dots, with a capital
    letter and a digit ("IR-2322", "KX-4", "SW-K4P-0453"; not "2023-24" or "v2.1")."""
    return (bool(_CODE.match(token)) and any(ch.isdigit() for ch in token)
            and any(ch.isupper() for ch in token))


def _merge_codes(sentence: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(spacing, token) pairs with the pieces of each code joined: syntok writes "IR-2322"
    as "IR" and "2322", the hyphen being the second's spacing ("BFK-C-0119": three)."""
    merged: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []

    def close() -> None:
        whole = run[0][1] + "".join(spacing + value for spacing, value in run[1:])
        if len(run) > 1 and is_code(whole):
            merged.append((run[0][0], whole))
        else:
            merged.extend(run)
        run.clear()

    for spacing, value in sentence:
        if run and spacing in ("-", "/", ".") and value[:1].isalnum() \
                and run[-1][1][-1:].isalnum():
            run.append((spacing, value))
            continue
        if run:
            close()
        run.append((spacing, value))
    if run:
        close()
    return merged


def sentences_of(lines: list[str], rules: Rules) -> list[list[tuple[str, str]]]:
    """Each line's sentences as (spacing, token) pairs, from their first word on."""
    found = []
    for line in lines:
        # Markdown's strong emphasis marks no word; a run-in heading's closing marks ("**S-15
        # Old Bus Depot.** Full planning ...") would keep its full stop from ending it
        line = line.replace("**", "").rstrip()
        if not line.strip():
            continue
        for paragraph in segmenter.analyze(line):
            for sentence in paragraph:
                pairs = [(token.spacing, token.value) for token in sentence]
                found.append(_from_first_word(_merge_codes(pairs) if rules.codes else pairs))
    return found


_CLAUSE = re.compile(r"^\d+(?:\.\d+)+\.?$")  # "3.2", "1.1.4": a clause's number


# A list item's letter or small roman numeral before its ")": "(a)", "b)", "(iv)"
_ITEM_LETTER = re.compile(r"[a-z]|[ivx]{1,4}", re.IGNORECASE)


def _from_first_word(sentence: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The sentence from its first word on: a list item's "-", "1." or "(a)" (or a clause's
    "3.2") does not make its first word any less the sentence's opening word."""
    for index, (_, value) in enumerate(sentence):
        after = sentence[index + 1][1] if index + 1 < len(sentence) else None
        numbered = after is not None and is_number(value) and (
            after in (".", ")") or _CLAUSE.match(value) is not None)
        lettered = after == ")" and _ITEM_LETTER.fullmatch(value) is not None
        if WORD.search(value) and not numbered and not lettered:
            return sentence[index:]
    return sentence
