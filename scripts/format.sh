#!/usr/bin/env bash
# Reformats every tracked C++ file in place with the pinned clang-format and .clang-format (the
# layout `./dev test` checks). Python is not reformatted: `ruff check` lints it and the code keeps
# its hand layout. Run `./dev setup` first so .venv has the pinned tools.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-.venv/bin/clang-format}
git ls-files -z '*.cpp' '*.h' | xargs -0 "$CLANG_FORMAT" -i
echo "formatted $(git ls-files '*.cpp' '*.h' | wc -l) C++ files"
