"""DESIGN.md's seed example, copied by hand from its table: the one copy the tests check the
golden/seed-example files and the metrics against."""

SEED_QRELS = {
    "q_faw": {"m1": 3, "m2": 2, "m3": 1},
    "q_store": {"s1": 3, "s2": 2, "s3": 1},
    "q_milk": {"d1": 3, "d2": 2, "d3": 1},
    "q_broad": {"m1": 3, "m2": 3, "m3": 2, "m4": 2, "m5": 1, "m6": 1, "s1": 2, "s2": 1},
}
SEED_RANKINGS = {
    "q_faw": "m2 x3 m1 p1 d2 m3 s1 x1 p3 d5".split(),
    "q_store": "d2 s2 x4 s1 p2 s3 m4 d1 p5 x2".split(),
    "q_milk": "d1 s2 x1 d2 x3 d3 m1 p4 s4 x2".split(),
    "q_broad": "m1 s1 m2 m3 x1 m4 m5 m6 s2 d1".split(),
}
