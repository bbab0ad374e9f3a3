#!/usr/bin/env bash
# The project's one test command (`npm test`): unit tests, then the built executable against
# a real gnome-keyring and a real `pass`, then end-to-end tests with the real terraform.
#   bash scripts/test.sh [unit|integration|e2e]...   (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."

suites=("$@")
[[ ${#suites[@]} -gt 0 ]] || suites=(unit integration e2e)

files_of() { find "test/$1" -name '*.test.ts' | sort; }

for suite in "${suites[@]}"; do
  mapfile -t files < <(files_of "$suite")
  [[ ${#files[@]} -gt 0 ]] || continue
  if [[ "$suite" != unit && ! -x dist/terraform-credentials-keychain ]]; then
    npm run --silent build
  fi
  echo "== $suite tests (${#files[@]} files)"
  # Files run one after another: each integration file starts its own private keyring.
  node --import tsx --test --test-concurrency=1 "${files[@]}"
done
