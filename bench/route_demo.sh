#!/bin/bash
# The routes of issue 44 (docs: the stop note): a static and an adaptive demo store built with TREE's own code,
# then bench/route.py over coverage and eval. Usage: bench/route_demo.sh TREE OUTDIR (TREE: a checkout)
HERE=$(cd "$(dirname "$0")/.." && pwd)  # this checkout: its venv and its bench/route.py
T=$(cd "$1" && pwd); O=$2; mkdir -p "$O"; O=$(cd "$O" && pwd); cd "$T"
PY="env HF_HUB_OFFLINE=1 PYTHONPATH=$T $HERE/.venv/bin/python"
for pol in static adaptive; do
  rm -f $O/$pol.db*
  extra=""; [ $pol = adaptive ] && extra="--policy adaptive"
  $PY -m workbench pool --corpus corpora/demo/docs --passages paragraphs --queries corpora/demo/queries.jsonl --db $O/$pol.db --systems bm25 $extra > /dev/null 2>$O/pool-$pol.err || { echo pool failed $pol; tail -3 $O/pool-$pol.err; }
  $PY -m workbench simulate --db $O/$pol.db --oracle golden/demo.qrels --budget 180 > /dev/null 2>&1 || echo simulate failed $pol
done
R="$PY $HERE/bench/route.py --"
$R coverage --db $O/static.db > /dev/null 2> $O/coverage-static.txt
$R coverage --db $O/adaptive.db --json > /dev/null 2> $O/coverage-adaptive-json.txt
$R coverage --db $O/adaptive.db --target R@10:0.1 > /dev/null 2> $O/coverage-adaptive-target.txt
$R eval --qrels $O/adaptive.db --run golden/demo-bm25.run > /dev/null 2> $O/eval-store.txt
for f in $O/coverage-*.txt $O/eval-store.txt; do echo "== $(basename $f)"; head -3 $f; done
