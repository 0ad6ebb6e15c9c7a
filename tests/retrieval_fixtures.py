"""Small corpora and a tiny model for the retrieval tests (pytest fixtures live in the test
files that use them and call these builders)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.core.model import Doc, Query
from workbench.retrieval import tokenize

CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "collections" / "cranfield"
"""The checkout's ../shared/collections (DESIGN.md); tests that need it skip without it."""

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


QUERIES = [
    Query("q_pest", "caterpillars eating the corn plants"),
    Query("q_udder", "infection of the cow's udder"),
    Query("q_chicks", "keeping newly hatched chickens warm"),
    Query("q_erosion", "stopping rain from washing away soil on hillsides"),
]
"""Paraphrases of farm passages: no query shares its key words with its answer."""


def farm_docs() -> list[Doc]:
    return [Doc(doc_id, text) for doc_id, text in FARM_TEXTS.items()]


def build_tiny_cross_encoder(folder: Path) -> tuple[Path, Any, Any]:
    """A 2-layer, 32-wide BERT with one output and random weights (seed 7), its vocabulary the
    farm passages' and queries' words, saved in `folder`: (folder, model, tokenizer)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = sorted(
        {t for text in FARM_TEXTS.values() for t in tokenize(text)}
        | {t for q in QUERIES for t in tokenize(q.text)}
    )
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tokenizer = BertTokenizer(vocab_file=str(vocab), model_max_length=128)
    torch.manual_seed(7)
    config = BertConfig(
        vocab_size=len(words) + 5,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
    )
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder, model, tokenizer


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
