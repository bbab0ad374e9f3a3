#!/usr/bin/env bash
# The project's one test command (`npm test`): static checks and unit tests, then the built
# executable against a real gnome-keyring and a real `pass`, then end-to-end tests with the
# real terraform.
#   bash scripts/test.sh [static|unit|integration|e2e]...   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

suites=("$@")
[[ ${#suites[@]} -gt 0 ]] || suites=(static unit integration e2e)

for suite in "${suites[@]}"; do
  if [[ "$suite" == static ]]; then
    echo "== type check, lint, format"
    npx tsc --noEmit
    npx eslint .
    npx prettier --check --log-level warn .
    continue
  fi
  mapfile -t files < <(find "test/$suite" -name '*.test.ts' | sort)
  [[ ${#files[@]} -gt 0 ]] || continue
  if [[ "$suite" != unit && -z "${built:-}" ]]; then
    # Rebuild once per run: tests of a stale binary prove nothing about the sources.
    npm run --silent build
    built=1
  fi
  echo "== $suite tests (${#files[@]} files)"
  # One file at a time: each integration file starts its own private keyring session.
  node --import tsx --test --test-concurrency=1 "${files[@]}"
done
