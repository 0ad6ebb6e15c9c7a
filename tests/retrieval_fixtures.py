"""Small corpora for the retrieval tests (fixtures live in the test files that use them)."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.model import Doc, Query

CRANFIELD = Path("/work/shared/collections/cranfield")

FARM_TEXTS = {
    "m1": "Fall armyworm larvae chew maize leaves and bore into the whorl.",
    "m2": "Scout maize fields weekly for armyworm egg masses and frass.",
    "m3": "Push-pull planting with desmodium repels stem borers from maize.",
    "m4": "Maize streak virus is spread by leafhoppers in dry seasons.",
    "m5": "Rotate maize with beans to break the cycle of soil pests.",
    "m6": "Neem extract sprayed into the whorl reduces larval feeding.",
    "s1": "Hermetic bags stop weevils in stored grain without chemicals.",
    "s2": "Dry grain below thirteen percent moisture before storage.",
    "s3": "Aflatoxin from Aspergillus mould contaminates damp stored groundnuts.",
    "s4": "Clean the granary and raise it off the ground to keep rodents out.",
    "d1": "Dairy cows need clean water and forage to keep milk yield high.",
    "d2": "Mastitis shows as clots in milk and a hot swollen udder.",
    "d3": "Napier grass silage feeds dairy cattle through the dry season.",
    "d4": "Milk must be cooled within two hours of milking.",
    "d5": "Calves should drink colostrum within six hours of birth.",
    "p1": "Vaccinate poultry against Newcastle disease every three months.",
    "p2": "Layers need calcium grit for strong egg shells.",
    "p3": "Broiler chicks need brooding heat for their first two weeks.",
    "p4": "Coccidiosis causes bloody droppings in young chickens.",
    "p5": "Free range hens forage insects and kitchen scraps.",
    "x1": "Mulch keeps soil moist and suppresses weeds between rows.",
    "x2": "Drip irrigation saves water on vegetable beds.",
    "x3": "Contour bunds slow runoff and reduce soil erosion on slopes.",
    "x4": "Test borehole water for nitrates before giving it to livestock.",
}


def farm_docs() -> list[Doc]:
    return [Doc(doc_id, text) for doc_id, text in FARM_TEXTS.items()]


def cranfield() -> tuple[list[Doc], list[Query]]:
    docs = [
        Doc(row["_id"], row["text"], row["title"])
        for row in map(
            json.loads, (CRANFIELD / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        )
    ]
    queries = [
        Query(row["_id"], row["text"])
        for row in map(
            json.loads, (CRANFIELD / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        )
    ]
    return docs, queries
