"""A public body named after a nation ("Health Canada", "Sport England") is an organisation,
never a person who works somewhere; a person named like one of the nation words alone is not
caught by it."""

from __future__ import annotations

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions.names import looks_like_org


def test_a_name_ending_in_a_nation_is_an_organisation():
    assert looks_like_org("Transport Canada") and looks_like_org("Education Scotland")
    assert looks_like_org("Sport England") and looks_like_org("Public Health Wales")
    assert not looks_like_org("Canada") and not looks_like_org("Marie Laurent") and not looks_like_org("Wales")


def test_a_newspaper_is_an_organisation_not_a_person():
    assert looks_like_org("Economic Times") and looks_like_org("Irish Examiner Magazine")
    assert looks_like_org("Yorkshire Post Herald") and not looks_like_org("Nora Times-Bell")


def test_a_body_applied_to_is_no_employee_of_the_applicant():
    t = Transcript(
        [
            Utterance(
                0,
                "Dana Whitfield",
                "Six weeks on, Orion Biologics still has not filed with Transport Canada for the permit.",
            )
        ],
        "txt",
    )
    facts = [(a.subject.name, a.predicate) for a in offline.extract(t)]
    assert ("Transport Canada", "works_at") not in facts
