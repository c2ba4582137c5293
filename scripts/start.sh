#!/bin/sh
# `npm start [-- wrangler dev flags]`: the local Waymark server on workerd, data kept in
# .wrangler/state. The development token is WAYMARK_DEV_TOKEN when set; otherwise a random
# one generated on the first start, kept in .wrangler/dev-token (mode 600) and reused.
# Only loopback host names are served (DNS rebinding protection): open it as
# http://127.0.0.1:8787 or http://localhost:8787.
set -eu
export WRANGLER_SEND_METRICS=false
TOKEN_FILE=.wrangler/dev-token
if [ -z "${WAYMARK_DEV_TOKEN:-}" ]; then
  if [ ! -s "$TOKEN_FILE" ]; then
    mkdir -p .wrangler
    umask 077
    # 32 random bytes, base64url: 43 characters.
    head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' > "$TOKEN_FILE"
    echo "Waymark: generated a development token in $TOKEN_FILE"
  fi
  WAYMARK_DEV_TOKEN=$(cat "$TOKEN_FILE")
fi
echo "Waymark dev token: $WAYMARK_DEV_TOKEN   (Authorization: Bearer …, and the dashboard sign-in)"
exec wrangler dev --persist-to .wrangler/state \
  --var "WAYMARK_DEV_TOKEN:$WAYMARK_DEV_TOKEN" "$@"
