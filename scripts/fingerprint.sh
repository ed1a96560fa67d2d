#!/usr/bin/env bash
# The fingerprint of a checkout's state, for the stamps that let npm test skip work already done on exactly it
# (scripts/test.sh): every file git sees in the work tree (tracked and untracked, ignored ones aside: their paths
# and contents), the built dist/ and web/dist/ (the stamps aside), and the Node version. Sourced for
# `fingerprint`; run as `bash scripts/fingerprint.sh stamp-build`, it writes the build's stamp (the last step of
# `npm run build`, so a build that fails leaves none).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

lint_and_build_stamp=dist/.lint-and-build-passed
build_stamp=dist/.build-passed

fingerprint() {
  {
    node --version
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
      if [ -f "$file" ]; then printf '%s\0' "$file"; fi
    done | xargs -0 -r sha1sum --
    find dist web/dist -type f ! -path "$lint_and_build_stamp" ! -path "$build_stamp" -print0 2>/dev/null |
      sort -z | xargs -0 -r sha1sum --
  } | sha1sum | cut -d' ' -f1
}

# Outside a git work tree there is nothing to fingerprint: no stamp, so npm test builds.
if [ "${1:-}" = stamp-build ] && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  fingerprint >"$build_stamp" || rm -f "$build_stamp"
fi
