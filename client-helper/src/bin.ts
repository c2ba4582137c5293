#!/usr/bin/env node
// A hook runs while the agent waits: `waymark hook` loads the hooks' modules only
// (./hooks/hook-command.ts), every other command the CLI (./cli.ts).
const argv = process.argv.slice(2);
const hook = argv[0] === "hook" && !argv.includes("--help") && !argv.includes("-h");

async function run(): Promise<number> {
  if (!hook) return (await import("./cli.js")).main(argv);
  const [{ runHookCommand }, { HELPER_VERSION }, { printable }, { readStdin }] = await Promise.all([
    import("./hooks/hook-command.js"),
    import("./version.js"),
    import("./terminal.js"),
    import("./stdin.js"),
  ]);
  // A hook's stdout is the JSON its agent reads, as it is; what it says on stderr is made printable.
  const io = {
    stdout: (text: string) => process.stdout.write(text),
    stderr: (text: string) => process.stderr.write(printable(text)),
    stdin: readStdin,
  };
  return runHookCommand(argv.slice(1), io, HELPER_VERSION);
}

// Exit explicitly: the mcp command may leave idle HTTP keep-alive sockets behind once
// its client has gone, and a finished command must not linger.
run().then((code) => {
  process.stdout.write("", () => process.exit(code));
});
