#!/usr/bin/env bash
# Regenerates the shipped type stub from the built extension (./dev setup first).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -m nanobind.stubgen -q -m simpler._core -p scripts/stub_patterns.txt -o python/simpler/_core.pyi
"$PY" scripts/drop_refusal_overloads.py python/simpler/_core.pyi  # a type checker sees only the real forms
"$PY" scripts/compact_stub.py python/simpler/_core.pyi  # the blank lines inside classes go
echo "wrote python/simpler/_core.pyi"
