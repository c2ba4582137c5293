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
 * exactly the payloads of the events it carries. Since v25 a payload of one part (nearly all: a
 * part is 512 Ki UTF-16 units) is kept in its event's row instead (`events.signed`), which the
 * write writes anyway: no row of its own.
 */
import { utf8Length } from "../domain/stored-files";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import type { WorkflowTables } from "./workflow-tables";

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
  /** Pass back for the next page (which may hold none: a page reads a bounded span of events); null: no more parts up to the event asked for. */
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

/**
 * The payload as it rides on its event's row (EventLog.append's `signed`): when it fits one part,
 * it is kept there, in the row the write writes anyway, instead of a row of its own (v25).
 */
export function signedInline(text: string | null): string | undefined {
  return text !== null && text.length <= PART_UNITS ? text : undefined;
}

/** A part's size and where it is: its event, `k` (0: on the event's row; else its rowid here) and its place among the event's parts (from 1). */
type PartSize = { seq: number; k: number; units: number; place: number };

/** A part's place in the export's order, as a cursor: its event's seq, then its place among that event's parts (from 1). */
const PLACES_PER_EVENT = 1 << 20;

export class DeviceSignedRecords {
  constructor(
    private readonly sql: Sql,
    /** device_signed is created by the first payload too large for its event's row (most workflows never keep one). */
    private readonly tables: WorkflowTables,
  ) {}

  /**
   * Keeps a payload the write at event `seq` accepted (`text`: its canonical JSON, deviceSignedText);
   * returns the bytes it takes. One that fits one part rode on the event's own row (signedInline,
   * passed to emit); a larger one is stored here, in parts.
   */
  store(seq: number, taskId: string, text: string): number {
    if (signedInline(text) !== undefined) return ROW_OVERHEAD + utf8Length(text);
    this.tables.ensure("device_signed");
    let bytes = 0;
    for (const [part, chunk] of split(text, PART_UNITS).entries()) {
      this.sql`INSERT INTO device_signed (seq, task_id, part, text) VALUES (${seq}, ${taskId}, ${part}, ${chunk})`;
      bytes += ROW_OVERHEAD + utf8Length(chunk);
    }
    return bytes;
  }

  /**
   * The parts after `after` (0: from the first) of payloads kept by events up to `throughSeq`, in
   * the order they were kept (by event, then the one on the event's row, then the rows here in
   * the order written), at most READ_PAGE_BYTES of text (one part always). Neither source has an
   * index by event (each would be a row written per payload): the events are read along their
   * key from the cursor's event, a page of them, and at most EVENTS_PAGE events (payloads are on a
   * few of them, none of an unsigned workflow's: without that bound a page would read every event
   * after the cursor to find none); the rows here (only payloads over a part, and those kept before
   * v25) by a scan of their event numbers, their text only for a page of them; rows read cost a
   * thousandth of rows written.
   */
  page(after: number, throughSeq: number): SignedPartsPage {
    const fromSeq = Math.floor(after / PLACES_PER_EVENT);
    const spanEnd = Math.min(throughSeq, fromSeq + LIMITS.EVENTS_PAGE - 1);
    // Past the span, the next page starts at the event after it (every part of the span's events taken).
    const afterSpan = spanEnd < throughSeq ? (spanEnd + 1) * PLACES_PER_EVENT : null;
    const rows = this.tables.has("device_signed");
    // Sizes first, so a page never loads more text than it returns.
    const sizes = rows ? this.sizesWithRows(after, fromSeq, spanEnd) : this.sizesOnEvents(after, fromSeq, spanEnd);
    let units = 0;
    const taken: { seq: number; k: number; place: number }[] = [];
    for (const row of sizes.slice(0, LIMITS.READ_PAGE_ITEMS)) {
      if (taken.length > 0 && units + row.units > LIMITS.READ_PAGE_BYTES) break;
      units += row.units;
      taken.push(row);
    }
    const last = taken.at(-1);
    if (!last) return { parts: [], next: afterSpan };
    const onEvents = JSON.stringify(taken.filter((t) => t.k === 0).map((t) => t.seq));
    const inRows = JSON.stringify(taken.filter((t) => t.k !== 0).map((t) => t.k));
    const texts = new Map<string, SignedPart>();
    for (const row of this.sql<{ seq: number; text: string }>`
      SELECT seq, signed AS text FROM events WHERE seq IN (SELECT value FROM json_each(${onEvents}))`)
      texts.set(`${row.seq}:0`, { first: true, text: row.text });
    if (rows)
      for (const row of this.sql<{ seq: number; k: number; part: number; text: string }>`
        SELECT seq, rowid AS k, part, text FROM device_signed WHERE rowid IN (SELECT value FROM json_each(${inRows}))`)
        texts.set(`${row.seq}:${row.k}`, { first: row.part === 0, text: row.text });
    const parts = taken.map((t) => texts.get(`${t.seq}:${t.k}`)).filter((part): part is SignedPart => part !== undefined);
    return { parts, next: taken.length < sizes.length ? last.seq * PLACES_PER_EVENT + last.place : afterSpan };
  }

  /** The places and sizes of the parts on events' rows after `after` (a page and one more). */
  private sizesOnEvents(after: number, fromSeq: number, throughSeq: number): PartSize[] {
    return this.sql<PartSize>`
      SELECT seq, 0 AS k, length(signed) AS units, 1 AS place FROM events
      WHERE seq >= ${fromSeq} AND seq <= ${throughSeq} AND signed IS NOT NULL AND seq * ${PLACES_PER_EVENT} + 1 > ${after}
      ORDER BY seq LIMIT ${LIMITS.READ_PAGE_ITEMS + 1}`;
  }

  /**
   * The same with the parts kept as rows here, in their order after the one on the event's row.
   * Each source is cut to a page before the parts are numbered, so a page reads a page of events
   * (not every event after the cursor): cut there, a part whose event loses an earlier part falls
   * past the page and its one more (each source keeps a page, two more and the cursor's event's
   * parts already read, at least that many ahead of it).
   */
  private sizesWithRows(after: number, fromSeq: number, throughSeq: number): PartSize[] {
    const ahead = LIMITS.READ_PAGE_ITEMS + 2;
    const readOfCursorEvent = after % PLACES_PER_EVENT;
    return this.sql<PartSize>`
      SELECT seq, k, units, place FROM (
        SELECT seq, k, units, row_number() OVER (PARTITION BY seq ORDER BY k) AS place FROM (
          SELECT * FROM (
            SELECT seq, 0 AS k, length(signed) AS units FROM events
            WHERE seq >= ${fromSeq} AND seq <= ${throughSeq} AND signed IS NOT NULL ORDER BY seq LIMIT ${ahead}
          )
          UNION ALL
          SELECT kept.seq, kept.k, length(device_signed.text) AS units FROM (
            SELECT seq, rowid AS k FROM device_signed WHERE seq >= ${fromSeq} AND seq <= ${throughSeq}
            ORDER BY seq, rowid LIMIT ${ahead + readOfCursorEvent}
          ) AS kept JOIN device_signed ON device_signed.rowid = kept.k
        )
      ) WHERE seq * ${PLACES_PER_EVENT} + place > ${after}
      ORDER BY seq, k LIMIT ${LIMITS.READ_PAGE_ITEMS + 1}`;
  }
}
