/**
 * @module pages/scripts
 * The pages' two browser scripts, as text to inline with each response's CSP nonce. Their source
 * is typed TypeScript under src/pages/client/ (type-checked with the DOM library, linted, tested
 * in Chromium); scripts/page-scripts.mjs bundles each into build/page-script-<name>.txt before the
 * Worker is built, tested or started, and wrangler imports *.txt as text.
 *  - LIVE_SCRIPT (client/live.ts): the shared page and the owner view, kept live.
 *  - OWNER_SCRIPT (client/owner.ts): the dashboard, tokens and consent pages: local times and copy buttons.
 */
import live from "../../build/page-script-live.txt";
import owner from "../../build/page-script-owner.txt";

export const LIVE_SCRIPT: string = live;
export const OWNER_SCRIPT: string = owner;
