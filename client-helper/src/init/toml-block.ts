/**
 * @module init/toml-block
 * What someone else wrote inside Waymark's marked block of a TOML file the user owns. Codex edits
 * its own config.toml (`codex exec --trust` adds a `[projects."<dir>"]` table, trusting a hook adds
 * `[hooks.state."<hook>"]`, `codex features enable` a key of `[features]`), and a table it adds goes
 * at the end of the file, before the comments that end it: inside the block when the block is
 * last, as init leaves it. Init must never delete those entries, nor doctor call the block stale
 * for them.
 *
 * The block is read as TOML tables (a `[header]` line and the lines up to the next one). A table
 * the block init writes has is Waymark's: of its key lines, those init writes are Waymark's, any
 * other is kept in that table. Any other table is someone else's: kept whole, after the block.
 * Lines before the block's first table belong, in TOML, to the table before the block: kept
 * before it. Only simple `[table]` headers and `key = value` lines are told apart; a line of
 * another form inside one of Waymark's tables (a multi-line value) is kept with it.
 */

type Table = { header: string | null; lines: string[] };

/** The header of a `[table]` line (not `[[array]]`), or null. */
function tableHeader(line: string): string | null {
  const match = /^\s*\[(?!\[)\s*(.+?)\s*\]\s*(?:#.*)?$/.exec(line);
  return match?.[1] ?? null;
}

/** The key of a `key = value` line (a bare or quoted key, dotted or not), or null. */
function keyOf(line: string): string | null {
  const match = /^\s*((?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'))*)\s*=/.exec(
    line,
  );
  return match?.[1]?.replace(/\s+/g, "") ?? null;
}

function tables(body: string): Table[] {
  const out: Table[] = [{ header: null, lines: [] }];
  for (const line of body.split("\n")) {
    const header = tableHeader(line);
    if (header !== null) out.push({ header, lines: [line] });
    else out[out.length - 1]?.lines.push(line);
  }
  return out;
}

const meaningful = (line: string) => line.trim() !== "" && !line.trim().startsWith("#");

export type TomlBlockParts = {
  /** The block as init writes it now, with the keys someone else added to its tables kept in them. */
  block: string;
  /** Lines of someone else's before the block's first table: they go before the block. */
  before: string;
  /** Tables of someone else's found inside the block: they go after it. */
  after: string;
  /** What stays where the block was when init --remove takes it out: before, after, and the keys added to a `[features]`-like table (`keep`). */
  removed: string;
  /** The block's own lines as they are (Waymark's tables with Waymark's keys)… */
  owned: string;
  /** …and as init writes them: doctor compares the two. */
  expected: string;
};

/**
 * Splits the current body of the block (between the markers) against `block`, the whole block
 * init writes now (markers included): which of the body's lines are Waymark's. `keepOnRemove`:
 * the tables whose added keys outlive the block (a `[features]` table: a feature the user turned
 * on is theirs; a key added to the MCP server's table goes with the server).
 */
export function splitTomlBlock(body: string, block: string, keepOnRemove: readonly string[]): TomlBlockParts {
  const lines = block.split("\n");
  const begin = lines[0] ?? "";
  const end = lines.at(-1) ?? "";
  const ours = tables(lines.slice(1, -1).join("\n"));
  const ownKeys = new Map<string, Set<string>>();
  for (const table of ours) {
    if (table.header === null) continue;
    ownKeys.set(table.header, new Set(table.lines.flatMap((line) => keyOf(line) ?? [])));
  }
  const before: string[] = [];
  /** Someone else's tables, each after a blank line (as TOML files are usually laid out). */
  const after: string[] = [];
  const added = new Map<string, string[]>();
  const owned: string[] = [];
  for (const table of tables(body)) {
    if (table.header === null) {
      // The begin marker's own comment lines and blank lines are init's; anything else belongs to the table before the block.
      before.push(...table.lines.filter(meaningful));
      continue;
    }
    const keys = ownKeys.get(table.header);
    if (!keys) {
      after.push("", ...trimBlankEnd(table.lines));
      continue;
    }
    owned.push(table.lines[0] ?? "");
    for (const line of table.lines.slice(1)) {
      const key = keyOf(line);
      if (key !== null && keys.has(key)) owned.push(line);
      else if (meaningful(line)) added.set(table.header, [...(added.get(table.header) ?? []), line]);
    }
  }
  const merged: string[] = [begin];
  for (const table of ours) {
    merged.push(...(table.header === null ? table.lines.filter((line) => line !== "") : table.lines));
    if (table.header !== null) merged.push(...(added.get(table.header) ?? []));
  }
  merged.push(end);
  const kept = keepOnRemove.flatMap((header) => {
    const keys = added.get(header);
    return keys && keys.length > 0 ? [`[${header}]`, ...keys] : [];
  });
  const text = (part: string[]) => (part.length === 0 ? "" : `${part.join("\n")}\n`);
  return {
    block: merged.join("\n"),
    before: text(before),
    after: text(after),
    removed: text([...before, ...kept, ...after]),
    owned: owned.filter(meaningful).join("\n"),
    expected: ours.flatMap((table) => (table.header === null ? [] : table.lines.filter(meaningful))).join("\n"),
  };
}

function trimBlankEnd(lines: string[]): string[] {
  const out = [...lines];
  while (out.length > 0 && (out.at(-1) ?? "").trim() === "") out.pop();
  return out;
}
