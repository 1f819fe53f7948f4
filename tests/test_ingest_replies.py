"""E-mail replies as company folders hold them (issue 35): a quoted message ("> " lines
under "On ..., Name <address> wrote:") read as the message it is, a signature with no
closing words above it, a greeting line, and a subject's "RE:" — read, chunked and
extracted as `hopgraph ingest` does."""

from __future__ import annotations

from pathlib import Path

from hopgraph.ingest import extract
from hopgraph.ingest.fields import bare_subject
from hopgraph.ingest.offline_extractor import extract as extract_triplets
from hopgraph.ingest.quoting import unquote
from hopgraph.records import Triplet

REPLY = """\
From: Gemma Hollis <g.hollis@northgatefoods.example>
To: Sam Reid <sam.reid@harrowgate.example>
Date: Tue, 4 Mar 2025 09:12:00 +0000
Subject: RE: Claim CLM-25-0412 - chilled load rejected at Wakefield

Sam,

Thanks for the quick reply. We will accept the credit of 1,840 pounds against
invoice INV-77120 provided the replacement load reaches our Wakefield DC
before 14:00 on Thursday.

Regards,
Gemma Hollis
Supply Chain Manager
Northgate Foods Ltd

On Mon, 3 Mar 2025 at 16:40, Sam Reid <sam.reid@harrowgate.example>
wrote:
> Gemma,
>
> I am sorry the load on trailer TR-118 was rejected. The probe log shows
> the reefer unit on that trailer failed at 03:10 near Ferrybridge. We
> have raised claim CLM-25-0412 and Dale Whitaker is investigating.
>
> Sam Reid
> Customer Service Lead, Harrowgate Cold Chain Ltd
>
> On 3 March 2025 Gemma Hollis wrote:
>> Our Wakefield DC rejected the chilled load delivered this morning at
>> 06:20 because the pallets were at 9 degrees.
"""


def ingested(folder: Path, name: str, text: str) -> tuple[list[str], set[tuple[str, str, str]]]:
    (folder / name).write_text(text, encoding="utf-8")
    done = extract.run(extract.prepare([folder]))
    records = [record for report in done.reports for record in getattr(report, "records", [])]
    return ([record.text for record in records],
            {(t.subject, t.predicate, t.object) for record in records for t in record.triplets})


def test_a_quoted_message_is_read_as_the_message_it_quotes(tmp_path: Path) -> None:
    passages, triplets = ingested(tmp_path, "reply.txt", REPLY)
    text = "\n".join(passages)
    assert not any(line.lstrip().startswith(">") or " > " in line for line in text.splitlines())
    # Wrapped quoted lines are joined into sentences, with no marker inside them.
    assert "The probe log shows the reefer unit on that trailer failed" in text
    # The attribution line is the quoted message's header: its sender, date and subject
    # (the reply's, without "RE:").
    assert ("Sam Reid", "wrote on", "3 Mar 2025") in triplets
    assert ("Sam Reid", "wrote about", "CLM-25-0412") in triplets
    # A quote inside the quote is read the same way.
    assert ("Gemma Hollis", "wrote on", "3 March 2025") in triplets
    assert not any(part in ("RE", "On", "wrote") for t in triplets for part in (t[0], t[2]))


def test_a_signature_without_closing_words_is_no_heading(tmp_path: Path) -> None:
    passages, triplets = ingested(tmp_path, "reply.txt", REPLY)
    assert ("Sam Reid", "customer service lead at", "Harrowgate Cold Chain") in triplets
    # Before, "Sam Reid" was the heading over the quoted message below his signature, and
    # every name in it was "mentioned" by him.
    assert not any(t[0] == "Sam Reid" and t[1] == "mentions" for t in triplets)
    assert not any(p.split("\n")[0].endswith("Sam Reid") for p in passages)


def test_a_name_over_a_post_and_a_text_about_the_person_stays_a_heading(tmp_path: Path
                                                                         ) -> None:
    passages, _ = ingested(tmp_path, "staff.txt", (
        "Staff profiles\n\nMarek Nowak\nQuality Technician, Coalville laboratory\n\n"
        "Marek counts specks on every incoming lot and works on the night shift.\n"))
    assert any(p.startswith("Staff profiles › Marek Nowak\n") and "night shift" in p
               for p in passages)


def test_a_greeting_is_not_the_topic_of_the_sentences_after_it(tmp_path: Path) -> None:
    _, triplets = ingested(tmp_path, "note.txt", (
        "Gemma,\n\nThe probe log shows the reefer unit failed near Ferrybridge.\n"))
    assert not any(t[0] == "Gemma" for t in triplets)


def test_only_a_greeting_is_kept_from_leading_the_sentences_after_it() -> None:
    text = "{}\nThe pack reached Leeds on 15 April."
    # A name alone with no comma after it (a line break left in a chunk's text) still
    # leads the sentence after it; "Gemma," and "Dear Tom Reid," address someone.
    assert Triplet("Tom Reid", "pack reached", "Leeds") in extract_triplets(
        None, text.format("Tom Reid."))
    for greeting in ("Gemma,", "Dear Tom Reid,"):
        assert all(t.subject == "Leeds" for t in extract_triplets(None, text.format(greeting)))


def test_unquote_leaves_text_that_quotes_nothing_alone() -> None:
    text = "A price > 5 pounds is a line.\nNothing is quoted here.\n"
    assert unquote(text) == text
    assert unquote("> one quoted line alone\nand text\n") == "> one quoted line alone\nand text\n"
    # Lines opening with ">" in a text that is no e-mail are thresholds, not quotes.
    rates = "Late delivery credits\n> 2 hours late: 5 %\n> 6 hours late: 15 %\n"
    assert unquote(rates) == rates


def test_unquote_without_an_attribution_only_drops_the_markers() -> None:
    assert unquote("From: Sam Reid\n\nText.\n> first line\n> second line\n") == (
        "From: Sam Reid\n\nText.\n\n\nfirst line\nsecond line\n\n")


def test_bare_subject() -> None:
    assert bare_subject("RE: FW: Fwd: Claim CLM-25-0412") == "Claim CLM-25-0412"
    assert bare_subject("Re[2]: Price review") == "Price review"
    assert bare_subject("Return of pallets") == "Return of pallets"


MEMO = """\
MEMO

To: All depot managers
From: Colin Teale, Operations Director
Date: 3 February 2025
Re: Pallet returns to Palletline hubs

From 1 March every depot returns empty pallets to the Palletline hub at
Normanton on Tuesdays only.
"""


def test_a_memo_is_no_entity_and_its_re_line_is_its_subject(tmp_path: Path) -> None:
    _, triplets = ingested(tmp_path, "memo.txt", MEMO)
    assert not any("MEMO" in (t[0], t[2]) for t in triplets)
    assert ("Colin Teale", "wrote about", "Palletline") in triplets
    assert ("Colin Teale", "wrote on", "3 February 2025") in triplets


def test_a_courtesy_title_before_two_names_is_not_part_of_the_name() -> None:
    triplets = extract_triplets(None, "Mr Owen Pryce met Dr Karen Lomax in Leeds. Mr Bean "
                                      "and Miss World stayed in Hull.")
    ends = {part for t in triplets for part in (t.subject, t.object)}
    assert {"Owen Pryce", "Karen Lomax", "Mr Bean", "Miss World"} <= ends


def test_dear_opens_a_greeting_but_not_a_title() -> None:
    assert not any("Dear" in t.object for t in extract_triplets(
        "Service contract SC-2023-07", "Dear Mr Pryce,\nThe compressor failed in Leeds."))
    assert Triplet("Dear Brother", "is a duet by", "Hank Williams") in extract_triplets(
        None, "Dear Brother is a duet by Hank Williams.")



PLAIN_REPLY = """\
From: Tom Ellery <coachhire@aldermoor.example>
To: Margaret Dunwell <secretary@friends.example>
Subject: Quote CH-25-219 - Friends of Keldholme Station

Dear Margaret,

Costs

The price for the day is 711 pounds including VAT, with a 20% deposit to confirm.

Kind regards,

Tom

Tom Ellery
Coach Hire and Contracts Manager
Aldermoor Coaches, part of Aldermoor Travel Ltd
Aldermoor House, Beckside Road, Thornsby RY1 4BD
01632 960 210

On 19 Aug 2025, Margaret Dunwell wrote:
Dear Mr Ellery,

The Friends of Keldholme Station are planning a day trip to the Esk Valley Steam
Gala on Saturday 11 October. We expect about 44 people.

Yours sincerely,
Margaret Dunwell (Hon. Secretary)
"""


def test_a_long_signature_over_an_unquoted_reply_heads_nothing(tmp_path: Path) -> None:
    passages, triplets = ingested(tmp_path, "quote.txt", PLAIN_REPLY)
    quoted = next(p for p in passages if "planning a day trip" in p)
    # Neither the sign-off's first name nor the five-line signature's name is a heading,
    # and the message replied to is under none of the reply's own headings ("Costs").
    assert quoted.split("\n")[0] == "Quote CH-25-219 - Friends of Keldholme Station"
    assert not any(p.split("\n")[0].endswith(("› Tom", "› Tom Ellery")) for p in passages)
    assert not any(t[0] in ("Tom", "Tom Ellery") and t[1] == "mentions" for t in triplets)
    assert any("711 pounds" in p and p.startswith(
        "Quote CH-25-219 - Friends of Keldholme Station › Costs\n") for p in passages)


def test_a_heading_over_a_last_name_over_a_post_stays_a_heading(tmp_path: Path) -> None:
    passages, _ = ingested(tmp_path, "team.txt", (
        "Site handbook\n\nThe site opens at 06:00 and closes at 22:00 on weekdays.\n\n"
        "Contacts\n\nPriya Raman\nQuality Manager\n"))
    # The name over a post that ends the file reads as a signature would, but "Contacts"
    # over it is no sign-off's name: it is not Priya's first name.
    assert any(p.startswith("Site handbook › Contacts\n") and "Priya Raman" in p
               for p in passages)
