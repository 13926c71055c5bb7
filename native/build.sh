#!/usr/bin/env bash
# Builds native/malloc-trim.node's addon into the given file with any C
# compiler: an N-API addon needs Node's headers, not linking against Node.
# Used by `make build` and the Dockerfile.
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
# Node's headers: beside its binary (official images, Node's tarballs), else in the npm "node" package's platform package.
include=$(node -p "const p = require('path'), f = require('fs'); [p.join(process.execPath, '../../include/node'), p.join('$here/../node_modules/node/node_modules', 'node-' + process.platform + '-' + process.arch, 'include/node')].find((d) => f.existsSync(p.join(d, 'node_api.h'))) ?? ''")
if [ -z "$include" ]; then
  echo "native/build.sh: Node's headers (node_api.h) not found" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
"${CC:-cc}" -O2 -Wall -Wextra -Werror -shared -fPIC -DNODE_GYP_MODULE_NAME=malloc_trim -I"$include" -o "$out" "$here/malloc-trim.c"
