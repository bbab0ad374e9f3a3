#!/usr/bin/env bash
# One-step set-up on a fresh Debian/Ubuntu machine (`npm run setup`): install the project's
# dependencies, build the single executable, and install it for Terraform and OpenTofu.
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
./dist/terraform-credentials-keychain "$@" install
