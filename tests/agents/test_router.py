"""The offline router: the operation a task asks for and its arguments, or a plain decline."""

from __future__ import annotations

import pytest

from lemmata.agents.router import Router
from lemmata.operations import load_registry


@pytest.fixture(scope="module")
def router() -> Router:
    from lemmata.embeddings import get_embedder
    from lemmata.settings import Settings

    return Router(load_registry(), get_embedder(Settings.load(config_file=None), cache=False))


def _assert_routed(router: Router, text: str, operation: str, args: dict) -> None:
    """``text`` goes to ``operation`` with every one of ``args`` as given."""
    route = router.route(text)
    assert route.operation == operation, route.reason
    for key, value in args.items():
        assert route.args.get(key) == value, (key, route.args)


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        (
            "could you prove this for me in Coq: forall a b : nat, a + b = b + a",
            "provers_prove",
            {"statement": "Theorem goal : forall a b : nat, a + b = b + a.", "method": "refine"},
        ),
        (
            "Is this right? Lemma l : 3 * 3 = 9. Proof. simpl. reflexivity. Qed.",
            "provers_check",
            {"statement": "Lemma l : 3 * 3 = 9.", "proof": "Proof. simpl. reflexivity. Qed."},
        ),
        (
            "I need a certificate that sum_{k=0}^{n} binomial(n,k) = 2^n",
            "provers_prove",
            {"statement": "Sum(binomial(n,k), (k, 0, n)) = 2**n", "method": "wz"},
        ),
        (
            "please remember: the office wifi password is hunter2",
            "memory_remember",
            {"text": "the office wifi password is hunter2"},
        ),
        (
            "delete fact_0123456789abcdef0123456789abcdef",
            "memory_forget",
            {"ids": ["fact_0123456789abcdef0123456789abcdef"]},
        ),
        ("erase everything you know about my old job", "memory_forget", {"about": "my old job"}),
        (
            "what do you remember about the trip to Lisbon?",
            "memory_recall",
            {"query": "the trip to Lisbon?"},
        ),
        (
            "in /tmp/home.png where's the search box",
            "gui_ground",
            {"image": "/tmp/home.png", "instruction": "the search box"},
        ),
        (
            "open checkout.html and press the Pay now button",
            "gui_act",
            {"page": "checkout.html", "instruction": "the Pay now button"},
        ),
        (
            "dig into warehouse.sqlite and tell me what's unusual",
            "research_research",
            {"source": "warehouse.sqlite"},
        ),
        (
            "analyse clinic.db focusing on patient_id = 42",
            "research_research",
            {"source": "clinic.db", "entity": "patient_id=42"},
        ),
    ],
)
def test_tasks_route_to_their_operation_with_arguments(router, text, operation, args) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    "text",
    [
        "What's the weather in Paris tomorrow?",
        "Write a haiku about autumn leaves",
        "Book a table for two at 8 pm",
        "Translate 'good morning' into German",
    ],
)
def test_tasks_no_operation_serves_are_declined(router, text) -> None:
    route = router.route(text)
    assert route.declined
    assert "no operation serves" in route.reason or "memory holds nothing" in route.reason


def test_a_decline_names_what_is_missing_when_the_task_resembles_an_operation(router) -> None:
    route = router.route("explore my sales data and find trends")
    assert route.declined
    assert "research_research" in route.reason and "source" in route.reason


def test_plain_questions_go_to_memory_only_when_memory_knows(router) -> None:
    question = "When is the plumber coming?"
    assert router.route(question).declined
    assert router.route(question, evidence=0.2).declined
    route = router.route(question, evidence=0.8)
    assert route.operation == "memory_recall" and route.args == {"query": question}
    why = router.route("Why did Ana move to Porto?", evidence=0.8)
    assert why.operation == "memory_reason"
    # asking for memory in so many words needs no evidence
    assert router.route("Did I tell you where Ana lives?").operation == "memory_recall"


def test_empty_task(router) -> None:
    route = router.route("   ")
    assert route.declined and "empty" in route.reason


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # the subject after the verb, the reason after a comma left out
        (
            "You may erase what you have about my old gym, I cancelled it.",
            "memory_forget",
            {"about": "my old gym"},
        ),
        # a folder of data files named only by its path
        (
            "Explore metrics/2024 please and report back",
            "research_research",
            {"source": "metrics/2024"},
        ),
    ],
)
def test_requests_no_extractor_expected_route_by_their_nearest_examples(
    router, text, operation, args
) -> None:
    route = router.route(text)
    assert route.operation == operation, route.reason
    assert "examples" in route.reason
    for key, value in args.items():
        assert route.args.get(key) == value, (key, route.args)


def test_a_memory_cue_on_a_request_no_operation_serves_is_declined(router) -> None:
    # "remember" asks for memory in words, but the request is nearest to what no one serves
    assert router.route("Remind me next Tuesday at 9 to renew my passport.", evidence=0.1).declined
    # with memory matching it well, a plain question still goes to memory
    route = router.route("Do you remember when my passport expires?", evidence=0.7)
    assert route.operation == "memory_recall"


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # code marked with backticks
        (
            "Does Coq accept `Lemma t : 1 + 1 = 2.` with `Proof. reflexivity. Qed.`?",
            "provers_check",
            {"statement": "Lemma t : 1 + 1 = 2.", "proof": "Proof. reflexivity. Qed."},
        ),
        (
            "Please find a WZ proof of this:\n```\nSum(binomial(n, k), (k, 0, n)) = 2**n\n```",
            "provers_prove",
            {"statement": "Sum(binomial(n, k), (k, 0, n)) = 2**n", "method": "wz"},
        ),
        # the method named in words
        (
            "auto-prove Theorem t : forall n : nat, n * 1 = n.",
            "provers_prove",
            {"method": "auto"},
        ),
        # an entity with no word before it
        (
            "Research region=north in orders.db.",
            "research_research",
            {"source": "orders.db", "entity": "region=north"},
        ),
        # text to type without quotes
        (
            "on signup.html type 1987 into the birth year field",
            "gui_act",
            {"action": "type", "text": "1987", "instruction": "birth year field"},
        ),
        # a sentence that only says where the screenshot is
        (
            "I attached board.png. Where do I click to add a card?",
            "gui_ground",
            {"image": "board.png", "instruction": "add a card"},
        ),
    ],
)
def test_arguments_are_read_around_code_marks_and_loose_phrasing(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a fact stated in passing, the asking after it
        (
            "fyi my bank's branch code is 40-12-77, keep that somewhere",
            "memory_remember",
            {"text": "my bank's branch code is 40-12-77"},
        ),
        # a label before the fact
        (
            "Note to self: the boiler manual is in the garage.",
            "memory_remember",
            {"text": "the boiler manual is in the garage"},
        ),
        # the request verb mistyped
        (
            "pls remmeber that the vet opens at 8 on Saturdays",
            "memory_remember",
            {"text": "the vet opens at 8 on Saturdays"},
        ),
        # "forget it": the subject is the clause before
        (
            "No need to keep my old gym's address anymore - forget it.",
            "memory_forget",
            {"about": "my old gym's address"},
        ),
        # a verb mistyped, the reason after a comma
        (
            "forgett the locker code, I changed it",
            "memory_forget",
            {"about": "the locker code"},
        ),
    ],
)
def test_memory_requests_in_everyday_phrasings(router, text, operation, args) -> None:
    route = router.route(text, evidence=0.2)
    assert route.operation == operation, route.reason
    for key, value in args.items():
        assert route.args.get(key) == value, (key, route.args)


@pytest.mark.parametrize(
    "text",
    [
        "How do I stop forgetting where I put my glasses?",
        "Why do goldfish supposedly have a three-second memory?",
        "Forget it, never mind.",
    ],
)
def test_words_about_memory_in_requests_no_operation_serves(router, text) -> None:
    assert router.route(text, evidence=0.1).declined


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a long verb with two letters dropped
        ("rember my gym locker is 112", "memory_remember", {"text": "my gym locker is 112"}),
        # "remember that" stands for the sentence before it, not the context before that
        (
            "We moved offices last week. The new address is 4 Elm Street. Keep that in mind.",
            "memory_remember",
            {"text": "The new address is 4 Elm Street"},
        ),
        # ... with the sentence before that when the last one leans on it
        (
            "My flight is BA123. It lands at 6. Remember that.",
            "memory_remember",
            {"text": "My flight is BA123. It lands at 6"},
        ),
        # a negated "forget" asks to keep
        (
            "Don't let me forget: the passport photos are in the blue folder.",
            "memory_remember",
            {"text": "the passport photos are in the blue folder."},
        ),
        ("please to remember, the dentist is Dr. Lee", "memory_remember", {}),
        # the note after a separator, the asking before it
        (
            "Put this in your memory - the dog's vet is Dr. Silva.",
            "memory_remember",
            {"text": "the dog's vet is Dr. Silva."},
        ),
        # "save that" before a clause about someone
        (
            "Please store that my brother's flat is on the 5th floor.",
            "memory_remember",
            {"text": "my brother's flat is on the 5th floor."},
        ),
        # ids as the store printed them, without the usual prefix
        (
            "remove entries a91f3c and b20e7d from memory",
            "memory_forget",
            {"ids": ["a91f3c", "b20e7d"]},
        ),
        ("Could you unlearn my old gym code?", "memory_forget", {"about": "my old gym code"}),
        # the reason after the subject is not the subject
        (
            "forget that I live in Leeds, it was only for a year",
            "memory_forget",
            {"about": "I live in Leeds"},
        ),
    ],
)
def test_memory_requests_read_by_memorys_own_readers(router, text, operation, args) -> None:
    route = router.route(text, evidence=0.2)
    assert route.operation == operation, route.reason
    for key, value in args.items():
        assert route.args.get(key) == value, (key, route.args)


def test_remembering_together_is_not_a_request_to_keep(router) -> None:
    route = router.route("remember when we went camping in the rain? what a trip", evidence=0.2)
    assert route.operation != "memory_remember", route.reason


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # Gallina's typed binders say Coq without the word
        (
            "Prove: forall n : nat, n * 1 = n",
            "provers_prove",
            {"statement": "Theorem goal : forall n : nat, n * 1 = n.", "backend": "coq"},
        ),
        # a negated quantifier in parentheses, and "holds" after it
        (
            "Show that ~ (exists n : nat, n + 1 = 0) holds, in Coq.",
            "provers_prove",
            {"statement": "Theorem goal : ~ (exists n : nat, n + 1 = 0)."},
        ),
        # a proof given with a request to repair it is a draft for refine, not a check
        (
            "This does not go through, please fix it: Lemma l : forall n : nat, n + 0 = n. "
            "Proof. reflexivity. Qed.",
            "provers_prove",
            {"method": "refine", "proof": "Proof. reflexivity. Qed."},
        ),
        # a lemma whose name says fix is still only checked
        (
            "Check Lemma plus_fix : 1 + 1 = 2. Proof. reflexivity. Qed.",
            "provers_check",
            {"statement": "Lemma plus_fix : 1 + 1 = 2."},
        ),
        # a folder named before the word folder, or by its files
        (
            "write up the main findings in the exports/ folder (csv files)",
            "research_research",
            {"source": "exports/"},
        ),
    ],
)
def test_proving_and_research_tasks_in_more_forms(router, text, operation, args) -> None:
    _assert_routed(router, text, operation, args)


def test_the_memory_gate_is_fitted_and_reports_its_left_out_figures() -> None:
    from lemmata.agents.router import GATE_CLASSES, Gate

    gate = Gate.load()
    assert gate.classes == GATE_CLASSES
    assert gate.weights.shape == (len(GATE_CLASSES), len(gate.features))
    left_out = gate.meta["left_out"]
    assert set(left_out) == {
        "generated",
        "fresh_dev",
        "fresh2",
        "fresh3",
        "fresh4",
        "fresh5",
        "fresh6",
    }
    p = gate.probabilities({})
    assert abs(sum(p.values()) - 1) < 1e-9


def test_a_broken_gate_file_is_named_with_what_is_wrong(tmp_path) -> None:
    import json

    from lemmata.agents.router import WEIGHTS_FILE, Gate
    from lemmata.errors import ConfigError

    good = json.loads(WEIGHTS_FILE.read_text())
    assert Gate.from_dict(good).classes[0] == "none"  # the shipped gate loads
    cases = {
        "not json {": "cannot read",
        json.dumps({**good, "weights": good["weights"][:-1]}): "weights has shape",
        json.dumps({**good, "classes": ["none", "memory_teleport", "x", "y"]}): "classes",
        json.dumps({k: v for k, v in good.items() if k != "bias"}): "lacks bias",
        json.dumps({**good, "scale": [0.0] * len(good["features"])}): "scales positive",
        json.dumps([1, 2]): "JSON object",
    }
    for i, (text, what) in enumerate(cases.items()):
        path = tmp_path / f"gate{i}.json"
        path.write_text(text)
        with pytest.raises(ConfigError, match=what) as info:
            Gate.load(path)
        assert str(path) in str(info.value)
    with pytest.raises(ConfigError, match="cannot read"):
        Gate.load(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # the news after the subject is not the subject: a name, or "the X", and what happened
        (
            "forget about the ladder thing, Priya brought it back",
            "memory_forget",
            {"about": "the ladder"},
        ),
        (
            "erase everything about Orion, the launch was called off",
            "memory_forget",
            {"about": "Orion"},
        ),
        (
            "You can forget my old PIN now, I've changed it.",
            "memory_forget",
            {"about": "my old PIN"},
        ),
        # "I don't want you remembering X" names X; "wipe it" points back at it
        (
            "I don't want you remembering my old address anymore, wipe it",
            "memory_forget",
            {"about": "my old address"},
        ),
        # the asking around the note: a storage word, "this one", a story's opening
        (
            "Add to my long-term memory: the spare key is under the blue pot.",
            "memory_remember",
            {"text": "the spare key is under the blue pot."},
        ),
        (
            "Don't let me forget this one — the plumber comes on the 14th.",
            "memory_remember",
            {"text": "the plumber comes on the 14th"},
        ),
        # a question said to be answered from the person's notes
        ("From my notes, explain why I stopped running.", "memory_reason", {}),
    ],
)
def test_memory_requests_with_asides_and_news_around_them(router, text, operation, args) -> None:
    route = router.route(text, evidence=0.2)
    assert route.operation == operation, route.reason
    for key, value in args.items():
        assert route.args.get(key) == value, (key, route.args)


@pytest.mark.parametrize(
    ("text", "args"),
    [
        (
            "Give me the top 4 insights from C:\\data\\sales.db and write the report to out\\sales",
            {"source": "C:\\data\\sales.db", "top": 4, "out_dir": "out\\sales"},
        ),
        (
            "What are 2 surprising findings in logs/app.sqlite?",
            {"source": "logs/app.sqlite", "top": 2},
        ),
    ],
)
def test_research_reads_how_many_insights_and_where_the_report_goes(router, text, args) -> None:
    route = router.route(text, evidence=0.0)
    assert route.operation == "research_research", route.reason
    for key, value in args.items():
        assert route.args.get(key) == value, (key, route.args)


@pytest.mark.parametrize(
    ("text", "args"),
    [
        # what comes before "about" only names what memory holds; the topic is after it
        ("Please erase the note regarding my old PIN", {"about": "my old PIN"}),
        (
            "Security request: delete whatever you saved about my passport number",
            {"about": "my passport number"},
        ),
        ("unlearn the fact that Priya moved to Leeds", {"about": "Priya moved to Leeds"}),
        # how many to remove is an argument of its own
        (
            "wipe the memories about Sam's birthday, up to 2 of them",
            {"about": "Sam's birthday", "limit": 2},
        ),
        # ids named as such, short or quoted
        ("forget entries k9x and k9y", {"ids": ["k9x", "k9y"]}),
        ('delete memory record "n-77b"', {"ids": ["n-77b"]}),
    ],
)
def test_forget_reads_the_subject_and_not_the_words_naming_a_note(router, text, args) -> None:
    route = router.route(text)
    assert route.operation == "memory_forget", route.reason
    assert route.args == args


@pytest.mark.parametrize(
    "text",
    [
        # texting spellings of asking memory
        "do u know my dentist's name",
        # a command whose object is what memory holds
        "fetch the top 3 facts about my landlord",
    ],
)
def test_asking_memory_in_texting_and_as_a_command_is_a_recall(router, text) -> None:
    route = router.route(text, evidence=0.3)
    assert route.operation in ("memory_recall", "memory_reason"), route.reason


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a screenshot named by where it is saved is no chore on the file
        (
            "screenshot at 'Desktop/Screen Shot 2026-01-02 at 10.00.00.png' - find the bell icon",
            "gui_ground",
            {
                "image": "Desktop/Screen Shot 2026-01-02 at 10.00.00.png",
                "instruction": "the bell icon",
            },
        ),
        # "where is it?" points back at the phrase before it
        (
            "there's a red badge somewhere in inbox.png, where is it?",
            "gui_ground",
            {"image": "inbox.png", "instruction": "a red badge"},
        ),
        # a "where" after an element's name describes the element
        (
            "in form.png find the box where the postcode goes",
            "gui_ground",
            {"image": "form.png", "instruction": "the box where the postcode goes"},
        ),
        # "which icon <does something>": the element described by what it does
        (
            "In toolbar.png, which button prints the page?",
            "gui_ground",
            {"image": "toolbar.png", "instruction": "button prints the page"},
        ),
        # "the label 'X'": the words that only say a label follows
        (
            "ground the label 'Sign in with Apple' on login.png",
            "gui_ground",
            {"image": "login.png", "instruction": "'Sign in with Apple'"},
        ),
        # a heatmap written to a path named after "it"
        (
            "heatmap for 'Export' on report.png, save it to out/export_heat.png",
            "gui_ground",
            {"image": "report.png", "instruction": "'Export'", "heatmap": "out/export_heat.png"},
        ),
    ],
)
def test_gui_ground_reads_the_target_in_more_forms(router, text, operation, args) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    ("text", "args"),
    [
        # a page by its address
        (
            "on http://localhost:3000/signup type bob into the Name field",
            {"page": "http://localhost:3000/signup", "action": "type", "text": "bob"},
        ),
        (
            "visit https://example.com/shop and click Checkout",
            {"page": "https://example.com/shop", "instruction": "Checkout"},
        ),
        (
            "file:///srv/www/index.html - click the Menu link",
            {"page": "file:///srv/www/index.html"},
        ),
        # a quoted page path with spaces
        (
            'In "my pages/order form.html" enter 12 into the quantity field',
            {"page": "my pages/order form.html", "action": "type", "text": "12"},
        ),
        # the page named after a dash and a colon
        (
            "Type cats into the search box - page: site/find.html",
            {"page": "site/find.html", "action": "type", "text": "cats"},
        ),
        # "fill X with: ..." types all after the colon, commas included
        (
            "on contact.html fill the comment box with: Hello, see you soon.",
            {"instruction": "comment box", "action": "type", "text": "Hello, see you soon"},
        ),
        # "search for 'X'" types X into the page's search field
        (
            "search for 'red running shoes' on shop.html",
            {"instruction": "search", "action": "type", "text": "red running shoes"},
        ),
    ],
)
def test_gui_act_reads_pages_by_address_and_typing_in_more_forms(router, text, args) -> None:
    route = router.route(text)
    assert route.operation == "gui_act", route.reason
    for key, value in args.items():
        assert route.args.get(key) == value, (key, route.args)


@pytest.mark.parametrize(
    ("text", "args"),
    [
        # ids after memory's own nouns, the list ending where the ids do
        ("erase memory 9c1f00ab", {"ids": ["9c1f00ab"]}),
        ("delete notes n-201 and n-202, both are stale", {"ids": ["n-201", "n-202"]}),
        # the topic a pronoun points back to
        ("shellfish - forget I ever mentioned it", {"about": "shellfish"}),
        (
            "I'd rather you didn't remember anything about my ex. Forget it.",
            {"about": "my ex"},
        ),
    ],
)
def test_forget_reads_ids_and_the_topic_a_pronoun_points_back_to(router, text, args) -> None:
    route = router.route(text)
    assert route.operation == "memory_forget", route.reason
    assert route.args == args


def test_a_note_that_can_go_is_forgotten_by_its_subject(router) -> None:
    route = router.route("the gym locker note can go, please delete it")
    assert route.operation == "memory_forget", route.reason
    assert route.args == {"about": "the gym locker note"}


def test_remember_for_next_time_keeps_only_the_fact(router) -> None:
    route = router.route("please remember for next time that the bakery closes at 4 on Sundays")
    assert route.operation == "memory_remember", route.reason
    assert route.args == {"text": "the bakery closes at 4 on Sundays"}


@pytest.mark.parametrize(
    ("text", "evidence"),
    [
        # dropping the conversation's topic, not a memory
        ("forget it, let's move on to something else", 0.2),
        # an account is deleted elsewhere, not in memory
        ("Delete my account.", 0.4),
        # a reminder with its time before what to do, whatever memory holds about the chore
        ("Remind me every Friday at 5 to water the plants", 0.8),
    ],
)
def test_chat_accounts_and_timed_reminders_are_declined(router, text, evidence) -> None:
    route = router.route(text, evidence=evidence)
    assert route.declined, (route.operation, route.args, route.reason)


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a Lean proof of only sorry, prose after a dash: a theorem to prove
        (
            "theorem two_pos : 0 < 2 := by sorry — please fill this in",
            "provers_prove",
            {"statement": "theorem two_pos : 0 < 2 :=", "backend": "lean"},
        ),
        # the quantifier over n said first
        (
            "for all n, the sum over k of binomial(n,k)*2^k equals 3^n",
            "provers_prove",
            {"statement": "Sum(binomial(n,k)*2**k, (k, 0, n)) = 3**n", "method": "wz"},
        ),
    ],
)
def test_proving_tasks_with_sorry_and_a_leading_quantifier(router, text, operation, args) -> None:
    _assert_routed(router, text, operation, args)


def test_a_page_routed_by_its_address_is_loaded_from_there_with_its_base(tmp_path) -> None:
    import functools
    import http.server
    import threading

    from lemmata.errors import UsageError
    from lemmata.gui.operations import _fetched

    (tmp_path / "form.html").write_text("<html><head><title>f</title></head><body>Hi</body></html>")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/form.html"
        html = _fetched(url)
        # the page's own resources load from where it came from
        assert f'<head><base href="{url}"><title>f</title>' in html
        assert "<body>Hi</body>" in html
        with pytest.raises(UsageError, match="cannot load"):
            _fetched(f"http://127.0.0.1:{server.server_address[1]}/missing.html")
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        (
            "Retiens que la clé de la cave est sous le pot.",
            "memory_remember",
            {"text": "la clé de la cave est sous le pot"},
        ),
        (
            "Merk dir, dass der Zahnarzt am Freitag anruft",
            "memory_remember",
            {"text": "der Zahnarzt am Freitag anruft"},
        ),
        (
            "Lembre-se de que a reunião mudou para as 10.",
            "memory_remember",
            {"text": "a reunião mudou para as 10"},
        ),
        ("Olvida todo sobre mi antiguo piso.", "memory_forget", {"about": "mi antiguo piso"}),
        (
            "Oublie ce que tu sais sur mon ancien numéro",
            "memory_forget",
            {"about": "mon ancien numéro"},
        ),
        ("Wo wohnt meine Tante?", "memory_recall", {}),
        ("¿Dónde dejé mis llaves?", "memory_recall", {}),
        ("Según lo que sabes de mí, ¿me conviene el tren de las 8?", "memory_reason", {}),
    ],
)
def test_memory_requests_in_german_french_spanish_and_portuguese(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


def test_a_question_in_another_language_goes_to_memory_only_when_it_is_the_users_own(
    router,
) -> None:
    # general knowledge, in French and Spanish: nothing of the user's and memory knows nothing
    assert router.route("Quelle est la capitale du Pérou ?").declined
    assert router.route("¿Cuántos habitantes tiene Lima?").declined
    # the same form about something memory holds
    assert router.route("¿Cuándo llega el técnico?", evidence=0.6).operation == "memory_recall"
    # English words that look like the other languages' are left to the English rules
    assert router.route("Note that the printer code is 5521").operation == "memory_remember"


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        # prose in German, French and Spanish
        (
            "Zeige: Summe über k von 0 bis n von binomial(n,k) = 2^n",
            "Sum(binomial(n,k), (k, 0, n)) = 2**n",
        ),
        (
            "Montrer que la somme pour k de 1 à n de k vaut n(n+1)/2",
            "Sum(k, (k, 1, n)) = n*(n+1)/2",
        ),
        ("Prueba que la suma de k=0 a n de C(n,k) es 2^n", "Sum(binomial(n,k), (k, 0, n)) = 2**n"),
        # Mathematica and Maple
        (
            "Sum[Binomial[n, k], {k, 0, n}] == 2^n (Mathematica says True)",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
        (
            "sum(k*binomial(n,k), k=0..n) = n*2^(n-1); can you prove it?",
            "Sum(k*binomial(n,k), (k, 0, n)) = n*2**(n-1)",
        ),
        # unicode sub- and superscripts
        ("∑ₖ₌₀ⁿ (n choose k) = 2ⁿ, prove it", "Sum((binomial(n, k)), (k, 0, n)) = 2**(n)"),
        # "summing X over k ... gives Y" with "n at least 1"
        (
            "for n at least 1, summing k C(n,k) over k = 0..n gives n 2^(n-1)",
            "Sum(k*binomial(n,k), (k, 0, n)) = n*2**(n-1)",
        ),
    ],
)
def test_sum_identities_in_other_notations_and_languages_are_proved(
    router, text, statement
) -> None:
    route = router.route(text)
    assert route.operation == "provers_prove", route.reason
    assert route.args.get("statement") == statement, route.args


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # the words that name what memory holds, before or after the topic
        (
            "please erase the record of my old gym membership",
            "memory_forget",
            {"about": "my old gym membership"},
        ),
        ("delete the parking memory", "memory_forget", {"about": "the parking"}),
        (
            "pls remove the bit about my cousin from ur memory",
            "memory_forget",
            {"about": "my cousin"},
        ),
        # the reason after the topic, set off by a comma or a semicolon
        (
            "Forget the Falcon budget, it leaked last week",
            "memory_forget",
            {"about": "the Falcon budget"},
        ),
        (
            "Forget the old VPN address; IT replaced it",
            "memory_forget",
            {"about": "the old VPN address"},
        ),
        # "hang on to that" asks to keep what came before it
        (
            "btw my gym locker is 112, hang on to that",
            "memory_remember",
            {"text": "my gym locker is 112"},
        ),
    ],
)
def test_forget_and_remember_arguments_leave_out_the_words_around_the_topic(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    ("text", "statement", "n_min"),
    [
        # "adding up X for k running from a to b gives Y" is a sum
        (
            "can you show that adding up 2k + 1 for k running from 0 to n gives (n+1)^2",
            "Sum(2*k + 1, (k, 0, n)) = (n+1)**2",
            None,
        ),
        # French: the range after the summand, "vaut", the bound on n as "dès que n ≥ 1"
        (
            "Montre que Σ k C(n,k), k de 0 à n, vaut n 2^(n-1) dès que n ≥ 1",
            "Sum(k*binomial(n,k), (k, 0, n)) = n*2**(n-1)",
            1,
        ),
        # zero said in words
        (
            "prove that the sum of (-1)^k binomial(n,k) for k from 0 to n is zero for n >= 1",
            "Sum((-1)**k*binomial(n,k), (k, 0, n)) = 0",
            1,
        ),
        # German: "summiert von k=1 bis n", the verb at the end of the "dass" clause
        (
            "Beweise, dass k summiert von k=1 bis n genau n(n+1)/2 ergibt.",
            "Sum(k, (k, 1, n)) = n*(n+1)/2",
            None,
        ),
        # Maple's add(f, k=a..b)
        (
            "add(binomial(n,k)*2^k, k=0..n) = 3^n, true?",
            "Sum(binomial(n,k)*2**k, (k, 0, n)) = 3**n",
            None,
        ),
        # a sentence of the person's before the identity, one after it
        (
            "This one is from my problem set. Show that sum_{k=0}^{n} binomial(n,k)^2 = "
            "binomial(2n,n). Thanks!",
            "Sum(binomial(n,k)**2, (k, 0, n)) = binomial(2*n,n)",
            None,
        ),
        # two Python functions and their comparison, math.comb as the binomial
        (
            "f = lambda n: sum(math.comb(n, k) for k in range(n + 1))\n"
            "g = lambda n: 2**n\n# f(n) == g(n) always?",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
            None,
        ),
    ],
)
def test_sum_identities_said_by_adding_in_prose_maple_and_python_functions_are_proved(
    router, text, statement, n_min
) -> None:
    route = router.route(text)
    assert route.operation == "provers_prove", route.reason
    assert route.args.get("statement") == statement, route.args
    assert route.args.get("n_min") == n_min, route.args


def test_a_lean_statement_then_a_blank_line_and_prose_asks_for_a_proof(router) -> None:
    route = router.route(
        "theorem add_zero' (n : ℕ) : n + 0 = n :=\n\ncould you prove this in lean?"
    )
    assert route.operation == "provers_prove", route.reason
    assert route.args["statement"] == "theorem add_zero' (n : ℕ) : n + 0 = n :="
    assert "proof" not in route.args


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # the keep request after the fact: "hold on to it for me", "file that away where ..."
        (
            "Long day. Anyway, my locker combination is 31-07-22, hold on to it for me.",
            "memory_remember",
            {"text": "my locker combination is 31-07-22"},
        ),
        (
            "The dentist moved to Elm Street; file that away where you'll find it again.",
            "memory_remember",
            {"text": "The dentist moved to Elm Street"},
        ),
        # "commit this to memory" before the fact
        (
            "Commit this to memory please: the spare tyre is under the boot floor.",
            "memory_remember",
            {"text": "the spare tyre is under the boot floor"},
        ),
        # "the main takeaway is that X" keeps X
        (
            "we talked for an hour and the main takeaway is that invoices go out on the 3rd. "
            "Remember that.",
            "memory_remember",
            {"text": "invoices go out on the 3rd"},
        ),
        # "scratch", "ditch"; "whatever you have on"; the news after a comma left out
        (
            "scratch whatever you have on my old landlord, we moved",
            "memory_forget",
            {"about": "my old landlord"},
        ),
        ("ditch the cabin wifi info", "memory_forget", {"about": "the cabin wifi info"}),
        # to stop keeping something is to forget it
        (
            "don't keep my old phone number anymore",
            "memory_forget",
            {"about": "my old phone number"},
        ),
        (
            "No need to hang on to the hotel booking anymore, forget it",
            "memory_forget",
            {"about": "the hotel booking"},
        ),
        # "bitte" after the verb; a place said before "que"
        ("Vergiss bitte alles über Frau Keller.", "memory_forget", {"about": "Frau Keller"}),
        (
            "Note quelque part que le code du portail est 4512.",
            "memory_remember",
            {"text": "le code du portail est 4512"},
        ),
        # "think it over with what you know", in French
        (
            "Dois-je prendre le train ou la voiture demain ? Réfléchis avec ce que tu sais.",
            "memory_reason",
            {},
        ),
    ],
)
def test_keep_forget_and_reason_requests_with_the_asking_before_or_after_them(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


def test_wanting_memory_to_know_something_from_now_on_keeps_it(router) -> None:
    route = router.route("I'd like you to know, from now on, that I'm vegetarian.")
    assert route.operation == "memory_remember", route.reason
    assert route.args["text"].rstrip(".") == "I'm vegetarian"


def test_fetching_what_the_user_noted_and_questions_about_our_things_go_to_memory(router) -> None:
    # a command whose object is what the user gave memory, when memory knows about it
    assert router.route("pull up what I saved about the boiler", evidence=0.5).operation == (
        "memory_recall"
    )
    # "our" things are the user's own, as "my" things are
    route = router.route("what's our wifi network called?", evidence=0.4)
    assert route.operation == "memory_recall", route.reason


def test_removing_a_profile_on_a_website_is_not_forgetting(router) -> None:
    assert router.route("please remove my profile from this website").operation is None
    assert router.route("pls delete my user account on that app").operation != "memory_forget"


@pytest.mark.parametrize(
    ("text", "args"),
    [
        # "which part ... lets me X": what it lets one do names the element
        (
            "which part of settings.png lets me change the language?",
            {"image": "settings.png", "instruction": "change the language"},
        ),
        ("pinpoint the trash icon in mail.png", {"instruction": "the trash icon"}),
        # "a file on x.png" is what to act on; ", can you show me?" asks again
        (
            "I don't know where to add a file on drive.png, can you show me?",
            {"image": "drive.png", "instruction": "add a file"},
        ),
        # "the coordinates of", "point me to"; the relation that places the element stays
        (
            "give me the coordinates of the switch next to 'Dark mode' in prefs.png",
            {"instruction": "the switch next to 'Dark mode'"},
        ),
        (
            "point me to the search field at the top of home.png",
            {"image": "home.png", "instruction": "the search field at the top"},
        ),
        # a bare description: "toggle" after an article names a thing, it asks for nothing
        (
            "on prefs.png, the checkbox left of 'Remember me'",
            {"instruction": "the checkbox left of 'Remember me'"},
        ),
        # a later "where is it?" points back at a placed element described before it
        (
            "The support ticket says the 'Help' link under the logo is broken. In site.png, "
            "where is it?",
            {"image": "site.png", "instruction": "the 'Help' link under the logo"},
        ),
        # a question of where a thing is wins over an earlier "can't find how to ..."
        (
            "Support says nobody can find how to export. Screenshot: app/export.png. Where is "
            "the export menu?",
            {"image": "app/export.png", "instruction": "the export menu"},
        ),
        # French and German pointing, with their prepositions before the path
        (
            "Trouve le lien Aide dans captures/accueil.png",
            {"image": "captures/accueil.png", "instruction": "le lien Aide"},
        ),
        ("Wo ist der Link 'Hilfe' auf start.png?", {"instruction": "Link 'Hilfe'"}),
    ],
)
def test_gui_ground_reads_relations_other_languages_and_later_questions(router, text, args) -> None:
    _assert_routed(router, text, "gui_ground", args)


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("fill in 42 as the age on form.html", {"instruction": "age", "text": "42"}),
        (
            "tape 'bonjour' dans le champ de message de chat_fr.html",
            {"page": "chat_fr.html", "instruction": "champ de message", "text": "bonjour"},
        ),
        (
            "Auf anmeldung.html bitte 'erika' ins Feld Vorname eintragen",
            {"page": "anmeldung.html", "instruction": "Feld Vorname", "text": "erika"},
        ),
        # the page named bare after a comma
        (
            "type hello into the comment box, page blog.html",
            {"page": "blog.html", "instruction": "comment box", "text": "hello"},
        ),
        ("search 'wool socks' on shop.html", {"instruction": "search", "text": "wool socks"}),
    ],
)
def test_gui_act_types_by_its_forms_in_other_languages_and_with_as(router, text, args) -> None:
    _assert_routed(router, text, "gui_act", {"action": "type", **args})


def test_research_reads_how_many_findings_after_any_superlative(router) -> None:
    route = router.route("what are the 3 biggest findings in sales.db?")
    assert route.operation == "research_research", route.reason
    assert route.args.get("top") == 3


@pytest.mark.parametrize(
    ("text", "args"),
    [
        # the bound on n after "whenever", in LaTeX dollars, or after Portuguese "para"
        (
            "sum_{k=0}^{n} binomial(n,k)*k*(k-1) = n*(n-1)*2^(n-2) whenever n ≥ 2. Prove it.",
            {"statement": "Sum(binomial(n,k)*k*(k-1), (k, 0, n)) = n*(n-1)*2**(n-2)", "n_min": 2},
        ),
        (
            "$\\sum_{j=1}^{n} j = \\frac{n(n+1)}{2}$ for $n \\geq 1$, can the prover show it",
            {"n_min": 1},
        ),
        (
            "Mostre que a soma de k=1 até n de k é igual a n(n+1)/2, para n ≥ 1.",
            {"statement": "Sum(k, (k, 1, n)) = n*(n+1)/2", "n_min": 1},
        ),
        # LaTeX's inline delimiters \( ... \) around the identity, prose after it
        (
            "my notes claim \\(\\sum_{k=0}^{n}\\binom{n}{k}=2^{n}\\) in general, certify it for me",
            {"statement": "Sum(binomial(n, k), (k, 0, n)) = 2**(n)"},
        ),
        # "if you add up X over k = a..b you get Y"
        (
            "If you add up 2k+1 over k = 0..n you get (n+1)^2. Is there a proof?",
            {"statement": "Sum(2*k+1, (k, 0, n)) = (n+1)**2"},
        ),
        # French "est égale à", German "von k=a bis b über X", Spanish "con k desde a hasta b, da"
        (
            "Prouver que la somme pour k de 1 à n de 2k est égale à n(n+1).",
            {"statement": "Sum(2*k, (k, 1, n)) = n*(n+1)"},
        ),
        (
            "Beweise: die Summe von k=0 bis n über C(n,k) ist gleich 2^n.",
            {"statement": "Sum(binomial(n,k), (k, 0, n)) = 2**n"},
        ),
        (
            "Quiero demostrar que la suma de 3^k, con k desde 0 hasta n, da (3^(n+1) - 1)/2.",
            {"statement": "Sum(3**k, (k, 0, n)) = (3**(n+1) - 1)/2"},
        ),
        # a question before the identity is the person's, not the identity's end
        (
            "is this provable? sum(k * comb(n, k) for k in range(n + 1)) == n * 2**(n - 1)",
            {"statement": "Sum(k * binomial(n, k), (k, 0, n)) = n * 2**(n - 1)"},
        ),
    ],
)
def test_sum_identities_in_more_forms_are_proved(router, text, args) -> None:
    _assert_routed(router, text, "provers_prove", args)


def test_imports_said_before_a_bare_coq_statement_are_its_header(router) -> None:
    _assert_routed(
        router,
        "Require Import Arith. Quiero una prueba de esto: forall n m : nat, n + m = m + n",
        "provers_prove",
        {"header": "Require Import Arith.", "backend": "coq"},
    )


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a thanks or a tag question after a foreign request to keep is not the fact
        (
            "Recuerda que mi dentista se llama Ortega, gracias.",
            "memory_remember",
            {"text": "mi dentista se llama Ortega"},
        ),
        (
            "Lembra que o jantar é na sexta, tá?",
            "memory_remember",
            {"text": "o jantar é na sexta"},
        ),
        # "what I told you about X" in French, Spanish (del = de + el) and Portuguese
        (
            "Oublie ce que je t'ai dit à propos de mon voisin.",
            "memory_forget",
            {"about": "mon voisin"},
        ),
        (
            "Olvida lo que sabes del coche de alquiler.",
            "memory_forget",
            {"about": "el coche de alquiler"},
        ),
        (
            "Esquece o que eu te disse sobre o jantar de sexta.",
            "memory_forget",
            {"about": "o jantar de sexta"},
        ),
        # a clause that only says memory holds the topic
        (
            "the gate code you stored, please delete that",
            "memory_forget",
            {"about": "the gate code"},
        ),
        # an aside in parentheses is dropped; a qualifier in parentheses stays
        (
            "make a note that the boiler was serviced in May (it was overdue, sigh)",
            "memory_remember",
            {"text": "the boiler was serviced in May"},
        ),
        (
            "please remember the spare charger is in the hall cupboard (second shelf)",
            "memory_remember",
            {"text": "the spare charger is in the hall cupboard (second shelf)"},
        ),
        # "don't lose that" asks to keep the sentence before
        (
            "for the record, the plumber's number is 0612 445 901. don't lose that",
            "memory_remember",
            {"text": "the plumber's number is 0612 445 901"},
        ),
        # a typed abbreviation of the request
        (
            "rmbr 4 me: my locker at the pool is 118",
            "memory_remember",
            {"text": "my locker at the pool is 118"},
        ),
        # the announced point alone, the story around it left out
        (
            "The meeting ran long and most of it was chatter, but the one thing to keep in mind is "
            "that the budget is frozen until March.",
            "memory_remember",
            {"text": "the budget is frozen until March"},
        ),
        # a foreign question after "tell me", or asking whether memory still knows
        ("Sag mal, wie hieß nochmal unser Vermieter?", "memory_recall", {}),
        ("¿Te acuerdas de la dirección del hotel de Lisboa?", "memory_recall", {}),
    ],
)
def test_memory_requests_read_without_their_asides_and_in_more_languages(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a foreign preposition, article and file noun before the path go with it
        (
            "Mostra onde fica o menu Ajuda na imagem painel.png",
            "gui_ground",
            {"image": "painel.png", "instruction": "o menu Ajuda"},
        ),
        (
            "Auf der Seite konto/profil.html klick auf „Passwort ändern“",
            "gui_act",
            {"page": "konto/profil.html"},
        ),
        # French "coche" is a click on a checkbox, not a word to look for
        (
            "Sur la page inscription.html, coche la case « Recevoir la newsletter »",
            "gui_act",
            {"page": "inscription.html", "instruction": "la case « Recevoir la newsletter »"},
        ),
        # a screenshot taken after the action, to a path
        (
            "On shop/basket.html press the Pay now button, then take a screenshot to out/paid.png",
            "gui_act",
            {"instruction": "the Pay now button", "screenshot": "out/paid.png"},
        ),
        # the field named first, then "fill it with": "it" is that field
        (
            "signup.html has a Username field; fill it with mia_k",
            "gui_act",
            {"instruction": "a Username field", "action": "type", "text": "mia_k"},
        ),
        # after "write:" everything is typed, commas too
        (
            "On notes.html, in the box under 'Title', write: eggs, milk, bread",
            "gui_act",
            {"action": "type", "text": "eggs, milk, bread"},
        ),
        # German's separable verb: "Trag ins Feld X V ein"
        (
            "Trag auf bestellung.html ins Feld „Menge“ 3 ein",
            "gui_act",
            {"instruction": "Feld „Menge“", "action": "type", "text": "3"},
        ),
    ],
)
def test_gui_requests_read_with_foreign_file_words_taken_screenshots_and_back_references(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


def test_research_reads_a_database_path_in_code_marks_with_a_space(router) -> None:
    _assert_routed(
        router,
        "There's a file at `~/data/q3 sales.sqlite` - what's interesting in it?",
        "research_research",
        {"source": "~/data/q3 sales.sqlite"},
    )


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # "let go of X" asks memory to forget X
        (
            "You can let go of the hotel booking details now, the trip is over.",
            "memory_forget",
            {"about": "the hotel booking details"},
        ),
        # German with the verb last
        (
            "Das mit dem Zahnarzttermin kannst du vergessen, der ist abgesagt.",
            "memory_forget",
            {"about": "dem Zahnarzttermin"},
        ),
        # a foreign question of arithmetic, nothing of the user's in it, is not memory's
        ("¿Cuánto es 17 por 23?", None, {}),
        ("Combien font 12 fois 7 ?", None, {}),
        # a person's own letting go asks nothing of memory
        ("I need to let go of my anger", None, {}),
    ],
)
def test_letting_go_verb_last_forgetting_and_arithmetic_questions(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # "hold on to" asks memory to keep, the story around the point left out
        (
            "Busy week at work and lots of back and forth, but the one thing I need you to hang "
            "on to is that the office moves to Lyon on May 2.",
            "memory_remember",
            {"text": "the office moves to Lyon on May 2"},
        ),
        # the opening words and "there's some kind of" only lead in to the target
        (
            "hey so in the screenshot app.png there's some kind of bell icon, the round one. "
            "where is it?",
            "gui_ground",
            {"image": "app.png", "instruction": "bell icon, the round one"},
        ),
    ],
)
def test_holding_on_to_a_point_and_a_target_after_there_is(router, text, operation, args) -> None:
    _assert_routed(router, text, operation, args)


# A sum said as a range, a summand and a verb of giving, in any order and language: none of
# these phrasings is written in the reader, which finds the three parts apart.
@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("the sum of 2k-1 for k from 1 to n works out to n^2", "Sum(2*k-1, (k, 1, n)) = n**2"),
        (
            "for k from 0 to n, binomial(n,k) adds up to 2^n",
            "Sum(binomial(n,k), (k, 0, n)) = 2**n",
        ),
        ("summing k over k=1..n ought to give n(n+1)/2", "Sum(k, (k, 1, n)) = n*(n+1)/2"),
        (
            "über k von 0 bis n ist die Summe von binomial(n,k) gleich 2^n",
            "Sum(binomial(n,k), (k, 0, n)) = 2**n",
        ),
        (
            "pour k allant de 0 à n, la somme des C(n,k) vaut 2^n",
            "Sum(binomial(n,k), (k, 0, n)) = 2**n",
        ),
        (
            "die Summe der k mal binomial(n,k), k von 0 bis n, ergibt n*2^(n-1)",
            "Sum(k * binomial(n,k), (k, 0, n)) = n*2**(n-1)",
        ),
        ("k=1..n, k^3 sums to (n(n+1)/2)^2", "Sum(k**3, (k, 1, n)) = (n*(n+1)/2)**2"),
        # a one-letter word that opens the request after it is no factor of the right side
        (
            "sum_{k=0}^{n} binomial(n,k) = 2^n a WZ proof please",
            "Sum(binomial(n,k), (k, 0, n)) = 2**n",
        ),
        (
            "the sum of k for k from 1 to n is n(n+1)/2 a WZ certificate would be nice",
            "Sum(k, (k, 1, n)) = n*(n+1)/2",
        ),
    ],
)
def test_a_sum_is_read_by_its_range_and_its_verb_of_giving(router, text, statement) -> None:
    _assert_routed(router, text, "provers_prove", {"statement": statement, "method": "wz"})


@pytest.mark.parametrize(
    "text",
    [
        "my loop runs for k from 1 to n and the total is wrong, why?",
        "I added k from 1 to 10 in Excel and it gives 55, is that right?",
    ],
)
def test_a_range_and_a_verb_without_an_identity_are_not_proved(router, text) -> None:
    assert router.route(text).operation != "provers_prove"


# The topic of a forget request is what its verb governs, up to the first clause boundary (a
# dash, a comma that does not go on with a list, a semicolon) and without politeness; a pronoun
# ("delete it", "apaga isso") stands for the topic of another clause.
@pytest.mark.parametrize(
    ("text", "about"),
    [
        ("erase what you know about my old car - sold it last week", "my old car"),
        ("please forget my home address, we moved", "my home address"),
        ("forget my address, phone number and email", "my address, phone number and email"),
        ("scrub the note about the wifi password thx", "the wifi password"),
        (
            "The dentist appointment got cancelled. Delete it from your notes please.",
            "The dentist appointment",
        ),
        ("I don't want my salary stored anymore, delete it.", "my salary"),
        ("Oublie mon ancien numéro de téléphone, il a changé.", "mon ancien numéro de téléphone"),
        ("Olvida, por favor, todo lo de mi exjefe; ya no trabajo allí.", "mi exjefe"),
        ("Vergiss bitte alles über meinen alten Job, danke.", "meinen alten Job"),
        ("Lösche bitte die Notiz über mein altes Auto.", "mein altes Auto"),
        (
            "Efface ça, s'il te plaît : mon ancien code de porte a changé.",
            "mon ancien code de porte",
        ),
        ("A senha antiga do wifi já mudou, apaga isso.", "A senha antiga do wifi"),
    ],
)
def test_a_forget_topic_is_what_the_verb_governs_or_what_its_pronoun_stands_for(
    router, text, about
) -> None:
    _assert_routed(router, text, "memory_forget", {"about": about})


# A typing request by what its verb governs: the value (quoted in any style or bare) and the
# field after a preposition or set off before the verb; a click verb of another language takes
# its preposition with it; a purpose clause after the target is no part of it.
@pytest.mark.parametrize(
    ("text", "args"),
    [
        (
            "On signup.html, could you key in jane.doe@mail.com into the Email field?",
            {"instruction": "the Email field", "action": "type", "text": "jane.doe@mail.com"},
        ),
        (
            "digite 01310-100 no campo CEP em cadastro.html",
            {"instruction": "campo CEP", "action": "type", "text": "01310-100"},
        ),
        (
            "Schreib „Berlin“ in das Feld Stadt auf form.html",
            {"instruction": "Feld Stadt", "action": "type", "text": "Berlin"},
        ),
        (
            "dans contact.html, écris « Bonjour à tous » dans la zone Message",
            {"instruction": "zone Message", "action": "type", "text": "Bonjour à tous"},
        ),
        (
            "Notes field on todo.html - type buy oat milk",
            {"instruction": "Notes field", "action": "type", "text": "buy oat milk"},
        ),
        (
            'Password on login.html: type "hunter2"',
            {"instruction": "Password", "action": "type", "text": "hunter2"},
        ),
        (
            "in the search bar on shop.html, write wireless mouse",
            {"instruction": "search bar", "action": "type", "text": "wireless mouse"},
        ),
        ("Klick auf 'Speichern' in settings.html", {"instruction": "'Speichern'"}),
        (
            "tap the trash icon next to 'Draft 3' on mail.html so that I can delete it",
            {"instruction": "the trash icon next to 'Draft 3'"},
        ),
    ],
)
def test_gui_act_reads_what_the_typing_or_clicking_verb_governs(router, text, args) -> None:
    _assert_routed(router, text, "gui_act", args)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "My new locker is number 88. Would you keep that in mind please?",
            "My new locker is number 88",
        ),
        (
            "The car's oil change is due at 60,000 km, could you note that down?",
            "The car's oil change is due at 60,000 km",
        ),
        (
            "Rough week. Anyway: my sister's flight lands Friday at 9. Can you please save that for later?",
            "my sister's flight lands Friday at 9",
        ),
        ("my bike lock code is 4-1-9-9 lol, remember that", "my bike lock code is 4-1-9-9"),
    ],
)
def test_keeping_asked_as_a_question_after_the_fact_keeps_the_fact(router, text, kept) -> None:
    _assert_routed(router, text, "memory_remember", {"text": kept})


def test_a_question_about_remembering_is_not_a_request_to_keep(router) -> None:
    assert router.route("Do you remember that?").operation != "memory_remember"


@pytest.mark.parametrize(
    "text",
    [
        "O meu carro está na oficina, qual é mesmo o nome do mecânico?",
        "Das Meeting ist morgen, wann genau war das nochmal?",
        "Ma sœur arrive demain, c'est où déjà son hôtel ?",
    ],
)
def test_a_foreign_question_asked_after_its_first_clause_goes_to_memory(router, text) -> None:
    assert router.route(text).operation == "memory_recall"


@pytest.mark.parametrize(
    "text",
    [
        "please book a table for two at Sakura tonight",
        "can you move my 3pm meeting to Friday?",
        "Cancel my gym membership renewal",
    ],
)
def test_asking_to_change_something_in_the_world_is_not_memory(router, text) -> None:
    assert router.route(text).operation is None


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # the summand is the range's own variable: "the sum of all k from 1 to n"
        (
            "Beweise: Die Summe aller k von 1 bis n ist n(n+1)/2.",
            "provers_prove",
            {"statement": "Sum(k, (k, 1, n)) = n*(n+1)/2"},
        ),
        (
            "Mostre que a soma de k de 1 até n é igual a n(n+1)/2",
            "provers_prove",
            {"statement": "Sum(k, (k, 1, n)) = n*(n+1)/2"},
        ),
        # the value one gets: "se obtiene"
        (
            "Demuestra que sumando 2^k desde k=0 hasta n se obtiene 2^(n+1)-1",
            "provers_prove",
            {"statement": "Sum(2**k, (k, 0, n)) = 2**(n+1)-1"},
        ),
        # a field set to a value; a field's name ends before a second action or "ein"
        (
            "In profile.html, set the nickname field to Bobby",
            "gui_act",
            {"instruction": "the nickname field", "action": "type", "text": "Bobby"},
        ),
        (
            "checkout.html — put DISCOUNT10 in the coupon code box and press Apply",
            "gui_act",
            {"instruction": "coupon code box", "action": "type", "text": "DISCOUNT10"},
        ),
        (
            "Geben Sie 42 in das Feld Alter auf form.html ein",
            "gui_act",
            {"instruction": "Feld Alter", "action": "type", "text": "42"},
        ),
        (
            "Ingresa 12345 en el campo código en pago.html",
            "gui_act",
            {"instruction": "campo código", "action": "type", "text": "12345"},
        ),
        # "the stuff about X" names a note's matter; chat's "u"; a foreign "porfa"
        (
            "can you delete the stuff about the Berlin trip? plans changed",
            "memory_forget",
            {"about": "the Berlin trip"},
        ),
        ("could u forget my old address pls", "memory_forget", {"about": "my old address"}),
        (
            "hey can u remember my locker is 214 thx",
            "memory_remember",
            {"text": "my locker is 214"},
        ),
        (
            "Guarda que el cumpleaños de mi madre es el 4 de julio, porfa.",
            "memory_remember",
            {"text": "el cumpleaños de mi madre es el 4 de julio"},
        ),
    ],
)
def test_more_forms_of_the_same_request_classes(router, text, operation, args) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        # a tool's rewriting of the sum, "to" its value, then a request for a proof
        (
            "Maple turned Sum[Binomial[n, k] 3^k, {k, 0, n}] into 4^n but I'd like a real proof",
            "Sum(binomial(n, k)*3**k, (k, 0, n)) = 4**n",
        ),
        # a reducing verb between the sum and its value
        (
            "gut feeling: ∑_{i=1}^{n} (2i-1) boils down to n^2. can you prove it?",
            "Sum((2*i-1), (i, 1, n)) = n**2",
        ),
        # a range between two bounds, and a French range with "jusqu'à"
        (
            "Demuéstrame que la suma de binomial(n,j) con j entre 0 y n da 2^n",
            "Sum(binomial(n,j), (j, 0, n)) = 2**n",
        ),
        (
            "J'ai besoin d'une preuve : la somme des j, de j = 1 jusqu'à n, égale n(n+1)/2",
            "Sum(j, (j, 1, n)) = n*(n+1)/2",
        ),
        # a German summing verb and its value between "kommt" and "heraus"
        (
            "Beweise: addiert man k^3 mit k von 1 bis n, kommt (n(n+1)/2)^2 heraus",
            "Sum(k**3, (k, 1, n)) = (n*(n+1)/2)**2",
        ),
    ],
)
def test_a_sum_reduced_rewritten_or_ranged_between_bounds_is_proved(
    router, text, statement
) -> None:
    _assert_routed(router, text, "provers_prove", {"statement": statement, "method": "wz"})


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a forget verb with its pronoun joined to it, the topic named in another clause, and
        # where memory keeps it said with the verb
        (
            "Ya no uso el gimnasio Orca; olvídalo, por favor.",
            "memory_forget",
            {"about": "Orca"},
        ),
        (
            "Je ne vais plus chez Sakura, efface-le de ta mémoire.",
            "memory_forget",
            {"about": "Sakura"},
        ),
        (
            "Elimina de tu memoria todo sobre mi antiguo trabajo.",
            "memory_forget",
            {"about": "mi antiguo trabajo"},
        ),
        # "remind me" that asks a question of memory, not a reminder
        ("Recuérdame dónde aparqué mi coche.", "memory_recall", {}),
        ("Erinnere mich, wann mein Zahnarzttermin ist.", "memory_recall", {}),
    ],
)
def test_foreign_forget_with_a_joined_pronoun_and_remind_me_questions(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


def test_remind_me_to_do_something_in_french_is_no_memory_question(router) -> None:
    assert router.route("Rappelle-moi d'appeler le garage demain.").declined


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a forget request asked as a polite question is a command, whatever memory holds
        (
            "Could you please erase the entry about my old bike? I sold it.",
            "memory_forget",
            {"about": "my old bike"},
        ),
        (
            "can you get rid of what you have on my dentist? I switched practices",
            "memory_forget",
            {},
        ),
        # a question that says to answer from memory is memory's, however general its words
        ("Is there anyone in Lisbon I could stay with? Use what you know.", "memory_reason", {}),
        (
            "Anyone I know who could lend me a ladder? Go by what you remember.",
            "memory_reason",
            {},
        ),
    ],
)
def test_polite_forget_questions_and_questions_told_to_use_memory(
    router, text, operation, args
) -> None:
    route = router.route(text, evidence=0.5)
    assert route.operation == operation, route.reason
    for key, value in args.items():
        assert route.args.get(key) == value, (key, route.args)


@pytest.mark.parametrize(
    "text",
    [
        # deleting what another program or device keeps is no forgetting
        "delete the cookies from Chrome",
        "remove the old photos from my phone",
        "clear the browsing history in the browser",
        "purge the cached logins out of Thunderbird",
    ],
)
def test_deleting_from_another_program_or_device_is_declined(router, text) -> None:
    route = router.route(text, evidence=0.3)
    assert route.declined, (route.operation, route.args, route.reason)


@pytest.mark.parametrize(
    ("text", "about"),
    [
        # a place named inside the topic, or memory named as the place, is still forgetting
        ("wipe the fact that I live in Porto", "I live in Porto"),
        ("delete the bit about my trip to Rome from your notes", "my trip to Rome"),
    ],
)
def test_forgetting_a_topic_that_names_a_place_is_still_forgetting(router, text, about) -> None:
    _assert_routed(router, text, "memory_forget", {"about": about})


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        # the store's ids with a short tail, wherever the request names them
        ("drop fact_0042 and ep_77aa please", ["fact_0042", "ep_77aa"]),
        ("please forget item_5e1, it's outdated", ["item_5e1"]),
        ("could you delete proc_9b3c from memory", ["proc_9b3c"]),
        ("Three old ones to remove: ep_101, ep_102, ep_103.", ["ep_101", "ep_102", "ep_103"]),
    ],
)
def test_forgetting_by_short_store_ids_anywhere_in_the_request(router, text, ids) -> None:
    _assert_routed(router, text, "memory_forget", {"ids": ids})


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # the person's own trouble with the target, said after it, is no part of it
        (
            "in dialog.png find the OK button but I can't spot it",
            "gui_ground",
            {"image": "dialog.png", "instruction": "the OK button"},
        ),
        (
            "on page.html click the Save button, I never see it",
            "gui_act",
            {"page": "page.html", "instruction": "the Save button"},
        ),
        # where the target is shown, said after it
        (
            "<p><button>Buy</button></p> (press Buy on this page)",
            "gui_act",
            {"instruction": "Buy"},
        ),
    ],
)
def test_gui_targets_without_the_persons_trouble_or_where_they_are_shown(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


def test_long_store_ids_of_letters_only_are_still_ids(router) -> None:
    _assert_routed(
        router,
        "Delete the facts fact_aaaabbbbccccdddd, fact_1111222233334444",
        "memory_forget",
        {"ids": ["fact_aaaabbbbccccdddd", "fact_1111222233334444"]},
    )


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # a keep in another language after a word that calls the listener, with the verb's
        # reflexive pronoun, memory named as the place, or the fact after a colon
        (
            "Oye, apúntate que el código del garaje es 7781.",
            "memory_remember",
            {"text": "el código del garaje es 7781"},
        ),
        (
            "Écoute, note dans ta mémoire que le vétérinaire ferme à 18h.",
            "memory_remember",
            {"text": "le vétérinaire ferme à 18h"},
        ),
        (
            "Guarda na memória, por favor: a senha do portão é 2020.",
            "memory_remember",
            {"text": "a senha do portão é 2020"},
        ),
        (
            "Merk dir in deinem Gedächtnis, dass der Bäcker montags zu hat.",
            "memory_remember",
            {"text": "der Bäcker montags zu hat"},
        ),
        # the keeping asked after the fact, a preface that only announces it left out
        (
            "Le code du local à vélos est 5521. Retiens-le, merci.",
            "memory_remember",
            {"text": "Le code du local à vélos est 5521"},
        ),
        (
            "El wifi de la casa de la playa se llama Gaviota. Guárdalo.",
            "memory_remember",
            {"text": "El wifi de la casa de la playa se llama Gaviota"},
        ),
        (
            "Die Garage hat den Code 8080. Merk dir das bitte.",
            "memory_remember",
            {"text": "Die Garage hat den Code 8080"},
        ),
        (
            "Une chose à noter : la piscine ferme le lundi. Retiens-le.",
            "memory_remember",
            {"text": "la piscine ferme le lundi"},
        ),
        # the person's own trouble after the fact is no part of it
        (
            "Recuerda que la cita de Lucía es el jueves, que siempre se me olvida.",
            "memory_remember",
            {"text": "la cita de Lucía es el jueves"},
        ),
        (
            "Please remember that my passport number ends in 4471, just in case I lose it.",
            "memory_remember",
            {"text": "my passport number ends in 4471"},
        ),
        (
            "Remember that the boiler service is on the 9th, my landlord just told me.",
            "memory_remember",
            {"text": "the boiler service is on the 9th"},
        ),
        (
            "We're off to Lisbon on Friday, so remember this: the cat sitter's number is 555-0193.",
            "memory_remember",
            {"text": "the cat sitter's number is 555-0193"},
        ),
    ],
)
def test_keeping_in_other_languages_and_after_a_preface_keeps_the_fact_alone(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    "text",
    [
        # a question in a later sentence, its word after a preposition, or set off by "¿"
        "Ich muss gleich los. Um wie viel Uhr ist unser Teammeeting?",
        "Oye, ¿a qué hora abre mi gimnasio? Quiero ir temprano.",
        "Vou sair agora, mas diz-me: de que cor é o carro da minha irmã?",
        "Je dois réserver. À quelle heure est mon rendez-vous chez le dentiste ?",
    ],
)
def test_a_foreign_question_about_the_users_things_in_a_later_sentence_asks_memory(
    router, text
) -> None:
    assert router.route(text).operation in ("memory_recall", "memory_reason")


@pytest.mark.parametrize(
    ("text", "about"),
    [
        # a forget verb after a word that joins it to the reason before it
        (
            "Je ne vais plus à la chorale, donc oublie mes horaires de répétition.",
            "mes horaires de répétition",
        ),
        ("Der Umzug ist erledigt, also vergiss alles über die alte Adresse.", "die alte Adresse"),
        (
            "O curso acabou, então apaga da memória o horário das aulas.",
            "o horário das aulas",
        ),
        # what was kept about it, said as a German relative clause
        (
            "Lösch bitte, was du zu meinem alten Handyvertrag gespeichert hast.",
            "meinem alten Handyvertrag",
        ),
        # "kindly" asks as "please" does; where memory keeps it, said as what it keeps
        ("Would you kindly delete the note about my old locker?", "my old locker"),
        ("Erase my old work phone number from what you keep.", "my old work phone number"),
    ],
)
def test_forget_requests_after_their_reason_and_asked_kindly(router, text, about) -> None:
    _assert_routed(router, text, "memory_forget", {"about": about})


@pytest.mark.parametrize(
    "text",
    [
        # a reminder at a time asked with another verb
        "Could you nudge me tomorrow at 8 about the car wash?",
        "Ping me every Monday at 10 so I submit my hours",
        # deleting what is kept in the world: an account, mail
        "Delete my Spotify account and the login that goes with it.",
        "My spam folder has hundreds of emails in it; clear them all.",
        # renewing or extending something in the world
        "Renew my library card online.",
        "Extend my parking permit for another month",
        # a document that is not given
        "Summarise the quarterly report",
    ],
)
def test_reminders_accounts_mail_and_renewals_are_not_memory(router, text) -> None:
    assert router.route(text).declined


@pytest.mark.parametrize(
    ("text", "operation", "args"),
    [
        # the field as the subject, its value before the typing
        (
            "on form.html the Postcode field needs 10115 typed in",
            "gui_act",
            {"instruction": "the Postcode field", "action": "type", "text": "10115"},
        ),
        (
            "In checkout.html the promo code box should read SPRING5, fill it in",
            "gui_act",
            {"instruction": "the promo code box", "action": "type", "text": "SPRING5"},
        ),
        # a Spanish "pon" types
        (
            "en alta.html pon 28013 en la casilla del código postal",
            "gui_act",
            {"instruction": "casilla del código postal", "action": "type", "text": "28013"},
        ),
        # a target in apposition, a German click with its verb last
        (
            "on login.html press Submit, the one below the password field",
            "gui_act",
            {"instruction": "Submit below the password field"},
        ),
        (
            "Die Bestellung ist fertig, also bitte auf cart.html den Button Bestellen anklicken",
            "gui_act",
            {"instruction": "den Button Bestellen"},
        ),
        # the file pointed back at, a chat thanks, a question that points back
        (
            "open settings.html and hit the Privacy tab there",
            "gui_act",
            {"instruction": "the Privacy tab"},
        ),
        (
            "I have shot.png open; find the Export button on it",
            "gui_ground",
            {"instruction": "the Export button"},
        ),
        (
            "home.png: I need the search bar at the top, where is it?",
            "gui_ground",
            {"instruction": "the search bar at the top"},
        ),
    ],
)
def test_gui_targets_in_apposition_values_before_the_verb_and_pointing_back(
    router, text, operation, args
) -> None:
    _assert_routed(router, text, operation, args)


@pytest.mark.parametrize(
    ("text", "args"),
    [
        # a quoted folder with a space, where the report goes in other languages, how many
        # insights said in Spanish or French
        (
            "analyse the data folder 'sales 2024/raw' and save the report in out/sales",
            {"source": "sales 2024/raw", "out_dir": "out/sales"},
        ),
        (
            "Analiza la base ventas.db y guarda el informe en informes/ventas",
            {"source": "ventas.db", "out_dir": "informes/ventas"},
        ),
        (
            "Analyse crm.db et donne-moi les 3 conclusions principales",
            {"source": "crm.db", "top": 3},
        ),
    ],
)
def test_research_reads_quoted_folders_and_foreign_report_places(router, text, args) -> None:
    _assert_routed(router, text, "research_research", args)


def test_a_lean_hole_with_words_after_it_is_a_proof_to_find(router) -> None:
    route = router.route(
        "theorem two_mul_x (x : Nat) : 2 * x = x + x := sorry. Can you fill that in?"
    )
    assert route.operation == "provers_prove", route.reason
    assert "sorry" not in route.args.get("proof", "")
