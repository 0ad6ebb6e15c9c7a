"""Hypothesis strategies for TREC run files: a query's lines in rank order (`regular_query`)
and whole files mixing them with odd lines (`run_text`): comments, short and long lines, bad
ranks and scores, control and separator characters, CRLF, no final newline."""

from __future__ import annotations

from hypothesis import strategies as st

GOOD_SCORES = ["1", "1.0", "2.5", "-0.5", "1e-3", "0.0", "-0.0", "+3", "1e308", "3", "2"]
BAD_SCORES = ["nan", "high", "1_0", "NaN", "inf", "-inf", "1e400", "\u0663", "\uff13.5"]
GOOD_RANKS = ["0", "1", "2", "3", "10", "-1", "01", "9223372036854775807"]
BAD_RANKS = ["x", "1.5", "", "+2", "1_0", "\u0663", "\uff12", "9223372036854775808"]


regular_query = st.builds(
    lambda qid, docs, start, scores, tag: [
        f"{qid} Q0 {d} {start + i} {s} {tag}"
        for i, (d, s) in enumerate(zip(docs, scores, strict=False))
    ],
    st.sampled_from(["q1", "q2", "q10"]),
    st.lists(
        st.sampled_from(["a", "b", "c", "d1", "D", "e_1"]), min_size=1, max_size=6, unique=True
    ),
    st.sampled_from([0, 1, 5]),
    st.lists(st.sampled_from(GOOD_SCORES[:6]), min_size=6, max_size=6).map(
        lambda s: sorted(s, key=float, reverse=True)
    ),
    st.sampled_from(["t", "u"]),
)


odd_line = st.one_of(
    st.builds(
        lambda q, d, r, s, t, sep: sep.join([q, "Q0", d, r, s, t]),
        st.sampled_from(["q1", "q2", "#q"]),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(GOOD_RANKS + BAD_RANKS),
        st.sampled_from(GOOD_SCORES + BAD_SCORES),
        st.sampled_from(["t", "u"]),
        st.sampled_from([" ", "\t", "  ", " \x0b"]),
    ),
    st.sampled_from(
        [
            "",
            "   ",
            "# a comment",
            "q1 Q0 a 1 2.0",
            "q1 Q0 a 1 2 t x",
            "\r",
            "q1 Q0 a 1 2 t\r",
            "\x00 Q0 a 1 2 t",
            "q2\u2028Q0 a 1 2 t",
            "\x1b[31m Q0 a 1 2 t",
            "q1 Q0 a\x7f 1 2 t",
            "q1 Q0 b\u202e 1 2 t\x9b",
            "q1 Q0 c 1 2 t\x85",
            "# comment with \x1b and \x00",
        ]
    ),
)


run_text = st.builds(
    lambda blocks, final_newline: (
        "\n".join(line for block in blocks for line in block) + ("\n" if final_newline else "")
    ),
    st.lists(
        st.one_of(regular_query, st.lists(odd_line, min_size=1, max_size=3)), min_size=0, max_size=8
    ),
    st.booleans(),
)
