#!/usr/bin/env bash
# One-step set-up on a fresh Debian/Ubuntu machine (`npm run setup`): install the project's
# dependencies, build the single executable, and install it for Terraform and OpenTofu.
# It edits your own CLI config, so it prints the plan (which file, which block) and how to
# undo it before it changes anything.
#   npm run setup [-- --backend pass] [-- --service NAME] [-- --force] [-- --dry-run]
set -euo pipefail
cd "$(dirname "$0")/.."

# The helper's options go before `install` (they become the block's args), install's own
# after it: `npm run setup -- --force` is `install --force`.
helper_options=()
install_options=()
for arg in "$@"; do
  case "$arg" in
    --force | --dry-run) install_options+=("$arg") ;;
    *) helper_options+=("$arg") ;;
  esac
done
helper=(./dist/terraform-credentials-keychain ${helper_options[@]+"${helper_options[@]}"})

echo "npm run setup: npm ci, build, then install the helper for $(id -un): it adds a credentials_helper block to your CLI config (the plan is printed first)"
npm ci --no-audit --no-fund --loglevel=error
echo "== the plan"
# Asked of the sources, before the build: a refusal costs no half minute of building. A dry
# run copies nothing, so it runs without the built executable.
# install's refusal on stderr is passed on; a refusal that --force would overcome gets the
# command that adds --force to everything the person gave, so no option of theirs is lost.
from_sources=(node_modules/.bin/tsx src/main.ts ${helper_options[@]+"${helper_options[@]}"})
if ! { refusal=$("${from_sources[@]}" install --dry-run ${install_options[@]+"${install_options[@]}"} 2>&1 >&3); } 3>&1; then
  printf '%s\n' "$refusal" >&2
  if [[ "$refusal" == *--force* && " ${install_options[*]-} " != *" --force "* ]]; then
    # printf with no argument would still print one empty, quoted word.
    given=""
    [[ $# -eq 0 ]] || given=$(printf ' %q' "$@")
    echo "npm run setup: nothing was changed; to replace it: npm run setup --$given --force" >&2
  else
    echo "npm run setup: nothing was changed" >&2
  fi
  exit 1
fi
[[ " ${install_options[*]-} " != *" --dry-run "* ]] || exit 0
npm run --silent build
echo "== installing (undo:$(printf ' %q' "${helper[@]}") uninstall)"
"${helper[@]}" install ${install_options[@]+"${install_options[@]}"}
