"""Offline answer rules v2 (answer_cues.v2.toml): per frame, per product format, the names, and v1
kept byte for byte. The sentences are written for these tests, not taken from the answer set."""

from __future__ import annotations

import hashlib
import json

import pytest
from evaluate.test_measures import OPEN

from agentmemgate.answer_judge import (
    ANSWER_CUES_DIR,
    AnswerQuestion,
    OfflineAnswerJudge,
    ScopedOfflineAnswerJudge,
    get_answer_judge,
)
from agentmemgate.errors import BadInput
from agentmemgate.evaluate.answer_scoring import assess, score_answers
from agentmemgate.evaluate.judges import get_value_judge
from agentmemgate.evaluate.truth import truth_of

V2 = get_answer_judge("offline:answer_cues.v2")
EQ = get_value_judge("offline")
V1_SHA = "6d99fc236f9a0635012f1e0113d5f575ab3ff166b591827282a7f1ee411512bf"


def ask(answer, values=("Pandora", "Deezer"), judge=V2, field="music_app"):
    return judge.ask(
        AnswerQuestion(
            field=field,
            description=f"The user's current {field}.",
            probe_question="Which one does the user have?",
            answer=answer,
            candidates=values,
        )
    )


def check(answer, want, values=("Pandora", "Deezer"), field="music_app"):
    v = ask(answer, values, field=field)
    assert sorted(v.asserted) == sorted(want), v.rationale


# -- frames in prose ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "answer, want",
    [
        # stated as current, hedged or bare
        ("You listen on Pandora.", ["Pandora"]),
        ("Probably Deezer.", ["Deezer"]),
        ("Deezer, I think.", ["Deezer"]),
        ("Your music app is Pandora.", ["Pandora"]),
        ("You've been on Pandora for years.", ["Pandora"]),
        ("You use Pandora, right?", ["Pandora"]),
        ("You're a Deezer user, aren't you?", ["Deezer"]),
        # plan, intention, wish, option
        ("You're planning to switch to Deezer.", []),
        ("You use Pandora and plan to try Deezer next month.", ["Pandora"]),
        ("You would like to use Deezer.", []),
        ("Deezer is on your wish list.", []),
        ("Pandora (maybe Deezer later).", ["Pandora"]),
        ("Pandora; Deezer is an option you keep coming back to.", ["Pandora"]),
        ("You're deciding whether to stay on Pandora or move to Deezer.", ["Pandora"]),
        # offer, pending order, future start
        ("You're on Pandora; Deezer mailed you a promo code.", ["Pandora"]),
        ("Your Deezer subscription starts on the 1st.", []),
        ("You've ordered a Deezer gift card that hasn't arrived.", []),
        ("You signed up with Deezer last week and start on Monday.", []),
        # dropped or declined
        ("You decided against Deezer and kept Pandora.", ["Pandora"]),
        ("You chose Pandora over Deezer.", ["Pandora"]),
        ("You were going to leave Pandora for Deezer but decided not to.", ["Pandora"]),
        # past, replaced, left
        ("You used to use Pandora; now you use Deezer.", ["Deezer"]),
        ("Pandora was your old app.", []),
        ("You replaced Pandora with Deezer last spring.", ["Deezer"]),
        ("After leaving Pandora, you signed up for Deezer.", ["Deezer"]),
        ("You switched from Pandora to Deezer.", ["Deezer"]),
        # a change not made leaves the current value current
        ("You want to leave Pandora for Deezer.", ["Pandora"]),
        ("You might drop Pandora.", ["Pandora"]),
        ("You still haven't left Pandora.", ["Pandora"]),
        # negation, either/or, questions
        ("You don't use Deezer.", []),
        ("You haven't switched to Deezer yet.", []),
        ("Pandora or Deezer, I can't tell which.", []),
        ("Maybe Pandora, maybe Deezer.", []),
        ("Do you still use Pandora?", []),
        # a plan that came true; the narrative's own conclusion
        ("You planned to switch to Deezer, and it happened last week.", ["Deezer"]),
        ("One memory says Pandora and a newer one says Deezer, so Deezer.", ["Deezer"]),
        # two values stated as current
        ("You use Pandora. You also use Deezer.", ["Pandora", "Deezer"]),
        ("You use both Pandora and Deezer.", ["Pandora", "Deezer"]),
        # nothing
        ("I don't have that information.", []),
    ],
)
def test_frames_in_prose(answer, want):
    check(answer, want)


@pytest.mark.parametrize(
    "values, answer, want",
    [
        (
            ("Acme Corp", "Globex"),
            "You're currently employed at Acme Corp. Globex has offered you a senior role.",
            ["Acme Corp"],
        ),
        (
            ("Acme Corp", "Globex"),
            "You joined Globex three months ago after leaving Acme Corp.",
            ["Globex"],
        ),
        (
            ("Acme Corp", "Globex"),
            "Did the Globex job come through? Last I knew you were at Acme Corp.",
            ["Acme Corp"],
        ),
        (
            ("Planet Fitness", "YMCA"),
            "You're at the YMCA now; you let the Planet Fitness membership lapse.",
            ["YMCA"],
        ),
        (("Planet Fitness", "YMCA"), "You tried a class at the YMCA but didn't sign up.", []),
        (
            ("Chicago", "Denver"),
            "You're in Chicago for now; the Denver move is set for August.",
            ["Chicago"],
        ),
        (("Chicago", "Denver"), "You grew up in Chicago and now live in Denver.", ["Denver"]),
        (
            ("Rite Aid", "Amazon Pharmacy"),
            "Rite Aid, until your Amazon Pharmacy account is approved.",
            ["Rite Aid"],
        ),
        (("Box", "pCloud"), "The pCloud plan kicks in when the Box one expires.", ["Box"]),
        (
            ("AT&T", "Visible"),
            "You're on AT&T. Visible is cheaper and you've been comparing plans.",
            ["AT&T"],
        ),
        (
            ("MacBook Air", "ThinkPad X1"),
            "You have a MacBook Air; you were offered a ThinkPad X1 by work but turned it down.",
            ["MacBook Air"],
        ),
        (
            ("Allstate", "Lemonade"),
            "Your partner is with Lemonade; you're with Allstate.",
            ["Allstate"],
        ),
    ],
)
def test_frames_with_other_values(values, answer, want):
    check(answer, want, values)


def test_a_long_value_is_found_by_a_shorter_form():
    long = (
        "the little Italian place on Maple Avenue with the red awning",
        "the ramen shop near the train station that stays open late",
    )
    check("Your go-to spot is the little Italian place on Maple Avenue.", [long[0]], long)
    check("You've started going to the ramen shop near the train station instead.", [long[1]], long)
    check("You keep saying you want to try the ramen shop near the train station.", [], long)


# -- product formats ----------------------------------------------------------------------------
def mem0_search(*memories, relations=None):
    out = {
        "results": [
            {
                "id": f"m{i}",
                "memory": m,
                "hash": "h",
                "metadata": None,
                "score": 0.8,
                "created_at": "2024-01-01T00:00:00",
                "updated_at": None,
                "user_id": "u",
            }
            for i, m in enumerate(memories)
        ]
    }
    if relations:
        out["relations"] = relations
    return json.dumps(out, indent=2)


def graphiti_json(*facts):
    return (
        "These are the most relevant facts.\n<FACTS>\n"
        + json.dumps(
            [
                dict(
                    fact=f,
                    valid_at="2023-01-01 00:00:00+00:00",
                    invalid_at=inv,
                    **({"expired_at": exp} if exp is not None else {}),
                )
                for f, inv, exp in facts
            ],
            indent=2,
        )
        + "\n</FACTS>\n<ENTITIES>\n[]\n</ENTITIES>"
    )


@pytest.mark.parametrize(
    "answer, want",
    [
        # Mem0 memory lines, plain and with timestamps or scores
        ("- Listens to music on Pandora\n- Wants to look at Deezer", ["Pandora"]),
        ("- Dropped Pandora\n- Signed up with Deezer", ["Deezer"]),
        ("- Listens on Pandora\n- Listens on Deezer", ["Pandora", "Deezer"]),
        ("2024-01-02 | Listens on Pandora\n2024-06-01 | Moving to Deezer in the fall", ["Pandora"]),
        ("score 0.91 | 2024-06-01 | Switched from Pandora to Deezer", ["Deezer"]),
        # Mem0 search JSON, with graph relations
        (mem0_search("Listens on Pandora", "Might sign up for Deezer"), ["Pandora"]),
        (mem0_search("Got a free trial of Deezer"), []),
        (
            mem0_search(
                relations=[{"source": "user", "relationship": "listens_on", "target": "deezer"}]
            ),
            ["Deezer"],
        ),
        # Mem0 history: the last event of each memory counts; a DELETE leaves nothing
        (
            json.dumps(
                [
                    {
                        "memory_id": "m1",
                        "old_memory": None,
                        "new_memory": "Listens on Pandora",
                        "event": "ADD",
                    },
                    {
                        "memory_id": "m1",
                        "old_memory": "Listens on Pandora",
                        "new_memory": "Listens on Deezer",
                        "event": "UPDATE",
                    },
                ]
            ),
            ["Deezer"],
        ),
        (
            json.dumps(
                [
                    {
                        "memory_id": "m1",
                        "old_memory": None,
                        "new_memory": "Listens on Pandora",
                        "event": "ADD",
                    },
                    {
                        "memory_id": "m1",
                        "old_memory": "Listens on Pandora",
                        "new_memory": None,
                        "event": "DELETE",
                        "is_deleted": True,
                    },
                ]
            ),
            [],
        ),
        # Graphiti facts as JSON: an invalid_at date or an expired_at ends a fact
        (
            graphiti_json(
                ("User listens on Pandora", "2024-05-01 00:00:00+00:00", None),
                ("User listens on Deezer", "Present", None),
            ),
            ["Deezer"],
        ),
        (
            graphiti_json(
                ("User listens on Pandora", "Present", "2024-05-01T00:00:00Z"),
                ("User listens on Deezer", None, None),
            ),
            ["Deezer"],
        ),
        (
            graphiti_json(
                ("User listens on Pandora", "Present", None),
                ("User is considering Deezer", "Present", None),
            ),
            ["Pandora"],
        ),
        # Graphiti facts as text: (from - to) ranges, and Valid from/until blocks
        (
            "# format: FACT (Date range: from - to)\n<FACTS>\n"
            "  - User listens on Pandora (2020-01-01 00:00:00+00:00 - 2024-03-01 00:00:00+00:00)\n"
            "  - User listens on Deezer (2024-03-01 00:00:00+00:00 - present)\n</FACTS>",
            ["Deezer"],
        ),
        (
            "# format: FACT (Date range: from - to)\n  - User listens on Pandora (date unknown - present)\n"
            "  - User moved from Pandora to Deezer (2024-05-01 00:00:00+00:00 - present)",
            ["Pandora", "Deezer"],
        ),
        (
            "Fact: User listens on Pandora\nValid from: 2021-01-01\nValid until: 2024-02-01\n---\n"
            "Fact: User listens on Deezer\nValid from: 2024-02-01",
            ["Deezer"],
        ),
    ],
)
def test_product_formats(answer, want):
    check(answer, want)


def test_records_are_read_one_by_one_and_a_narrative_as_a_whole():
    # two records: each stands; one narrative: its later statement ends the first value
    check(
        "- Works at Oracle\n- Moved from Oracle to Stripe",
        ["Oracle", "Stripe"],
        ("Oracle", "Stripe"),
    )
    check(
        "You work at Oracle. Your last day at Oracle was April 30. You've been at Stripe since May.",
        ["Stripe"],
        ("Oracle", "Stripe"),
    )


# -- another current value ----------------------------------------------------------------------
def test_another_current_value_is_named_and_maps_to_neither_labelled_value():
    field = truth_of(OPEN).field
    for answer, name in [
        ("You use Tidal now.", "Tidal"),
        ("Tidal.", "Tidal"),
        ("You left Pandora for Tidal.", "Tidal"),
        ("You moved your playlists to a family plan on Apple Music.", "Apple Music"),
    ]:
        v = ask(answer)
        assert v.asserted == [name], v.rationale
        assert not any(EQ.same(field, name, x) for x in ("Pandora", "Deezer"))
    # none when the name is planned, a person, a month, or in a memory about something else
    check("You might try Tidal.", [])
    check("You live with your partner Sam.", [])
    check("You quit Pandora in May.", [])
    check("- Runs on weekends\n- Lives in Toronto\n- Thinking about Deezer", [])


def test_an_answer_with_another_value_counts_against_task_accuracy():
    truth = truth_of(OPEN)
    answers = ["Pandora.", "You use Tidal now."]
    verdicts = assess(truth, answers, V2)
    s = score_answers(truth, answers, verdicts, lambda v, ref: EQ.same(truth.field, v, ref))
    assert s.values == {"exposure": False, "end_contamination": False, "task_accuracy": False}


# -- rationales ---------------------------------------------------------------------------------
def test_the_rationale_names_the_frame_per_value():
    why = ask("You listen on Pandora and are planning to move to Deezer.").rationale
    assert "'Pandora' in the answer: stated as current -> asserted" in why
    assert "'Deezer' in the answer: a plan, wish or option ('planning') -> not asserted" in why
    why = ask("- Listens on Pandora\n- Decided against Deezer").rationale
    assert "'Pandora' in a memory line: stated as current" in why
    assert "'Deezer' in a memory line: a dropped or declined idea ('decided against')" in why
    why = ask(
        graphiti_json(("User listens on Pandora", "2024-05-01 00:00:00+00:00", None))
    ).rationale
    assert (
        "'Pandora' in a graph fact: in a record marked no longer valid (invalid_at 2024-05-01"
        in why
    )
    assert ask("No idea, sorry.").asserted == []


# -- names and versions -------------------------------------------------------------------------
def test_offline_is_the_newest_and_each_version_can_be_pinned():
    newest = get_answer_judge("offline")
    assert isinstance(newest, ScopedOfflineAnswerJudge)
    files = ANSWER_CUES_DIR.glob("answer_cues.v*.toml")
    top = max(int(f.stem.rsplit(".v", 1)[1]) for f in files)
    assert (newest.spec, newest.rubric) == ("offline", f"answer_cues.v{top}")
    assert V2.spec == "offline:answer_cues.v2" and V2.rubric_sha256 != newest.rubric_sha256
    assert (
        V2.rubric_sha256
        == hashlib.sha256((ANSWER_CUES_DIR / "answer_cues.v2.toml").read_bytes()).hexdigest()
    )
    v1 = get_answer_judge("offline:answer_cues.v1")
    assert isinstance(v1, OfflineAnswerJudge) and v1.rubric == "answer_cues.v1"
    assert get_value_judge("offline:answer_cues.v2").judge.spec == "offline"
    with pytest.raises(BadInput, match=f"No offline answer rules version {top + 1}"):
        get_answer_judge(f"offline:answer_cues.v{top + 1}")


def test_v1_is_unchanged_byte_for_byte_and_in_behaviour():
    assert (
        hashlib.sha256((ANSWER_CUES_DIR / "answer_cues.v1.toml").read_bytes()).hexdigest() == V1_SHA
    )
    v1 = get_answer_judge("offline:answer_cues.v1")
    assert v1.rubric_sha256 == V1_SHA
    for answer, want in [
        ("Still Pandora, but thinking about switching to Deezer.", ["Pandora"]),
        ("Deezer is on the maybe list.", []),
        ("They switched from Pandora to Deezer.", ["Deezer"]),
        ("Spotify.", []),  # v1 cannot name another value
        # what v2 reads differently: an invalid fact, a past state named by its verb
        (
            graphiti_json(("User listens on Pandora", "2024-05-01 00:00:00+00:00", None)),
            ["Pandora"],
        ),
        ("You had Pandora for years.", ["Pandora"]),
    ]:
        assert ask(answer, judge=v1).asserted == want
    assert (
        ask(graphiti_json(("User listens on Pandora", "2024-05-01 00:00:00+00:00", None))).asserted
        == []
    )
    assert ask("You had Pandora for years.").asserted == []


# -- mechanisms added after the first held-out measurement (sentences written for these tests) --
@pytest.mark.parametrize(
    "values, answer, want",
    [
        # a new predicate after "and" is read on its own: a cue of the first one does not reach it,
        # and a name it states as current is another value
        (
            ("Duolingo", "Babbel"),
            "You turned down the Babbel discount and kept paying for Duolingo.",
            ["Duolingo"],
        ),
        (
            ("Hulu", "Peacock"),
            "You skipped the Peacock free month and watch Hulu most nights.",
            ["Hulu"],
        ),
        (
            ("Geico", "Progressive"),
            "You rejected the Progressive quote and renewed your Geico policy.",
            ["Geico"],
        ),
        (
            ("Kroger", "Safeway"),
            "You dropped the idea of Safeway and shop at Publix now.",
            ["Publix"],
        ),
        (
            ("Canva", "Figma"),
            "You gave up on Figma after a week and design in Sketch these days.",
            ["Sketch"],
        ),
        (
            ("Chase", "Wells Fargo"),
            "You compared Chase and Wells Fargo for months and opened an account with Citi.",
            ["Citi"],
        ),
        (
            ("Boston", "Denver"),
            "You weighed Boston against Denver and settled in Austin.",
            ["Austin"],
        ),
        (("Kroger", "Safeway"), "You dropped the idea of Safeway and might try Publix.", []),
        # "you order / book / ship with X": a habit in the present, not a pending order
        (
            ("Instacart", "Shipt"),
            "Shipt was your old service; you order groceries through Instacart.",
            ["Instacart"],
        ),
        (("Expedia", "Kayak"), "You book trips on Kayak.", ["Kayak"]),
        (("UPS", "FedEx"), "- Ships packages with FedEx", ["FedEx"]),
        (("Wolt", "Deliveroo"), "You usually order from Deliveroo.", ["Deliveroo"]),
        (("Wolt", "Deliveroo"), "You've ordered a Deliveroo gift card.", []),
        # the thing cancelled, declined or booked is the offer or the order itself
        (("Netflix", "Peacock"), "- Cancelled a Peacock trial", []),
        (("Audible", "Libby"), "User returned the Audible order before it shipped.", []),
        (("Noom", "MyFitnessPal"), "You ended the Noom free trial after a week.", []),
        (
            ("Equinox", "Crunch"),
            "You declined the Crunch guest pass and kept going to Equinox.",
            ["Equinox"],
        ),
        # a value that opens its clause as the subject of "replaced", or replaced in the passive
        (("Trello", "Asana"), "Asana has replaced Trello for your team.", ["Asana"]),
        (
            ("Comcast", "Verizon Fios"),
            "Your Comcast service was replaced by Verizon Fios in May.",
            ["Verizon Fios"],
        ),
        (
            ("Toyota Corolla", "Honda Civic"),
            "The Toyota Corolla got swapped for a Honda Civic.",
            ["Honda Civic"],
        ),
        (("Slack", "Discord"), "Discord took over from Slack last year.", ["Discord"]),
        # "a X plan" after a change made names the service, not an intention
        (
            ("T-Mobile", "Mint Mobile"),
            "You switched to a Mint Mobile plan in March.",
            ["Mint Mobile"],
        ),
        (("Aetna", "Kaiser"), "You moved onto a Kaiser plan this year.", ["Kaiser"]),
        (("Aetna", "Kaiser"), "The Kaiser plan is still up in the air.", []),
        # a subordinate clause without a comma ends where the main clause's subject comes
        (("Kindle", "Kobo"), "Until the Kobo ships you're reading on the Kindle.", ["Kindle"]),
        (
            ("Comcast", "Starlink"),
            "Until the Starlink dish arrives you're still on Comcast.",
            ["Comcast"],
        ),
        (("Aldi", "Lidl"), "Until the new Lidl opens you're shopping at Aldi.", ["Aldi"]),
        (("Aldi", "Lidl"), "If the Lidl opens you'll switch to it.", []),
        # a setting marked as past ("at the old apartment") makes a record past
        (("Xfinity", "Sonic"), "- Complained about Xfinity outages at the old apartment", []),
        (
            ("Spectrum", "Sonic"),
            "- Had Spectrum at your previous place\n- Uses Sonic at home",
            ["Sonic"],
        ),
        (("Planet Fitness", "YMCA"), "Went to Planet Fitness near your former office.", []),
        # another value named beside a labelled one stated as current
        (("Aldi", "Lidl"), "You shop at Costco and sometimes at Aldi.", ["Aldi", "Costco"]),
        (("Netflix", "Max"), "You watch Netflix and Hulu.", ["Hulu", "Netflix"]),
        (("Chase", "Ally"), "You bank with Chase and also with Schwab.", ["Chase", "Schwab"]),
        (("Chase", "Ally"), "You bank with Chase and want to try Schwab.", ["Chase"]),
        # a span of time that ended before the value, and "before" dating a change made
        (("Austin", "Denver"), "After four years in Austin you moved to Denver.", ["Denver"]),
        (("Acme", "Globex"), "After a long stint at Acme, you're now at Globex.", ["Globex"]),
        (("Target", "Costco"), "Following two years with Target, you shop at Costco.", ["Costco"]),
        (("Acme", "Globex"), "You spent six years at Acme before joining Globex.", ["Globex"]),
        (("Hulu", "Max"), "You had Hulu for ages before switching to Max.", ["Max"]),
        # a subordinate clause opened by "after" is its own clause
        (("Hulu", "Max"), "You moved over to Max after Hulu raised prices.", ["Max"]),
        (
            ("Geico", "Progressive"),
            "You signed with Progressive after Geico dropped you.",
            ["Progressive"],
        ),
        (("Lyft", "Uber"), "You ride with Uber after Lyft stopped serving your area.", ["Uber"]),
        # a bare value after "then", following a clause opened by "until"/"when": the next step
        (
            ("Seattle", "Portland"),
            "You're in Seattle until the lease ends, then Portland.",
            ["Seattle"],
        ),
        (("Kroger", "Aldi"), "Kroger for now; when the new store opens, then Aldi.", ["Kroger"]),
        (("Geico", "Progressive"), "Geico until the renewal, then Progressive.", ["Geico"]),
        (("Seattle", "Portland"), "You were in Seattle until 2020, then Portland.", ["Portland"]),
        # a name with a plus sign, and words that are never a name
        (("Hulu", "Netflix"), "You ditched Hulu for Disney+.", ["Disney+"]),
        (("Hulu", "Netflix"), "Neither: you watch Peacock now.", ["Peacock"]),
        (("Hulu", "Netflix"), "Both are gone; you're on Apple TV+ these days.", ["Apple TV+"]),
        # a change made with a future date after it ("starting January") has not happened yet
        (
            ("Aetna", "Cigna"),
            "- Has Aetna through work\n- Enrolled in Cigna starting January",
            ["Aetna"],
        ),
        (("Verizon", "Visible"), "You signed up for Visible effective next month.", []),
        (("Equinox", "Crunch"), "You joined Crunch beginning in the fall.", []),
        (("Equinox", "Crunch"), "You joined Crunch in March.", ["Crunch"]),
        # a value "instead of" which a change is only wished or planned stays current
        (("Aetna", "Cigna"), "You wish you had Cigna instead of Aetna.", ["Aetna"]),
        (("Hulu", "Max"), "You'd rather watch Max than keep paying for Hulu.", ["Hulu"]),
        (("Toyota", "Subaru"), "You want a Subaru instead of the Toyota.", ["Toyota"]),
        (("Toyota", "Subaru"), "You bought a Subaru instead of another Toyota.", ["Subaru"]),
        # a bare value answer corrected by a change made in the same sentence names the value left
        (("Aetna", "Cigna"), "Aetna (you moved to Cigna in March).", ["Cigna"]),
        (("Dallas", "Houston"), "Dallas - though you relocated to Houston last fall.", ["Houston"]),
        (("Slack", "Teams"), "Slack; your company switched you to Teams in June.", ["Teams"]),
        (("Chase", "Ally"), "Chase (and you opened an Ally account too).", ["Chase", "Ally"]),
        (("Chase", "Ally"), "Chase (you might move to Ally).", ["Chase"]),
        # a change made whose start is still ahead
        (
            ("Deloitte", "Accenture"),
            "Accenture hired you, but your start date is next month; you're still at Deloitte.",
            ["Deloitte"],
        ),
        (("Chicago", "Denver"), "You closed on a house in Denver and move in next week.", []),
        (("Verizon", "Visible"), "You ordered a Visible eSIM and switch next Friday.", []),
        # "after X" alone, a value that laid the user off, the present perfect of a state verb
        (("Deloitte", "Accenture"), "You joined KPMG after Deloitte.", ["KPMG"]),
        (("Chicago", "Denver"), "You settled in Austin after Chicago.", ["Austin"]),
        (
            ("Deloitte", "Accenture"),
            "Deloitte laid you off in March, and Accenture hired you in April.",
            ["Accenture"],
        ),
        (("Chicago", "Denver"), "You've lived in Chicago your whole life.", ["Chicago"]),
        (("Chase", "Ally"), "You've banked with Chase since college.", ["Chase"]),
        (("Kroger", "Aldi"), "You've shopped at Kroger for a decade.", ["Kroger"]),
        # a value that is only talked about, or the place of a past event of the user
        (("Chicago", "Denver"), "You live in Chicago, though Denver keeps coming up.", ["Chicago"]),
        (("Hulu", "Max"), "Hulu. Max came up once in conversation.", ["Hulu"]),
        (("Kroger", "Aldi"), "Kroger; Aldi gets mentioned now and then.", ["Kroger"]),
        (("Chicago", "Denver"), "Chicago is where you were born; you live in Denver.", ["Denver"]),
        (
            ("Acme", "Globex"),
            "Acme is where you worked before; Globex is your employer.",
            ["Globex"],
        ),
        (("Hulu", "Max"), "Hulu is the one you had in college; you watch Max.", ["Max"]),
        # testing a value is a trial, and "a Mint plan" names another value
        (
            ("Verizon", "T-Mobile"),
            "You're with Verizon. You're also testing T-Mobile on a second line.",
            ["Verizon"],
        ),
        (("Notion", "Obsidian"), "Notion, and you're trialing Obsidian this month.", ["Notion"]),
        (("Zoom", "Meet"), "You're demoing Meet with your team; you use Zoom.", ["Zoom"]),
        (("Verizon", "T-Mobile"), "You're on a prepaid Mint plan.", ["Mint"]),
        (("Aetna", "Cigna"), "You're on a Kaiser plan through your employer.", ["Kaiser"]),
        (("Aetna", "Cigna"), "You might get a Kaiser plan.", []),
    ],
)
def test_mechanisms_after_the_first_heldout(values, answer, want):
    check(answer, want, values, field="provider")


@pytest.mark.parametrize(
    "field, values, answer, want",
    [
        (
            "personal_email",
            ("Gmail", "Proton Mail"),
            "You use Proton Mail for personal email and Gmail for work. Gmail stays work-only.",
            ["Proton Mail"],
        ),
        (
            "personal_browser",
            ("Chrome", "Safari"),
            "- Uses Safari for personal browsing\n- Uses Chrome for work",
            ["Safari"],
        ),
        (
            "home_internet",
            ("Comcast", "Starlink"),
            "Comcast for the home and Starlink for the cabin; you've thought about Starlink at home too.",
            ["Comcast"],
        ),
        # no contrast: a purpose alone does not take the value away
        ("personal_browser", ("Chrome", "Safari"), "You use Chrome for work.", ["Chrome"]),
        (
            "personal_email",
            ("Gmail", "Proton Mail"),
            "Gmail for personal email, Proton Mail for personal email too.",
            ["Gmail", "Proton Mail"],
        ),
    ],
)
def test_a_value_for_another_purpose_than_the_field_is_not_asserted(field, values, answer, want):
    check(answer, want, values, field=field)


@pytest.mark.parametrize(
    "answer",
    [
        "Unknown.",
        "Sorry, I couldn't find anything about that.",
        "None on record.",
        "Unclear from my notes.",
        "Hmm, I can't find a gym in your memories.",
        "Nothing stored yet.",
        "N/A",
    ],
)
def test_no_answer_words_are_not_another_value(answer):
    check(answer, [])


@pytest.mark.parametrize(
    "answer, want",
    [
        # a hedged statement ending in "?" states its value; a question that only asks does not
        ("Probably Pandora?", ["Pandora"]),
        ("I think it's Deezer?", ["Deezer"]),
        ("Most likely Pandora, unless you've switched?", ["Pandora"]),
        ("Is it Pandora?", []),
        ("Maybe Deezer?", []),
    ],
)
def test_a_hedged_statement_with_a_question_mark(answer, want):
    check(answer, want)


def test_a_scored_timestamped_line_is_a_memory_record():
    check(
        "(0.91) 2024-05-01T10:00:00Z  Listens on Tidal most days\n"
        "(0.70) 2024-04-02T09:00:00Z  Thinking of trying Deezer",
        ["Tidal"],
    )
    check(
        "(0.88) 2024-06-01  Streams on Pandora\n(0.52) 2024-01-01  Might look at Deezer",
        ["Pandora"],
    )
    check("[0.77] 2024-02-02 12:00  Moved to Deezer", ["Deezer"])


@pytest.mark.parametrize(
    "answer",
    [
        # intentions and changes named as nouns
        "You plan on switching to Figma.",
        "- Plans on moving the team to Figma",
        "A move to Figma is being discussed.",
        "The switch to Figma is on your roadmap.",
        # evaluations, research, near misses, reminders, shortlists
        "Your team is evaluating Figma.",
        "- Researching Figma pricing",
        "You're piloting Figma.",
        "You almost bought Figma.",
        "You're this close to buying Figma.",
        "You asked me to remind you to look at Figma.",
        "You've put Figma on your shortlist.",
        # appraisals of an option, a conditional beside a bare value, "'d" after the value
        "Figma's free tier looks good to you.",
        "Figma sounds promising to you.",
        "If the price drops, Figma.",
        "Figma, once your boss agrees.",
        "Figma, assuming the budget clears.",
        "Figma is what you'd pick if you switched.",
        # in progress: a passive progressive
        "Your Figma seat is being provisioned.",
        "Figma licenses are being purchased for the team.",
    ],
)
def test_a_plan_in_these_wordings_is_not_asserted(answer):
    v = ask(answer, ("Canva", "Figma"), field="design_tool")
    assert "Figma" not in v.asserted, v.rationale


@pytest.mark.parametrize(
    "answer",
    [
        # the new plan cues do not take a current value away
        "You almost always design in Canva.",
        "You do nearly everything in Canva.",
        "You use Canva; it looks good enough for you.",
        "You mostly use Canva, when you have time.",
        "You use Canva when you make slides.",
        "You evaluate designs in Canva.",
        "You returned to Canva after a break.",
        "You switched back to Canva.",
        "Canva - you've stuck with it.",
        "You're using Canva while the team decides.",
    ],
)
def test_a_current_value_in_these_wordings_is_asserted(answer):
    v = ask(answer, ("Canva", "Figma"), field="design_tool")
    assert v.asserted == ["Canva"], v.rationale
