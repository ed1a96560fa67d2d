#!/usr/bin/env bash
# npm test: lint and build, then the tests (every file; with TEST_DATABASE_URL the database suite).
#
# The lint and the build are skipped when they already passed on exactly these files: CI runs npm test twice on
# one checkout (.ci/run), and the second run would repeat the same checks on the same bytes. The stamp that
# says so lives in dist/ (the build removes it first) and names a fingerprint (scripts/fingerprint.sh) of every
# file git sees in the work tree, of the built dist/ and web/dist/, and of the Node version; any change to any of
# them runs both again. The build alone is skipped when dist/ and web/dist/ are already the build of these same
# files: `npm ci` builds them (the `prepare` script) just before CI's first npm test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/fingerprint.sh
in_git() { git rev-parse --is-inside-work-tree >/dev/null 2>&1; }

if in_git && [ -f "$lint_and_build_stamp" ] && [ "$(cat "$lint_and_build_stamp")" = "$(fingerprint)" ]; then
  echo "== lint and build: skipped, they passed on these same files (fingerprint in $lint_and_build_stamp) =="
else
  npm run lint
  if in_git && [ -f "$build_stamp" ] && [ "$(cat "$build_stamp")" = "$(fingerprint)" ]; then
    echo "== build: skipped, dist/ and web/dist/ are the build of these same files (fingerprint in $build_stamp) =="
  else
    npm run build
  fi
  # A file that cannot be read leaves no stamp: the next run checks again.
  if in_git; then fingerprint >"$lint_and_build_stamp" || rm -f "$lint_and_build_stamp"; fi
fi

exec vitest run "$@"
