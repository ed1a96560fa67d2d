#!/usr/bin/env bash
# npm test: lint and build, then the tests (every file; with TEST_DATABASE_URL the database suite).
#
# The lint and the build are skipped when they already passed on exactly these files: CI runs npm test twice on
# one checkout (.ci/run), and the second run would repeat the same checks on the same bytes. The stamp that
# says so lives in dist/ (the build removes it first) and names a fingerprint of every file git sees in the
# work tree (tracked and untracked, ignored ones aside: their paths and contents), of the built dist/ and
# web/dist/, and of the Node version; any change to any of them runs both again.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=dist/.lint-and-build-passed

fingerprint() {
  {
    node --version
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
      if [ -f "$file" ]; then printf '%s\0' "$file"; fi
    done | xargs -0 -r sha1sum --
    find dist web/dist -type f ! -path "$stamp" -print0 2>/dev/null | sort -z | xargs -0 -r sha1sum --
  } | sha1sum | cut -d' ' -f1
}

# Outside a git work tree there is nothing to fingerprint: both always run.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(fingerprint)" ]; then
  echo "== lint and build: skipped, they passed on these same files (fingerprint in $stamp) =="
else
  npm run lint
  npm run build
  # A file that cannot be read leaves no stamp: the next run checks again.
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then fingerprint >"$stamp" || rm -f "$stamp"; fi
fi

exec vitest run "$@"
