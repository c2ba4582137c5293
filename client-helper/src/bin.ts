#!/usr/bin/env node
import { main } from "./cli.js";

// Exit explicitly: the mcp command may leave idle HTTP keep-alive sockets behind once
// its client has gone, and a finished command must not linger.
main(process.argv.slice(2)).then((code) => {
  process.stdout.write("", () => process.exit(code));
});
