"""A synthetic personal memory with planted facts and probe messages, deterministic
from a seed, at any size.

The background is bench/import_edges.py's graph (a self node, the eight kinds,
a relation vocabulary, hubs). On top, ``facts`` planted claims from the user to
people, places and things with real-looking names, nicknames and descriptions,
each with probes that refer to it by name, by alias or nickname, and by
paraphrase (words of its description, not its name), and negative probes that
should recall nothing. Superseded, dormant and expired claims are mixed in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bench.import_edges import synthetic_graph
from pegasus.interchange import Graph
from pegasus.model import Edge, Node, edge_id, node_id

FIRST = ["William", "Robert", "Elizabeth", "Katherine", "Margaret", "Thomas", "Jennifer",
         "Michael", "Patricia", "Richard", "Daniel", "Susan", "Joseph", "Christopher",
         "Jessica", "Andrew", "Rebecca", "Nicholas", "Alexander", "Victoria"]  # fmt: skip
NICK = {
    "William": "Bill",
    "Robert": "Bob",
    "Elizabeth": "Liz",
    "Katherine": "Kate",
    "Margaret": "Maggie",
    "Thomas": "Tom",
    "Jennifer": "Jen",
    "Michael": "Mike",
    "Patricia": "Patty",
    "Richard": "Rick",
    "Daniel": "Dan",
    "Susan": "Sue",
    "Joseph": "Joe",
    "Christopher": "Chris",
    "Jessica": "Jess",
    "Andrew": "Andy",
    "Rebecca": "Becky",
    "Nicholas": "Nick",
    "Alexander": "Alex",
    "Victoria": "Vicky",
}
LAST = [
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Kowalski",
    "Haddad",
    "Fernandes",
    "Novak",
    "Brennan",
    "Castillo",
    "Ivanova",
    "Mensah",
    "Larsen",
    "Duarte",
    "Whitfield",
]
# (relation, kind, description words for the paraphrase probe, the paraphrase itself)
ROLES = [
    ("HAS_DENTIST", "PERSON", "dentist", "I need to book a dentist appointment soon"),
    ("HAS_LANDLORD", "PERSON", "landlord", "The landlord still hasn't fixed the heating"),
    ("HAS_PIANO_TEACHER", "PERSON", "piano teacher", "My piano lessons start again next week"),
    ("HAS_THERAPIST", "PERSON", "therapist", "I have a therapy session on Thursday"),
    ("HAS_ACCOUNTANT", "PERSON", "accountant", "My taxes are due and I need help with them"),
    ("TRAINS_WITH", "PERSON", "running coach", "Marathon training is going badly"),
    ("OWNS", "THING", "sailboat", "The boat needs new sails before summer"),
    ("DRIVES", "THING", "electric car", "Charging my car has become a hassle"),
    ("VOLUNTEERS_AT", "ORG", "animal shelter", "I spent Saturday walking dogs at the shelter"),
    ("IS_MEMBER_OF", "ORG", "climbing gym", "My bouldering has really improved lately"),
]
PLACE_NAMES = ["Lisbon", "Kyoto", "Reykjavik", "Cape Town", "Valparaiso", "Tallinn"]
NEGATIVES = [
    "Can you recommend a good pasta recipe?",
    "What's the weather like today?",
    "What is the capital of France?",
    "How do I convert Celsius to Fahrenheit?",
    "Tell me a joke about penguins.",
    "Explain how photosynthesis works.",
    "What year did the Berlin Wall fall?",
    "How many ounces are in a pound?",
]


@dataclass
class Probe:
    message: str
    expected: str | None  # the node that must fire; None: nothing may fire
    how: str  # name, alias, paraphrase, negative


@dataclass
class Dataset:
    graph: Graph
    probes: list[Probe] = field(default_factory=list)
    planted: list[str] = field(default_factory=list)  # node ids


def generate(edges: int, facts: int = 30, seed: int = 7) -> Dataset:
    rng = random.Random(seed)
    graph = synthetic_graph(max(edges - facts, 10), seed)
    me = graph.nodes[0]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    data = Dataset(graph)
    used: set[str] = set()
    for i in range(facts):
        relation, kind, what, paraphrase = ROLES[i % len(ROLES)]
        if kind == "PERSON":
            first = FIRST[i % len(FIRST)]
            last = LAST[(i * 7) % len(LAST)]
            name, alias = f"{first} {last}", f"{NICK[first]} {last}"
        else:
            place = PLACE_NAMES[i % len(PLACE_NAMES)]
            name, alias = f"the {place} {what}", f"my {what}"
        nid = node_id(kind, name)
        if nid in used:
            continue
        used.add(nid)
        node = Node(id=nid, name=name, kind=kind, aliases=[alias],
                    properties={"role": what}, conversations=[f"conv-{i}"])  # fmt: skip
        when = start + timedelta(days=rng.randrange(200))
        claim = Edge(id=edge_id(me.id, relation, nid), source=me.id, target=nid,
                     relation=relation, touched_at=when, created_at=when, strength0=90,
                     snippet=f"{name} is my {what}; I see them every few weeks.",
                     conversations=[f"conv-{i}"])  # fmt: skip
        graph.nodes.append(node)
        graph.edges.append(claim)
        data.planted.append(nid)
        data.probes += [
            Probe(f"I ran into {name} yesterday.", nid, "name"),
            Probe(f"{alias} sent me a message this morning.", nid, "alias"),
        ]
        if i < len(ROLES):  # one paraphrase per role: the words say what, not who
            data.probes.append(Probe(paraphrase, nid, "paraphrase"))
    # History that must stay out of recall: superseded, dormant and expired claims.
    for k, edge in enumerate(rng.sample(graph.edges[: len(graph.edges) - facts], 30)):
        index = graph.edges.index(edge)
        if k % 3 == 0:
            graph.edges[index] = edge.evolve(
                superseded_by=graph.edges[(index + 1) % len(graph.edges)].id
            )
        elif k % 3 == 1:
            graph.edges[index] = edge.evolve(dormant=True, strength0=1.0, strength=1.0)
        else:
            graph.edges[index] = edge.evolve(
                stability="time_bound", expired=True, expires_at=edge.touched_at + timedelta(days=1)
            )
    data.probes += [Probe(text, None, "negative") for text in NEGATIVES]
    return data
