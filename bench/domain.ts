/**
 * Times the edge's per-task work (computeNetChanges + summarizeChanges + checkScope) on
 * synthetic observations of 1k / 10k / 50k entries. Run: npx node bench/domain.ts [entries…]
 * The TypeScript is bundled in memory with esbuild (already installed with wrangler), so the
 * bench measures the same code the Worker runs, without a build step or a loader.
 */
import { build } from "esbuild";

const bundle = await build({
  entryPoints: [new URL("../src/domain/index.ts", import.meta.url).pathname],
  bundle: true,
  write: false,
  format: "esm",
  platform: "neutral",
  mainFields: ["module", "main"],
});
const source = bundle.outputFiles[0].text;
const { computeNetChanges, summarizeChanges, checkScope } = await import(
  `data:text/javascript;base64,${Buffer.from(source).toString("base64")}`
);

const hex = (label) => {
  let id = "";
  for (let seed = 0; id.length < 40; seed++) {
    let hash = (0x811c9dc5 ^ seed) >>> 0;
    for (const character of `${seed}:${label}`) {
      hash = Math.imul(hash ^ character.charCodeAt(0), 0x01000193) >>> 0;
    }
    id += hash.toString(16).padStart(8, "0");
  }
  return id.slice(0, 40);
};
const state = (content, mode = "100644") => ({ mode, blob: hex(content) });

/** A mix of every situation: dirty-and-untouched, committed edits, renames, adds, deletes. */
function observations(entries) {
  const startDirty = [];
  const committed = [];
  const endDirty = [];
  for (let index = 0; index < entries; index++) {
    const path = `packages/p${index % 97}/src/module${index}/file${index}.ts`;
    switch (index % 6) {
      case 0:
        startDirty.push({
          path,
          head: state(`${index}a`),
          worktree: state(`${index}b`),
        });
        endDirty.push({
          path,
          head: state(`${index}a`),
          worktree: state(`${index}b`),
        });
        break;
      case 1:
        committed.push({
          path,
          before: state(`${index}a`),
          after: state(`${index}b`),
        });
        break;
      case 2:
        committed.push({ path, before: state(`${index}a`), after: null });
        committed.push({
          path: `${path}.moved`,
          before: null,
          after: state(`${index}a`),
        });
        break;
      case 3:
        endDirty.push({ path, head: null, worktree: state(`${index}n`) });
        break;
      case 4:
        endDirty.push({ path, head: state(`${index}a`), worktree: null });
        break;
      default:
        committed.push({
          path,
          before: state(`${index}a`),
          after: state(`${index}b`),
        });
        endDirty.push({
          path,
          head: state(`${index}b`),
          worktree: state(`${index}a`),
        });
    }
  }
  const head = hex("start");
  return {
    snapshot: { type: "git", head, dirty: startDirty },
    changes: {
      type: "git",
      start_head: head,
      head: hex("end"),
      committed,
      dirty: endDirty,
    },
  };
}

const areas = ["auth", "api", "packages/p1*/**", "*.md", "!packages/p13/**"];
const runs = 5;
console.log("entries  net ms  summary ms  scope ms  total ms  changed");
const sizes = process.argv.slice(2).map(Number);
for (const entries of sizes.length > 0 ? sizes : [1_000, 10_000, 50_000]) {
  const { snapshot, changes } = observations(entries);
  const timings = [];
  let changed = 0;
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const net = computeNetChanges(snapshot, changes);
    const netDone = performance.now();
    summarizeChanges(net);
    const summaryDone = performance.now();
    checkScope(
      areas,
      net.map((change) => change.path),
    );
    const scopeDone = performance.now();
    timings.push([netDone - started, summaryDone - netDone, scopeDone - summaryDone, scopeDone - started]);
    changed = net.length;
  }
  // The fastest run: the others mostly measure the JIT warming up and the GC.
  const best = timings.reduce((fastest, timing) => (timing[3] < fastest[3] ? timing : fastest));
  const cells = best.map((milliseconds) => milliseconds.toFixed(1).padStart(8));
  console.log(`${String(entries).padStart(7)} ${cells.join("  ")}  ${String(changed).padStart(7)}`);
}
