"""The offline extractor on company text (issue 35): codes whole, names with "&", "of" and
possessives, legal forms, dates split from the word before them, the pronoun "I", headings
of common words, and relations from key–value lines, e-mail headers and table rows."""

from __future__ import annotations

from hopgraph.ingest.mentions import Rules, mentions, sentences_of
from hopgraph.ingest.offline_extractor import common_phrase, extract
from hopgraph.ingest.vocabulary import vocabulary_of
from hopgraph.records import Triplet


def names(text: str) -> list[str]:
    """The mentions of a line's sentences, tokenized as the extractor does."""
    found = []
    for sentence in sentences_of([text], Rules()):
        tokens = [value for _, value in sentence]
        found += [m.text for m in mentions(tokens, Rules(), [space for space, _ in sentence])]
    return found


def test_codes_are_whole() -> None:
    assert names("Part PX-310 failed in incident IR-2207 under MSA-2022-009.")[-3:] == [
        "PX-310", "IR-2207", "MSA-2022-009"]
    assert "KX-4 Pro" in " ".join(names("The Kestrel KX-4 Pro went to Leeds."))


def test_names_keep_ampersands_possessives_and_of_the() -> None:
    assert names("Orrin & Tate shipped to Miller's Wharf.") == ["Orrin & Tate", "Miller's Wharf"]
    assert names("Leah Morton manages Dairy Farmers of the Dales.") == [
        "Leah Morton", "Dairy Farmers of the Dales"]
    assert names("He fought in the Battle of the Bulge.") == ["Battle of the Bulge"]
    # a firm named by its founder and its town
    assert names("While 402 is off: Baxter's of Ellerby can supply a coach.") == [
        "Baxter's of Ellerby"]


def test_a_legal_form_ends_a_name_and_is_not_part_of_it() -> None:
    assert names("Tom joined Harlow Plastics Ltd of Brentmoor.") == [
        "Tom", "Harlow Plastics", "Brentmoor"]
    assert names("Keller Polymers B.V. supplies Line 3.") == ["Keller Polymers", "Line 3"]
    # the segmenter cuts "GmbH" at its inner capital; it ends the name all the same
    assert names("Tom buys from Vestrum Klimatechnik GmbH of Kassel.") == [
        "Tom", "Vestrum Klimatechnik", "Kassel"]
    assert names("Brenner GmbH of the Ruhr bought it.") == ["Brenner", "Ruhr"]
    # the forms of other countries' registers end it too
    assert names("Tom joined Fjellnett AS of Bergen.") == ["Tom", "Fjellnett", "Bergen"]
    assert names("Acme Pty Ltd of Perth and Lumo Oy bought Brenner KG.") == [
        "Acme", "Perth", "Lumo", "Brenner"]


def test_a_person_of_a_company_is_two_names_related_by_of() -> None:
    def ends(text: str) -> set[str]:
        return {name for t in extract(None, text) for name in (t.subject, t.object)}

    triplets = extract(None, "We met Ruth Okonjo of Lindqvist Certification on Monday.")
    assert Triplet("Ruth Okonjo", "of", "Lindqvist Certification") in triplets
    # in a field's value too, and with the company's legal form
    assert {"Kofi Mensah", "Ryan Tait", "Kielder Generator Services"} <= ends(
        "Engineer: Kofi Mensah, with Ryan Tait of Kielder Generator Services Ltd")
    # an institution's head is a word the texts write in lower case, or ends a company's
    # name; one word after "of" is a place or a field the name is written with
    kept = ("Lena Vos banks at the Royal Bank of Scotland Group for the bank's fees. "
            "Lena Vos met the Finance Committee of the Kirkgate Trust. "
            "Lena Vos saw the Columbus Museum of Art and Duke Ferdinand of Brunswick. "
            "Lena Vos buys from Dales Dairies of Skipton Ltd.")
    assert {"Royal Bank of Scotland Group", "Finance Committee of the Kirkgate Trust",
            "Columbus Museum of Art", "Duke Ferdinand of Brunswick",
            "Dales Dairies of Skipton"} <= ends(kept)


def test_a_number_that_opens_a_hyphened_word_is_not_part_of_the_name_before_it() -> None:
    assert names("Colin rang the Pryce & Lomax Refrigeration 24-hour line.")[-1] == \
        "Pryce & Lomax Refrigeration"
    assert names("Keller Polymers supplies Line 3.")[-1] == "Line 3"


def test_a_date_is_not_glued_to_the_word_before_it() -> None:
    assert names("Closed 12 September 2025 by Grace Whitlow.")[1:] == [
        "12 September 2025", "Grace Whitlow"]
    assert names("Tom Okafor was at Wrexham 22 August 2025.") == [
        "Tom Okafor", "Wrexham", "22 August 2025"]
    assert names("Updated September 2025 by Tom.")[-2:] == ["September 2025", "Tom"]
    assert names("Born 12 May 1850 in Basel.")[-2:] == ["12 May 1850", "Basel"]


def test_a_per_cent_is_one_value_and_no_part_of_a_name() -> None:
    assert names("Kirkgate Foods took 31 per cent of sales, Dales Dairies 11 per cent.") == [
        "Kirkgate Foods", "31 per cent", "Dales Dairies", "11 per cent"]
    assert names("Dales Dairies 11 %, Line 3 and Line 4 in Leeds.") == [
        "Dales Dairies", "Line 3", "Line 4", "Leeds"]
    # "of" after an amount opens what it is an amount of
    assert names("About 90 per cent of Hong Kong and 5 million of the Dales.")[-4:] == [
        "90 per cent", "Hong Kong", "5 million", "Dales"]
    assert names("It was the Year of the Dragon.") == ["Year of the Dragon"]


def test_a_function_word_after_a_full_stop_the_splitter_missed_opens_no_name() -> None:
    assert "Each" not in names("Ring helpdesk@tollandreeve.example. Each call gets a number.")
    assert "Three" not in names("It breaches Clause 7.2. Three of the issuers had lapsed.")


def test_a_word_after_a_lines_key_and_a_gap_opens_the_note_and_names_nothing() -> None:
    log = ("CHG-0933  Linked to PIR-2025-04. Retrospective CAB review 21/05/2025.\n"
           "08:35  Index build cancelled under emergency change CHG-0933.\n"
           "09:40  Priyesh rang Graham Tedder from the scene.\n"
           "Later Priyesh came back.\n")  # Priyesh is a name inside a sentence here
    found = extract("Change log", log, vocabulary=vocabulary_of([log]))
    ends = {name for t in found for name in (t.subject, t.object)}
    assert not ends & {"Linked", "Index"}
    assert Triplet("CHG-0933", "linked to", "PIR-2025-04") in found  # the key is the subject
    assert "Priyesh" in ends  # capitalized inside a sentence too: a name wherever it stands


def test_a_place_hyphened_through_small_words_is_one_name() -> None:
    assert names("The site is in Stockton-on-Tees, near Newbiggin-by-the-Sea.") == [
        "Stockton-on-Tees", "Newbiggin-by-the-Sea"]
    assert names("An Atlanta-based firm") == ["Atlanta"]  # a name in a compound stays


def test_a_prefix_or_a_letter_hyphened_to_a_word_is_no_name() -> None:
    assert names("Jamie Robson, Multi-skilled Engineer, holds an F-gas card.") == [
        "Jamie Robson", "Engineer"]
    assert names("Susan Hird is a Non-executive Director.") == ["Susan Hird", "Director"]
    # ... but a field's value may be that word: "Vice-chair" is the role
    triplets = extract("Colin Braithwaite", "Name: Colin Braithwaite\nRole: Vice-chair\n")
    assert Triplet("Colin Braithwaite", "role", "Vice-chair") in triplets


def test_an_emails_greeting_and_sign_off_name_no_one() -> None:
    from hopgraph.ingest.reading import Document
    from hopgraph.ingest.structure import sections

    mail = ("From: Lisa Greenwood\nTo: Helen Rudd\nSubject: Pallets\n\nHello Helen\n\n"
            "We accept the claim for the pallets.\n\nThanks, Helen\nHelen Rudd\n"
            "Claims Coordinator\n")
    headings = {h for found in sections(Document("m.txt", mail, "txt")) for h in found.headings}
    assert not {"Hello Helen", "Thanks, Helen"} & headings
    songs = ("Songs\nSongs of the year.\n\nHello Love (song)\n"
             "Hello Love is a song by Hank Snow, a hit in 1974.\n")
    headings = {h for found in sections(Document("s.txt", songs, "txt")) for h in found.headings}
    assert "Hello Love (song)" in headings  # a title over its text is one
    for line in ("Hello Helen", "Hi all", "Thanks, Helen", "Morning Colin,"):
        assert names(line) == []
    assert names("Hi Lisa, the pallets reached Hull.") == ["Lisa", "Hull"]  # no greeting alone
    assert names("Dear Gillian") == ["Gillian"]
    assert names("Morning Star") == ["Morning Star"]  # a name; "Morning Colin," greets


def test_a_word_opening_a_sentence_the_splitter_missed_is_judged_as_an_opening_word() -> None:
    text = ("The trailer got to +9.4. Nobody got a call. CH3 at -21.5°C. Normal movements "
            "restarted. We told Ulysses S. Grant, and nobody rang Coldstream.")
    ends = {part for t in extract("Coldstream Telematics", text) for part in (t.subject, t.object)}
    assert not {"Nobody", "Normal"} & ends and {"Grant", "Coldstream"} <= ends


def test_the_pronoun_i_is_no_name_but_a_roman_numeral_in_a_name_is_kept() -> None:
    assert names("I called Tom Okafor.") == ["Tom Okafor"]
    assert names("He served in World War I.") == ["World War I"]


def test_a_clause_number_opens_no_name() -> None:
    assert "3.1 A" not in names("3.1 A supplier must hold a certificate.")


def test_a_list_items_key_keeps_the_items_first_word_out_of_its_name() -> None:
    # a PDF's text can lose the gap after the key; the verb opens the item all the same
    text = ("R1 Adopt the revised plan for Millbeck.\n"
            "R3 Replace all bathroom extract fans at Heron Court.\n"
            "Fans are cheap; we replace them and adopt plans.")
    ends = {name for t in extract("Recommendations", text) for name in (t.subject, t.object)}
    assert {"R1", "R3", "Millbeck", "Heron Court"} <= ends
    assert not {"R1 Adopt", "R3 Replace"} & ends
    # a word the texts capitalize as a name stays: a model's variant, a vehicle's plate
    text = "K4 Pro ships in May. We sell the K4 Pro to Orrin & Tate."
    assert "K4 Pro" in {t.subject for t in extract("Products", text)}


def test_a_heading_of_common_words_names_nothing() -> None:
    vocabulary = vocabulary_of(["We keep spare parts and meet our standards. The complaints "
                                "we had in the deep freeze were few."])
    assert common_phrase("Spare parts", vocabulary)
    assert common_phrase("Standards", vocabulary)
    assert not common_phrase("Keller Polymers", vocabulary)
    assert not common_phrase("Rolling in the Deep", vocabulary)  # a capital inside: a title
    text = "We keep spare parts for every sealer. Tom Hessel orders them from Orrin & Tate."
    triplets = extract("Spare parts", text, vocabulary=vocabulary_of([text]))
    assert all("Spare parts" not in (t.subject, t.object) for t in triplets)
    assert Triplet("Tom Hessel", "orders them from", "Orrin & Tate") in triplets


def test_a_heading_s_own_lower_case_words_and_one_in_capitals_are_common_words() -> None:
    # "happens" and "individual" are written nowhere else, but the heading itself writes them
    # in lower case; a heading in capitals is judged by its words in lower case
    vocabulary = vocabulary_of(["We do what is next: read the post incident review notes on "
                                "the bus."])
    assert common_phrase("What happens next", vocabulary)
    assert common_phrase("Notes on individual contracts", vocabulary)
    assert common_phrase("POST-INCIDENT REVIEW", vocabulary)
    assert not common_phrase("Pitchstone plateau", vocabulary)  # its first word is a name
    assert not common_phrase("F.I.R.", vocabulary)  # letters, not words in capitals
    assert not common_phrase("NASA REVIEW", vocabulary)  # "nasa" is not written in lower case
    text = "Martin Fell asked Quarry Hill Security Partners for a log review."
    triplets = extract("POST-INCIDENT REVIEW", text, vocabulary=vocabulary)
    assert all("POST-INCIDENT REVIEW" not in (t.subject, t.object) for t in triplets)


def test_key_value_lines_relate_the_subject_to_names_and_values() -> None:
    triplets = extract("Incident report", "Incident: IR-2330\nCustomer: Northgate Foods\n"
                       "Reported by: Marek Nowak\nStatus: Closed 12 September 2025\n"
                       "Outcome: returned to Coalville 14 March")
    assert {Triplet("IR-2330", "customer", "Northgate Foods"),
            Triplet("IR-2330", "reported by", "Marek Nowak"),
            Triplet("IR-2330", "status", "12 September 2025"),
            Triplet("IR-2330", "outcome", "Coalville"),
            Triplet("IR-2330", "outcome", "14 March")} <= set(triplets)
    # a value holding a date is not a name as a whole
    assert not any(t.object in ("Closed 12 September 2025", "returned to Coalville 14 March")
                   for t in triplets)


def test_a_job_title_after_a_name_is_the_role_it_is_related_in_not_a_name() -> None:
    triplets = extract(None, "Audit: SA-25-03\nLead auditor: Priya Raman, Quality Manager\n"
                       "Supplier: Rob Tate, Director; Sian Orrin, Quality Manager\n"
                       "For: Chris Alder, Head of Property Management\n"
                       "Site: Dunmore Recycling Ltd, Dundalk\n"
                       "Present: Lena Vos (Account Manager), Joost Verhagen (Plant Manager)")
    assert {Triplet("SA-25-03", "lead auditor, quality manager", "Priya Raman"),
            Triplet("SA-25-03", "supplier, director", "Rob Tate"),
            Triplet("SA-25-03", "supplier, quality manager", "Sian Orrin"),
            Triplet("SA-25-03", "for, head of property management", "Chris Alder"),
            Triplet("Dunmore Recycling", "at", "Dundalk"),  # a town is no title
            Triplet("SA-25-03", "present, account manager", "Lena Vos"),
            Triplet("SA-25-03", "present, plant manager", "Joost Verhagen")} <= set(triplets)
    assert not any(t.object in ("Quality Manager", "Director", "Plant Manager")
                   for t in triplets if t.subject == "SA-25-03")
    # in a table cell too
    assert extract(None, "| Site | Contact |\n|---|---|\n"
                         "| Coalville | Marek Nowak, laboratory technician |") == [
        Triplet("Coalville", "contact, laboratory technician", "Marek Nowak")]


def test_a_list_of_things_has_no_roles() -> None:
    # "Lead" and "Controller" are words for posts, but follow no person's name here
    assert extract(None, "Lot: KP-5562\nContaminants: Copper, Lead, Zinc\n"
                         "Spares: Pump, Controller") == [
        Triplet("KP-5562", "contaminants", "Copper"), Triplet("KP-5562", "contaminants", "Lead"),
        Triplet("KP-5562", "contaminants", "Zinc"), Triplet("KP-5562", "spares", "Pump"),
        Triplet("KP-5562", "spares", "Controller")]
    assert extract(None, "Incident: IR-2330\nOwner: Lena Vos ( of Sales)")  # no error


def test_a_signature_says_whom_the_signer_works_for() -> None:
    def works(text: str) -> list[Triplet]:
        return [t for t in extract(None, text) if t.predicate.endswith(" at")]

    assert works("The KX-4 Pro runs at 72 dB(A).\n\nBest regards,\nBen Akers\n"
                 "Sales Engineer, Sealwise Machinery Ltd\nAttercliffe Road, Sheffield") == [
        Triplet("Ben Akers", "sales engineer at", "Sealwise Machinery")]
    # the company on the next line (the words after the title's comma name no company)
    assert works("--\nSarah Bhandari\nContracts Manager, Critical and Education\n"
                 "Tolland & Reeve Building Services Ltd, Riverside Park") == [
        Triplet("Sarah Bhandari", "contracts manager at", "Tolland & Reeve Building Services")]
    # no company with its legal form, no relation; nor from a name over a line of prose
    assert works("Kind regards,\nSunita Bhatt\nCompliance Officer\nCoalville") == []
    assert works("Helen Ashby\nManaging director since 2016, she signs the agreements.") == []


def test_an_email_header_relates_sender_recipients_subject_and_date() -> None:
    triplets = extract(None, "From: Aoife Dunne <aoife@x.example>\nTo: Tom Hessel "
                       "<tom@y.example>\nSubject: Quotation Q-7781\nDate: 16 June 2025\n\n"
                       "Tom, the quote is attached.")
    assert {Triplet("Aoife Dunne", "wrote to", "Tom Hessel"),
            Triplet("Aoife Dunne", "wrote about", "Q-7781"),
            Triplet("Aoife Dunne", "wrote on", "16 June 2025")} <= set(triplets)


def test_a_table_row_relates_its_key_cell_to_each_cell_under_its_header() -> None:
    triplets = extract(None, "| Supplier | Material | Score |\n|---|---|---|\n"
                       "| Keller Polymers | RB-118 flake | 71 |\n"
                       "| Vantor Films | PET base film | 88 |")
    assert triplets == [Triplet("Keller Polymers", "material", "RB-118"),
                        Triplet("Keller Polymers", "score", "71"),
                        Triplet("Vantor Films", "material", "PET base film"),
                        Triplet("Vantor Films", "score", "88")]


def test_a_row_keyed_by_its_place_in_the_table_carries_its_description() -> None:
    # "A6" is the sixth row of many a table: its relations carry the row's longest cell,
    # the words a question asks by ("the action on mobility scooters").
    triplets = extract(None, "| Ref | Finding | Priority | Responsible |\n|---|---|---|---|\n"
                       "| A6 | Mobility scooters stored and charged on the landings of floors "
                       "1 and 6, and in the lobby outside the lift on floor 1 | Low | Housing "
                       "Officer (Wrenfield North) |\n"
                       "| 3.2 | Registration of subcontracted engineers not checked | High | "
                       "Imran Qureshi |\n"
                       "| Keller Polymers | Flake lots arrive without certificates | High | "
                       "Priya Castell |\n")
    scooters = "(mobility scooters stored and charged on the landings of floors 1 and 6, and in " \
        "the)"  # its first 16 words
    assert {Triplet("A6", f"{scooters} responsible", "Housing Officer (Wrenfield North)"),
            Triplet("3.2", "(registration of subcontracted engineers not checked) responsible",
                    "Imran Qureshi"),
            # a row keyed by a name is asked by its name: no description
            Triplet("Keller Polymers", "responsible", "Priya Castell")} <= set(triplets)
    # the description's own cell is not described by itself
    assert not [t for t in triplets if t.predicate.startswith("(") and "finding" in t.predicate]


def test_a_row_keyed_by_a_code_carries_its_description_on_its_name() -> None:
    # A register keyed by its own codes: "S-12" holds none of the words a question asks by
    # ("the firm that audits the annual accounts"), and the service cell is no name. The
    # relation to the row's name carries it; the row's other relations do not.
    triplets = extract(None, "| Ref | Supplier | Service | Annual cost | Contact |\n"
                       "|---|---|---|---|---|\n"
                       "| S-12 | Hargreave & Lowe LLP | External audit of the annual accounts "
                       "| £38,000 | Rebecca Strand |\n"
                       "| S-14 | Pellow Fire Protection | Fire alarm and extinguisher servicing "
                       "| £2,100 | Wendy Shotton, School Business Manager |\n"
                       "| S-15 | Ringmore Voice Ltd | SIP trunks | £38,400 | Priya Raman |\n")
    assert {Triplet("S-12", "(external audit of the annual accounts) supplier",
                    "Hargreave & Lowe"),
            Triplet("S-12", "annual cost", "£38,000"),
            Triplet("S-12", "contact", "Rebecca Strand"),
            # a contact's name and post is no description: the service cell is
            Triplet("S-14", "(fire alarm and extinguisher servicing) supplier",
                    "Pellow Fire Protection"),
            # no cell of four words or more: nothing to carry
            Triplet("S-15", "supplier", "Ringmore Voice")} <= set(triplets)


def test_a_row_keyed_by_a_name_carries_its_description_on_its_first_name() -> None:
    # A subcontractor register keyed by the firm: "Vestrum UK" holds none of the words of
    # "the chiller maker's subcontract"; the relation to the agreement carries them.
    triplets = extract(None, "| Subcontractor | Scope | Agreement | Site |\n"
                       "|---|---|---|---|\n"
                       "| Vestrum UK Ltd | Chiller manufacturer's service and parts | "
                       "SC-2024-08 | Solway Data Centre |\n"
                       "| Ardent Lifts | Lifts | SC-2023-11 | Carlisle |\n")
    assert {Triplet("Vestrum UK", "(chiller manufacturer's service and parts) agreement",
                    "SC-2024-08"),
            Triplet("Vestrum UK", "site", "Solway Data Centre"),
            # no cell of four words or more: nothing to carry
            Triplet("Ardent Lifts", "agreement", "SC-2023-11")} <= set(triplets)


def test_a_cells_first_word_capitalized_for_the_phrase_is_no_name() -> None:
    table = ("| Job | Outcome | Engineer |\n|---|---|---|\n"
             "| JB-1 | Could not gain access to the flat | Priya Castell |\n"
             "| JB-2 | Keller to send the missing certificates | Priya Castell |\n"
             "| JB-3 | PP bags split on the conveyor | Priya Castell |\n")
    objects = {t.object for t in extract(None, table)}
    assert "Could" not in objects
    assert "PP" in objects  # an abbreviation is capitalized for what it is
    assert "Keller" not in objects  # never capitalized inside a sentence here...
    # ...but a name the texts write inside a sentence is one
    objects = {t.object for t in extract(None, table + "\nThe flake was supplied by Keller.")}
    assert "Keller" in objects


def test_a_verb_opening_a_cell_is_no_part_of_the_name_after_its_the() -> None:
    table = ("| Action | What | Owner |\n|---|---|---|\n"
             "| B25/48-1 | Sign the Carr Lane grant agreement | Nadia Akhtar |\n")
    text = table + "\nWe sign grants when the Board agrees."
    objects = {t.object for t in extract(None, text)}
    assert "Carr Lane" in objects and "Sign the Carr Lane" not in objects


def test_a_record_is_about_the_name_before_its_first_comma() -> None:
    # The first value names the record's subject and then its place: the subject is the name.
    triplets = extract(None, "Supplier: Dunmore Recycling Ltd, Dundalk, County Louth\n"
                       "Contact: Aoife Dunne, Sales Director\nCalled by: Priya Castell")
    assert {Triplet("Dunmore Recycling", "contact, sales director", "Aoife Dunne"),
            Triplet("Dunmore Recycling", "called by", "Priya Castell")} <= set(triplets)
    # a first value of a date and more names no subject
    dated = extract(None, "Date: 4 March 2025, Dundalk\nContact: Aoife Dunne")
    assert not any(t.subject == "4 March 2025" for t in dated)


def test_a_cell_or_value_naming_a_company_drops_its_legal_form() -> None:
    # "Keller Polymers B.V." in a table is the "Keller Polymers" the prose writes: one entity.
    triplets = extract(None, "| Supplier | Contract |\n|---|---|\n"
                       "| Keller Polymers B.V. | MSA-2023-014 |\n"
                       "| Dunmore Recycling Ltd | MSA-2025-003 |")
    assert triplets == [Triplet("Keller Polymers", "contract", "MSA-2023-014"),
                        Triplet("Dunmore Recycling", "contract", "MSA-2025-003")]
    assert Triplet("IR-2330", "supplier", "Keller Polymers") in extract(
        None, "Incident: IR-2330\nSupplier: Keller Polymers B.V.")


def test_a_table_laid_out_with_spaces_relates_its_rows_like_a_markdown_one() -> None:
    text = ("Job       Date        Site        Engineer\n"
            "--------  ----------  ----------  ------------\n"
            "JB-40512  13/01/2025  S-CAR-003   David Marsh\n"
            "JB-40593  14/02/2025  S-NCL-011   Ardent Lifts Ltd\n")
    triplets = extract(None, text)
    assert triplets == [Triplet("JB-40512", "date", "13/01/2025"),
                        Triplet("JB-40512", "site", "S-CAR-003"),
                        Triplet("JB-40512", "engineer", "David Marsh"),
                        Triplet("JB-40593", "date", "14/02/2025"),
                        Triplet("JB-40593", "site", "S-NCL-011"),
                        Triplet("JB-40593", "engineer", "Ardent Lifts")]
    # With no header (every line holds a digit), a row's cells are what its key cell has;
    # no name runs across a column's gap.
    rows = extract(None, "JB-40593  14/02/2025  QPP-CH-0518   S-NCL-011  Lift L2  Ardent Lifts\n"
                         "JB-41230  01/04/2025  QPP-CH-0562   S-NCL-011  Lift L2  Ardent Lifts\n")
    assert Triplet("JB-40593", "has", "QPP-CH-0518") in rows
    assert Triplet("JB-41230", "has", "Ardent Lifts") in rows
    assert all("  " not in name for t in rows for name in (t.subject, t.object))


def test_prose_with_two_spaces_is_no_table() -> None:
    # Two spaces after a full stop, on lines whose gaps do not line up, are still prose.
    text = ("Priya Castell met Lena Vos in Rotterdam.  They agreed a new price.  It holds.\n"
            "Keller Polymers will ship from May.  Dunmore Recycling ships now.  Both agreed.")
    assert Triplet("Priya Castell", "met", "Lena Vos") in extract(None, text)
    assert names("Ardent Lifts         Completed") == ["Ardent Lifts", "Completed"]


def test_an_actions_owner_after_a_dash_is_linked_to_what_it_names() -> None:
    text = ("Actions:\n\n- Count specks on every RB-118 lot from Keller Polymers — Marek Nowak, "
            "ongoing\n- Book the September visit to Marsh & Pollard Butchers — Leah Morton\n\n"
            "We book visits a month ahead.")
    triplets = extract("Quality review", text)
    assert Triplet("Marek Nowak", "count specks on every rb-118 lot", "Keller Polymers") \
        in triplets
    assert Triplet("Leah Morton", "book the september visit to", "Marsh & Pollard Butchers") \
        in triplets
    # A verb opening the item (the text writes it in lower case too) is not glued to the
    # name after "the".
    assert not any(name.startswith("Book") for t in triplets for name in (t.subject, t.object))
    # A dash inside a sentence, followed by more words, names no owner.
    aside = extract(None, "The album — Thriller — was released by Michael Jackson.")
    assert not any(t.subject == "Thriller" and "album" in t.predicate for t in aside)


def test_a_time_of_day_and_a_span_of_days_are_one_value() -> None:
    triplets = extract("Incident report", "Incident ref: INC-25-0117\nTime: 07:52\n"
                       "Collected: 4:15 pm\nAudit dates: 6 to 8 October 2025\n"
                       "Site visits: 14–16 May\nWindow: Sun 7 Sep, 01:00–04:00\n"
                       "Vehicle: 304 (RU73 BZR)")
    values = {"time": "07:52", "collected": "4:15 pm", "audit dates": "6 to 8 October 2025",
              "site visits": "14–16 May", "window": "01:00–04:00"}
    assert {Triplet("INC-25-0117", key, value) for key, value in values.items()} \
        <= set(triplets)
    assert not any(t.object in ("07", "4", "6", "14", "01") for t in triplets)


def test_numeric_dates_are_values_and_no_records_subject() -> None:
    triplets = extract(None, "Logged: 13/01/2025\nEngineer: David Marsh")
    assert not any(t.subject == "13/01/2025" for t in triplets)
    assert Triplet("IR-7", "raised", "2025-01-13") in extract(None, "Incident: IR-7\n"
                                                               "Raised: 2025-01-13")


def test_a_post_alone_in_a_cell_is_one_name_with_its_qualifier() -> None:
    text = ("| Ref | Finding | Responsible |\n|---|---|---|\n"
            "| A6 | Scooters charged on the landings | Housing Officer (Wrenfield North) |")
    assert Triplet("A6", "responsible", "Housing Officer (Wrenfield North)") in extract(
        "Action plan", text)
    # Half a bracket (a value cut at a comma inside it) or a key's colon is no post.
    from hopgraph.ingest.roles import job_title
    assert job_title("Joanne Pike (Building Manager") is None
    assert job_title("Head of Customer Experience      Approved: Board") is None
    assert job_title("Head of IT") == "Head of IT"


def test_a_name_with_and_before_a_legal_form_or_service_is_one_name() -> None:
    text = ("She was a surveyor with Moss and Partners LLP. He served with West Calder Fire "
            "and Rescue Service.")
    ends = {part for t in extract("Profiles", text) for part in (t.subject, t.object)}
    assert {"Moss and Partners", "West Calder Fire and Rescue Service"} <= ends
    assert not {"Moss", "Partners", "Rescue Service"} & ends


def test_a_company_joined_by_and_is_one_name_in_its_short_form_too() -> None:
    register = "| Hollins and Shaw Maintenance Ltd | repairs |"
    text = "Orders go to Pennine and to Hollins and Shaw through the portal."
    vocabulary = vocabulary_of([register, text])
    ends = {part for t in extract("Cutover", text, vocabulary=vocabulary)
            for part in (t.subject, t.object)}
    assert "Hollins and Shaw" in ends and not {"Hollins", "Shaw"} & ends
    alone = {part for t in extract("Cutover", text) for part in (t.subject, t.object)}
    assert {"Hollins", "Shaw"} <= alone  # two names, for all this text alone says


def test_two_names_each_written_alone_are_not_joined_by_and() -> None:
    texts = ["Fuelink Direct delivers diesel to Thornsby and Keldholme.",
             "Tanks at Thornsby and Keldholme were filled on Monday.",
             "| Thornsby | 17 buses |", "| Keldholme | 10 buses |",
             "Coaches from Thornsby; the electric buses stay at Keldholme.",
             "Both KX-4 and KX-4 Pro share a frame; both KX-4 and KX-4 Pro are grey.",
             "Sell the KX-4 Pro, not the KX-4. The KX-4 is old; a KX-4 Pro is new.",
             "Findings PT-25-01 and PT-25-02 were fixed; so were PT-25-01 and PT-25-02.",
             "Orders go to Hollins and Shaw. Hollins and Shaw replied."]
    vocabulary = vocabulary_of(texts)
    ends = {part for t in extract("Fuel", texts[0], vocabulary=vocabulary)
            for part in (t.subject, t.object)}
    assert {"Thornsby", "Keldholme"} <= ends and "Thornsby and Keldholme" not in ends
    # two products and two findings, not one name each
    assert not {"KX-4 and KX-4 Pro", "PT-25-01 and PT-25-02"} & vocabulary.joined
    assert "Hollins and Shaw" in vocabulary.joined  # "Shaw" is never written alone


def test_a_post_of_a_committee_joined_by_and_names_the_committee() -> None:
    text = ("The Chair of the Audit and Risk Committee reported on gas safety. "
            "The Audit and Risk Committee meets in July.")
    triplets = extract("Minutes", text)
    assert Triplet("Chair", "of the", "Audit and Risk Committee") in triplets
    ends = {part for t in triplets for part in (t.subject, t.object)}
    assert not {"Chair of the Audit", "Risk Committee"} & ends


def test_a_postcode_is_neither_a_name_nor_part_of_its_town() -> None:
    assert names("It moved to Harrowgate House, Wetherby LS22 7DN or Wrenfield WR4 6HC.") == [
        "Harrowgate House", "Wetherby", "Wrenfield"]
    assert names("The M62 and the A1 meet near CH3 and Line 3.") == ["M62", "A1", "CH3", "Line 3"]


def test_a_legend_says_what_an_exports_codes_stand_for() -> None:
    from hopgraph.ingest.documents import chunk_documents
    from hopgraph.ingest.offline_records import extract_chunks
    from hopgraph.ingest.reading import Document

    text = ("FLEET LIST\nDepot codes: LEE = Leeds, HUL = Hull, DON = Doncaster\n\n"
            "Fleet  Reg        Depot  Ownership\n"
            "F204   YB19 RTO   LEE    Owned\n"
            "F205   YB19 RTU   HUL    Wharfedale lease WTR-5610\n")
    load, _ = extract_chunks(chunk_documents([Document("fleet.txt", text, "txt")]))
    triplets = {t for record in load.records for t in record.triplets}
    assert Triplet("HUL", "depot codes", "Hull") in triplets  # the code stays a name to find
    assert Triplet("F205", "depot", "Hull") in triplets  # the rows say what it stands for
    assert not any("=" in t.subject or "=" in t.object for t in triplets)
    # a legend of words (not names) relates nothing, and one entry is no legend
    assert extract(None, "Tenure: SR = social rent, AR = affordable rent") == []
    assert Triplet("Keller Polymers", "supplies", "RB-118") in extract(
        "Keller Polymers", "Supplier: Keller Polymers\nSupplies: RB-118")


def test_a_legend_wrapped_after_a_comma_goes_on_to_its_next_line() -> None:
    from hopgraph.ingest import fields

    # as an export's chunk reaches the layout: the wrapped line no longer indented
    text = ("Priority: E = emergency, U = urgent\n"
            "Ctr: PPC = Pennine Property Care, HSM = Hollins and Shaw Maintenance,\n"
            "DLE = DryLine Environmental\n"
            "HomeBase 7 read-only from 30/10/2025 17:00.")
    records = fields.split(text).records
    assert records[0].fields[1] == ("Ctr", "PPC = Pennine Property Care, HSM = Hollins and "
                                           "Shaw Maintenance, DLE = DryLine Environmental")
    assert fields.coded_names(records[0].fields[1][1])[-1] == ("DLE", "DryLine Environmental")


def test_a_signing_line_relates_the_signer_to_the_party_in_their_role() -> None:
    text = ("Signed for and on behalf of Harrowgate Cold Chain Ltd by Claire Ashworth, "
            "Managing Director, on 14 March 2024.\n\n"
            "Signed for the Supplier by Kerensa Marlow, Director, on 18 March 2024.")
    assert extract("SIGNED", text) == [
        Triplet("Claire Ashworth", "signed for, managing director", "Harrowgate Cold Chain"),
        Triplet("Claire Ashworth", "signed on", "14 March 2024"),
        Triplet("Kerensa Marlow", "signed for, director", "Supplier"),
        Triplet("Kerensa Marlow", "signed on", "18 March 2024")]
    # the role is no longer related to the date, as the words between them were
    assert Triplet("Managing Director", "on", "14 March 2024") not in extract("SIGNED", text)


def test_a_company_given_with_its_address_is_where_the_places_are() -> None:
    text = ("Agreement: SLA-2024-07\n"
            "Contractor: Tolland & Reeve Building Services Ltd, Unit 9, Follingsby Park, "
            "Gateshead\n"
            "Copies to: Quayside Property Partners plc; Solway Data Centres Ltd")
    triplets = extract(None, text)
    assert Triplet("SLA-2024-07", "contractor", "Tolland & Reeve Building Services") in triplets
    assert Triplet("Tolland & Reeve Building Services", "at", "Gateshead") in triplets
    assert Triplet("SLA-2024-07", "contractor", "Gateshead") not in triplets
    # two companies, each with its legal form, are both what the key says
    assert Triplet("SLA-2024-07", "copies to", "Solway Data Centres") in triplets
    assert Triplet("SLA-2024-07", "copies to", "Quayside Property Partners") in triplets


def test_a_span_of_years_in_a_cell_is_one_value() -> None:
    triplets = extract(None, "| Code | Estate | Built |\n|---|---|---|\n"
                       "| WRF-03 | Larkhill | 1951-58 |\n| THX-01 | Millbeck | 1963–66 |\n"
                       "| ASH-02 | Ashdyke | 2024/25 |\n| MIL-01 | Millhaven | 1999 |\n")
    built = {t.subject: t.object for t in triplets if t.predicate == "built"}
    assert built == {"WRF-03": "1951-58", "THX-01": "1963–66", "ASH-02": "2024/25",
                     "MIL-01": "1999"}
    # a date written with hyphens is still a date, not a span
    assert Triplet("Report", "issued", "2025-01-13") in extract("Report", "Issued: 2025-01-13")


def test_a_run_in_heading_in_bold_ends_at_its_full_stop() -> None:
    text = ("**S-15 Old Bus Depot.** Full planning permission granted 30 April 2025.\n\n"
            "**S-16 Foxglove Rise.** Land bought in August 2025.")
    vocabulary = vocabulary_of([text, "a full list of land for sale"])
    found = extract("Development pipeline", text, vocabulary=vocabulary)
    ends = {name for t in found for name in (t.subject, t.object)}
    assert {"S-15 Old Bus Depot", "S-16 Foxglove Rise"} <= ends
    assert not {"Full", "Land"} & ends  # sentence openers, once the heading is a sentence
    assert not any("*" in name for name in ends)


def test_a_labels_value_opening_with_a_common_word_names_nothing_by_it() -> None:
    vocabulary = vocabulary_of(["the plan was approved", "call my mobile",
                                "Status: Approved at the Board meeting of 23 September 2025",
                                "Office 01632 960 418 | Mobile 07700 900 552"])
    found = extract("Minutes", "Status: Approved at the Board meeting of 23 September 2025\n"
                    "Office 01632 960 418 | Mobile 07700 900 552\n"
                    "Supplier: Dunmore Recycling\nIATA: ART", vocabulary=vocabulary)
    ends = {name for t in found for name in (t.subject, t.object)}
    assert not {"Approved", "Mobile"} & ends
    assert {"Board", "Dunmore Recycling", "ART"} <= ends  # names and codes after a label stay


def test_a_quoted_subjects_reply_mark_is_no_name() -> None:
    text = "> Subject: RE: Second entrapment in lift L2 this year"
    found = extract(None, text, vocabulary=vocabulary_of([text, "the second visit"]))
    assert not any("RE" in (t.subject, t.object) for t in found)
    found = extract(None, "Subject: RE: Lift L2 inspection by Anna Berg")
    assert {"Lift L2", "Anna Berg"} <= {name for t in found for name in (t.subject, t.object)}


def test_a_spaced_hyphen_is_a_dash_between_two_things_not_a_joiner() -> None:
    assert names("Call back 15:40 - Aldgate confirm the part.")[-1] == "Aldgate"
    assert names("Tender reference: BH/PROC/2022/11 (Lot 1 - Wrenfield)")[-2:] == [
        "Lot 1", "Wrenfield"]
    assert names("A4  Speck count at Coalville - Marek Nowak - ongoing")[-2:] == [
        "Coalville", "Marek Nowak"]
    assert names("Rejected load LD-250311-07 - Normanton 11/03")[1:3] == [
        "LD-250311-07", "Normanton"]
    assert names("Orrin-Tate and Saint-Denis sign.")[:2] == ["Orrin-Tate", "Saint-Denis"]
    # The word after the dash opens a phrase, as a label's value does: no name when the
    # texts also write it in lower case.
    for dash in ("-", "–", "—"):
        text = f"Finding 2 {dash} Gas safety records loaded late by the gas team"
        ends = {name for t in extract("Audit", text) for name in (t.subject, t.object)}
        assert "Finding 2" in ends and not {"Gas", "Finding 2-Gas"} & ends


def test_text_that_spaces_out_every_hyphen_keeps_its_spaced_hyphens_in_names() -> None:
    from hopgraph.ingest.vocabulary import spaces_hyphens

    tokenized = "Italy declared war on Austria - Hungary, an air - cooled empire."
    assert spaces_hyphens([tokenized])
    assert not spaces_hyphens(["Call back 15:40 - Aldgate about IR-2322."])
    assert not spaces_hyphens(["No hyphen here."])
    # a tokenizer that spaces out hyphens keeps a prefix's: "mid-2001" says nothing
    assert spaces_hyphens(["In mid-2001 it reached Dallas - Fort Worth and the co-op."])
    assert not spaces_hyphens(["In mid-2001 it reached Dallas - Fort Worth, a follow-up."])
    sentence = sentences_of([tokenized], Rules())[0]
    tokens, spacing = [v for _, v in sentence], [s for s, _ in sentence]
    assert [m.text for m in mentions(tokens, Rules(), spacing, spaced_hyphens=True)] == [
        "Italy", "Austria-Hungary"]
    assert [m.text for m in mentions(tokens, Rules(), spacing)] == [
        "Italy", "Austria", "Hungary"]
    # ...but not after a number: "1987 - On November 1" is a date and a new phrase.
    sentence = sentences_of(["Released 1987 - On November 1 it charted."], Rules())[0]
    found = mentions([v for _, v in sentence], Rules(), [s for s, _ in sentence], True)
    assert not any("-" in m.text for m in found)


def test_each_document_keeps_its_own_way_of_writing_hyphens() -> None:
    from hopgraph.ingest.documents import chunk_documents
    from hopgraph.ingest.offline_records import extract_chunks, extract_corpus
    from hopgraph.ingest.reading import Document

    wiki = "The Harley - Davidson engine was built in Milwaukee."
    memo = "Visit to Coalville - Marek Nowak met Anna Berg there. Ref IR-2322."
    load, _ = extract_chunks(chunk_documents([Document("wiki.txt", wiki, "txt"),
                                              Document("memo.txt", memo, "txt")]))
    ends = {name for record in load.records for t in record.triplets
            for name in (t.subject, t.object)}
    assert "Harley-Davidson" in ends and "Marek Nowak" in ends
    assert "Coalville-Marek Nowak" not in ends
    load, _ = extract_corpus([{"title": "Engine", "text": wiki},
                              {"title": "Memo", "text": memo}], "corpus.json")
    ends = {name for record in load.records for t in record.triplets
            for name in (t.subject, t.object)}
    assert "Harley-Davidson" in ends and "Marek Nowak" in ends


def test_a_name_written_in_lower_case_only_in_addresses_is_no_common_word() -> None:
    record = "Estate: WRF-01\nTown: Wrenfield\nStatus: Approved"
    texts = [record, "Contact: repairs@wrenfield.example.org or https://wrenfield.example.org",
             "The status was approved"]
    found = extract(None, record, vocabulary=vocabulary_of(texts))
    assert Triplet("WRF-01", "town", "Wrenfield") in found
    assert not any(t.object == "Approved" for t in found)  # a word, written in lower case
    # ...but a text that writes it in lower case outside an address makes it a word too
    found = extract(None, record, vocabulary=vocabulary_of([*texts, "the wrenfield road"]))
    assert not any(t.object == "Wrenfield" for t in found)


def test_a_part_cut_from_a_bracket_or_two_columns_is_not_taken_whole() -> None:
    table = ("| Estate | Streets | Town |\n|---|---|---|\n"
             "| WRF-01 | Heron Park (Heron Court, Kingfisher Walk, Heron Park Road) | Wrenfield |")
    found = extract("Estates register", table)
    ends = {name for t in found for name in (t.subject, t.object)}
    assert "Heron Park Road" in ends and not any(")" in name for name in ends)
    found = extract(None, "Report: Repairs export\n"
                    "Filter: trade group IN (DAMP/MOULD, ROOFING, MASONRY)  raised 01/03/2025")
    ends = {name for t in found for name in (t.subject, t.object)}
    assert "MASONRY" in ends and not any(")" in name or "  " in name for name in ends)


def test_a_value_that_runs_on_past_its_sentence_names_only_its_first() -> None:
    triplets = extract("Supplier register", "Register: Supplier register\n"
                       "Owner: Chief Financial Officer. Reviewed "
                       "quarterly; this version September 2025. Suppliers marked as such are "
                       "sub-processors.\nContact: Dr. Lee Hart, J. Smith")
    objects = {t.object for t in triplets if t.predicate == "owner"}
    assert "Chief Financial Officer" in objects
    assert not any("Reviewed" in o or "Suppliers" in o for o in objects), objects
    # a title's or an initial's full stop ends no sentence
    contacts = {t.object for t in triplets if t.predicate == "contact"}
    assert not {"Dr", "J"} & contacts, contacts


def test_a_row_keyed_by_a_bare_number_is_about_its_first_name_too() -> None:
    triplets = set(extract("Fleet register", "| Fleet No | Registration | Model | Seats |\n"
                           "|---|---|---|---|\n| 304 | RU73 BZR | Caledon Metro 10.8e | 37 |\n"))
    assert {Triplet("304", "registration", "RU73 BZR"),
            Triplet("304", "model", "Caledon Metro 10.8e"),
            Triplet("RU73 BZR", "model", "Caledon Metro 10.8e"),
            Triplet("RU73 BZR", "seats", "37")} <= triplets
    staff = set(extract("Drivers", "| Staff no | Name | Depot |\n|---|---|---|\n"
                        "| 4417 | Kevin Roper | Keldholme |\n"))
    assert Triplet("Kevin Roper", "depot", "Keldholme") in staff
    # a row keyed by a name or a code is about that name only
    keyed = set(extract("Suppliers", "| Supplier | Contact | Town |\n|---|---|---|\n"
                        "| Keller Polymers | Priya Castell | Coalville |\n"))
    assert not any(t.subject == "Priya Castell" for t in keyed), keyed


def test_an_initial_and_a_surname_are_the_one_full_name_the_ingest_writes() -> None:
    texts = ["Tom Whitcombe is Head of Platform Operations. Buses wait at Market Place, by "
             "the market.",
             "CHG REF   DATE        APPROVED BY    RESULT\n"
             "CHG-0957  2025-08-02  T.Whitcombe    Success\n"
             "CHG-0958  2025-08-03  M. Place       Success\n",
             "Signed: H. Okafor. Helen Okafor and Hugo Okafor met."]
    vocabulary = vocabulary_of(texts)
    log = set(extract("Change log", texts[1], vocabulary=vocabulary))
    assert Triplet("CHG-0957", "approved by", "Tom Whitcombe") in log
    # "Market Place" is no person's name: the texts write "market" in lower case; nor is
    # "B.League" the "Balkan League" of a text that writes "league"
    assert vocabulary.full_name("M. Place") == "M. Place"
    leagues = vocabulary_of(["The Balkan League was a league. The B.League formed later."])
    assert leagues.full_name("B.League") == "B.League"
    # two people the initial could stand for: neither
    assert vocabulary.full_name("H. Okafor") == "H. Okafor"
    assert vocabulary.full_name("T. Whitcombe") == "Tom Whitcombe"


def test_a_first_name_alone_is_the_one_person_the_ingest_gives_a_job_title_with_it() -> None:
    texts = ["## Nadia Farouk — Customer Success Manager\n\nNadia looks after our largest "
             "customers.",
             "Lewis Hay, Financial Controller, will apply the credit. On Monday, Nadia "
             "called Dales & Moor Facilities about it.",
             "Tom Ashby, Support Team Lead, and Tom Whitcombe, Head of Platform Operations, "
             "met Harrogate Interchange staff. Later Tom called Dales & Moor Facilities.",
             "Harrogate Interchange opens at six. Harrogate is a town."]
    vocabulary = vocabulary_of(texts)
    assert vocabulary.full_name("Nadia") == "Nadia Farouk"
    assert vocabulary.full_name("Lewis") == "Lewis Hay"
    assert vocabulary.full_name("Tom") == "Tom"  # two people with a title share it
    assert vocabulary.full_name("Harrogate") == "Harrogate"  # no person: no title after it
    found = extract("Service credit", texts[1], vocabulary=vocabulary)
    assert Triplet("Nadia Farouk", "called", "Dales & Moor Facilities") in found
    assert "Nadia" not in {name for t in found for name in (t.subject, t.object)}


_FLEET = ("Fleet register\n| Fleet No | Registration | Model |\n|---|---|---|\n"
          "| 304 | RU73 BZR | Caledon Metro 10.8e |\n| 402 | RJ17 OUG | Vanta Tourer 12 |\n")


def test_a_registers_number_written_alone_is_a_name() -> None:
    # a register cut into a chunk per row: rows are counted by their header across texts
    texts = [_FLEET, "Fleet register\n| Fleet No | Registration | Model |\n|---|---|---|\n"
             "| 406 | RV72 HDE | Vanta Tourer 12 Plus |\n",
             "The outing on 11 October ran with 406. I told Rizwan to send 304 from "
             "Thornsby. Coach 402 on the S22 lost a wheel; the coach was recovered.",
             "Call 01632 960 304 or pay £402, or drive 406 km to Thornsby."]
    vocabulary = vocabulary_of(texts)
    assert vocabulary.registers == {"304", "402", "406"}
    told = set(extract("Call notes", texts[2], vocabulary=vocabulary))
    assert {Triplet("11 October", "ran with", "406"), Triplet("Rizwan", "to send", "304"),
            Triplet("304", "from", "Thornsby"), Triplet("402", "on the", "S22")} <= told, told
    # a phone number, an amount and a distance hold no register's number
    other = extract("Call notes", texts[3], vocabulary=vocabulary)
    assert not {"304", "402", "406"} & {n for t in other for n in (t.subject, t.object)}
    # without the register the numbers are values, as before
    assert not any("406" in (t.subject, t.object) for t in extract("Call notes", texts[2]))


def test_no_register_of_years_or_of_a_short_list() -> None:
    years = ("| Year | Auditor | Fee |\n|---|---|---|\n| 2022 | Greaves Tindall | £9,000 |\n"
             "| 2023 | Greaves Tindall | £9,400 |\n| 2024 | Moss and Partners | £9,800 |\n")
    assert vocabulary_of([years]).registers == frozenset()
    assert vocabulary_of([_FLEET]).registers == frozenset()  # two rows: no register yet
