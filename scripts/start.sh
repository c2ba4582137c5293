#!/bin/sh
# `npm start [-- wrangler dev flags]`: the local Waymark server on workerd, data kept in
# .wrangler/state. The development token is WAYMARK_DEV_TOKEN when set; otherwise a random
# one generated on the first start, kept in .wrangler/dev-token (readable by you only) and
# reused afterwards; likewise the signing key in .wrangler/signing-keys.json. Only loopback host names are served (DNS rebinding protection): open
# http://127.0.0.1:8787 or http://localhost:8787. WAYMARK_STATE_DIR moves both (tests).
set -eu
export WRANGLER_SEND_METRICS=false
# wrangler's Local Explorer answers on this same port, before Waymark's own checks: with it on,
# any local process could run SQL on every workflow's storage (reading it and rewriting the
# record) without a token. Its trace capture keeps every request's URL, share links included,
# in a store that is never pruned (about 9 KB per tool call). Both stay off unless you turn
# them on for debugging (X_LOCAL_EXPLORER=true, X_LOCAL_OBSERVABILITY=true).
export X_LOCAL_EXPLORER="${X_LOCAL_EXPLORER:-false}"
export X_LOCAL_OBSERVABILITY="${X_LOCAL_OBSERVABILITY:-false}"
# wrangler fetches the `Request.cf` sample (colo, country…) from workers.cloudflare.com when it starts
# (twice per start with wrangler 4.156): offline, or behind a firewall, each failed fetch prints a stack
# trace. Waymark reads no `cf` field, so the fetch stays off (CLOUDFLARE_CF_FETCH_ENABLED=true turns it on).
export CLOUDFLARE_CF_FETCH_ENABLED="${CLOUDFLARE_CF_FETCH_ENABLED:-false}"
STATE_DIR=${WAYMARK_STATE_DIR:-.wrangler}
TOKEN_FILE="$STATE_DIR/dev-token"
if [ -z "${WAYMARK_DEV_TOKEN:-}" ]; then
  if [ ! -s "$TOKEN_FILE" ]; then
    mkdir -p "$STATE_DIR"
    # 32 random bytes as base64url: 43 characters, in a file only the user can read.
    (umask 077 && head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' > "$TOKEN_FILE")
    echo "Waymark: generated a development token in $TOKEN_FILE"
  fi
  WAYMARK_DEV_TOKEN=$(cat "$TOKEN_FILE")
fi
# The deployment's signing key (export statements), generated once and kept beside the token.
KEYS_FILE="$STATE_DIR/signing-keys.json"
if [ -z "${WAYMARK_SIGNING_KEYS:-}" ]; then
  if [ ! -s "$KEYS_FILE" ]; then
    mkdir -p "$STATE_DIR"
    (umask 077 && node scripts/signing-key.mjs > "$KEYS_FILE")
    echo "Waymark: generated a signing key in $KEYS_FILE"
  fi
  WAYMARK_SIGNING_KEYS=$(cat "$KEYS_FILE")
fi
# The port wrangler will serve (its own default unless `--port N` or `--port=N` is passed on),
# so that what is printed below is the address that answers.
PORT=8787
EXPECT_PORT=false
for arg in "$@"; do
  if [ "$EXPECT_PORT" = true ]; then PORT=$arg; EXPECT_PORT=false; continue; fi
  case "$arg" in
    --port) EXPECT_PORT=true ;;
    --port=*) PORT=${arg#--port=} ;;
  esac
done
ORIGIN="http://127.0.0.1:$PORT"
echo "Waymark dev token: $WAYMARK_DEV_TOKEN"
echo "  agents: Authorization: Bearer <token>; dashboard: $ORIGIN/login"
echo "  helper (built by prestart): npx -y --package=$ORIGIN/helper/latest waymark init --url $ORIGIN"
echo "  plugins: claude plugin marketplace add $ORIGIN/plugins/waymark.git (Codex: codex plugin marketplace add $ORIGIN/plugins/waymark.git)"
# The token and the signing key reach wrangler through a file only the user can read, never its
# command line (which any local user reads with `ps`). It is a dotenv file: each value single-quoted
# (kept as written) with `$` escaped (wrangler expands `$NAME` in .env files). Passing --env-file
# stops wrangler reading .dev.vars by itself, so a .dev.vars of yours is passed first (ours wins).
SECRETS_FILE="$STATE_DIR/dev-secrets.env"
dotenv_value() {
  case "$2" in
    *"'"* | *"\\"*) echo "Waymark: $1 must not contain a single quote or a backslash" >&2; exit 1 ;;
  esac
  printf "%s='%s'\n" "$1" "$(printf '%s' "$2" | tr -d '\n' | sed 's/\$/\\$/g')"
}
mkdir -p "$STATE_DIR"
(umask 077 && rm -f "$SECRETS_FILE" && {
  dotenv_value WAYMARK_DEV_TOKEN "$WAYMARK_DEV_TOKEN"
  dotenv_value WAYMARK_SIGNING_KEYS "$WAYMARK_SIGNING_KEYS"
} > "$SECRETS_FILE")
if [ -f .dev.vars ]; then set -- --env-file .dev.vars "$@"; fi
# wrangler reads --env-file only while this is on (its default); an environment that turned it off would start a server without the token.
export CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV=true
exec wrangler dev --persist-to "$STATE_DIR/state" --env-file "$SECRETS_FILE" "$@"
