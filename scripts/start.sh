#!/bin/sh
# `npm start [-- wrangler dev flags]`: the local Waymark server on workerd, data kept
# in .wrangler/state. The development token is WAYMARK_DEV_TOKEN (default below).
export WRANGLER_SEND_METRICS=false
exec wrangler dev --persist-to .wrangler/state \
  --var "WAYMARK_DEV_TOKEN:${WAYMARK_DEV_TOKEN:-waymark-dev-token}" "$@"
