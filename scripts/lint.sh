#!/usr/bin/env bash
# heft's lint, run by ctest (label `lint`, tests/lint) and by `tools/heft lint`.
#   scripts/lint.sh format            clang-format-14 --dry-run -Werror on every tracked C/C++ file
#   scripts/lint.sh tidy BUILD_DIR    clang-tidy-14 (profile: .clang-tidy) on the C/C++ sources changed
#                                   since the base: `git merge-base HEAD $HEFT_LINT_BASE` when that is
#                                   set (a branch against main: HEFT_LINT_BASE=main), else HEAD~1;
#                                   uncommitted changes count. Headers are checked through the
#                                   changed sources that include them (HeaderFilterRegex); a source
#                                   missing from BUILD_DIR/compile_commands.json (not built by that
#                                   preset, e.g. the fuzz harnesses in Release) is skipped.
# Exit 0 clean, 1 findings, 77 nothing to check here (no git checkout, no base commit).
set -euo pipefail
cd "$(dirname "$0")/.."
SKIP=77

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "lint: not a git checkout, nothing to check"
  exit $SKIP
fi

sources() { # git ls-files / git diff arguments → C/C++ paths, NUL-separated
  "$@" -z -- '*.c' '*.h' '*.cc' '*.cpp' '*.hpp'
}

case "${1:-}" in
  format)
    count=$(sources git ls-files | tr -cd '\0' | wc -c)
    sources git ls-files | xargs -0 clang-format-14 --dry-run -Werror
    echo "lint: clang-format-14: $count tracked files clean"
    ;;
  tidy)
    build=${2:?usage: scripts/lint.sh tidy BUILD_DIR}
    if [ -n "${HEFT_LINT_BASE:-}" ]; then
      base=$(git merge-base HEAD "$HEFT_LINT_BASE")
    elif git rev-parse -q --verify HEAD~1 >/dev/null; then
      base=HEAD~1
    else
      echo "lint: no base commit to compare with"
      exit $SKIP
    fi
    mapfile -d '' changed < <(sources git diff --name-only --diff-filter=d "$base")
    files=()
    for f in "${changed[@]}"; do
      case "$f" in *.c | *.cc | *.cpp) ;; *) continue ;; esac
      grep -qF "\"file\": \"$PWD/$f\"" "$build/compile_commands.json" && files+=("$f")
    done
    echo "lint: clang-tidy-14 on ${#files[@]} changed source(s) since $(git rev-parse --short "$base")"
    [ ${#files[@]} -eq 0 ] && exit 0
    printf '%s\0' "${files[@]}" |
      xargs -0 -n 1 -P "${HEFT_LINT_JOBS:-2}" clang-tidy-14 -p "$build" --quiet
    ;;
  *)
    sed -n '2,11p' "$0"
    exit 2
    ;;
esac
