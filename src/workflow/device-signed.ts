/**
 * @module workflow/device-signed
 * The device-signed payloads the edge accepted, kept whole in this workflow's SQLite so that the
 * JSON export can carry them and `waymark verify` can check each against the device keys a
 * repository pins (@waymark/protocol/device-signature, DeviceSigned): one payload per accepted
 * signature (a task's start snapshot, its completion's changes and usage), stored as its canonical
 * JSON, exactly the text the export writes. A payload can be as large as the helper's lists
 * (megabytes), more than SQLite keeps in one value, so its text is stored in parts
 * (`device_signed` rows, in order), each under the platform's value limit and never cut inside a
 * UTF-16 surrogate pair. Each row names the event its write emitted (`seq`), so an export reads
 * exactly the payloads of the events it carries.
 */
import { utf8Length } from "../domain/stored-files";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

/** UTF-16 units per stored part: at most 3 bytes of UTF-8 each, so a part (1.5 MiB at most) stays under STORED_VALUE_BYTES. */
const PART_UNITS = 512 * 1024;
/** What a row costs besides its text (ids, numbers), for the workflow's storage quota. */
const ROW_OVERHEAD = 60;

/** One stored part: `first` starts a new payload; the parts of one payload concatenate to its JSON. */
export interface SignedPart {
  first: boolean;
  text: string;
}

export interface SignedPartsPage {
  parts: SignedPart[];
  /** Pass back for the next page; null: no more parts up to the event asked for. */
  next: number | null;
}

/** `text` in parts of at most `units` UTF-16 units, none ending between the two halves of a surrogate pair. */
function split(text: string, units: number): string[] {
  const parts: string[] = [];
  let from = 0;
  while (from < text.length) {
    let to = Math.min(text.length, from + units);
    const last = text.charCodeAt(to - 1);
    if (to < text.length && last >= 0xd800 && last <= 0xdbff) to--;
    parts.push(text.slice(from, to));
    from = to;
  }
  return parts;
}

export class DeviceSignedRecords {
  constructor(private readonly sql: Sql) {}

  /** Keeps a payload the write at event `seq` accepted (`text`: its canonical JSON, deviceSignedText); returns the bytes it takes. */
  store(seq: number, taskId: string, text: string): number {
    let bytes = 0;
    for (const [part, chunk] of split(text, PART_UNITS).entries()) {
      this.sql`INSERT INTO device_signed (seq, task_id, part, text) VALUES (${seq}, ${taskId}, ${part}, ${chunk})`;
      bytes += ROW_OVERHEAD + utf8Length(chunk);
    }
    return bytes;
  }

  /**
   * The parts after `after` (0: from the first) of payloads kept by events up to `throughSeq`,
   * in the order they were kept, at most READ_PAGE_BYTES of text (one part always).
   */
  page(after: number, throughSeq: number): SignedPartsPage {
    // Sizes first, so a page never loads more text than it returns.
    const sizes = this.sql<{ id: number; units: number }>`
      SELECT rowid AS id, length(text) AS units FROM device_signed WHERE rowid > ${after} AND seq <= ${throughSeq}
      ORDER BY rowid LIMIT ${LIMITS.READ_PAGE_ITEMS + 1}`;
    let through = after;
    let units = 0;
    let taken = 0;
    for (const row of sizes.slice(0, LIMITS.READ_PAGE_ITEMS)) {
      if (taken > 0 && units + row.units > LIMITS.READ_PAGE_BYTES) break;
      through = row.id;
      units += row.units;
      taken++;
    }
    if (taken === 0) return { parts: [], next: null };
    const parts = this.sql<{ part: number; text: string }>`
      SELECT part, text FROM device_signed WHERE rowid > ${after} AND rowid <= ${through} ORDER BY rowid`.map((row) => ({
      first: row.part === 0,
      text: row.text,
    }));
    return { parts, next: taken < sizes.length ? through : null };
  }
}
