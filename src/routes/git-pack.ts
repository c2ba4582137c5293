/**
 * @module routes/git-pack
 * A tiny read-only git repository, built in memory from a list of files: one commit on
 * `refs/heads/main`, its trees and blobs, and the packfile git's smart HTTP protocol sends
 * (https://git-scm.com/docs/pack-format, https://git-scm.com/docs/http-protocol). Pure Web APIs
 * (SHA-1 from Web Crypto, zlib from CompressionStream), so it runs in the Worker; the same bytes
 * for the same files, so a clone of an unchanged repository is the same commit.
 */

export type RepositoryFile = { path: string; content: string };

type GitObject = { type: "commit" | "tree" | "blob"; body: Uint8Array; id: Uint8Array };

export type PackedRepository = {
  /** The commit, in hex. */
  head: string;
  /** The packfile holding every object, checksum included. */
  pack: Uint8Array;
};

const encoder = new TextEncoder();
const TYPE_CODE = { commit: 1, tree: 2, blob: 3 } as const;
/** A fixed commit time: the commit id depends only on the files. */
const COMMIT_TIME = "1767225600 +0000";

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const hex = (bytes: Uint8Array) => [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");

async function sha1(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-1", bytes));
}

/** zlib (RFC 1950), what git stores and packs. */
async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function object(type: GitObject["type"], body: Uint8Array): Promise<GitObject> {
  const id = await sha1(concat([encoder.encode(`${type} ${body.length}\0`), body]));
  return { type, body, id };
}

type Directory = { files: Map<string, string>; dirs: Map<string, Directory> };

function directoryOf(files: readonly RepositoryFile[]): Directory {
  const root: Directory = { files: new Map(), dirs: new Map() };
  for (const file of files) {
    const parts = file.path.split("/");
    const name = parts.pop() as string;
    let dir = root;
    for (const part of parts) {
      let next = dir.dirs.get(part);
      if (!next) {
        next = { files: new Map(), dirs: new Map() };
        dir.dirs.set(part, next);
      }
      dir = next;
    }
    dir.files.set(name, file.content);
  }
  return root;
}

/** A tree and everything under it; entries in git's order (a directory sorts as its name and `/`). */
async function tree(dir: Directory, into: GitObject[]): Promise<GitObject> {
  const entries: { sortKey: string; bytes: Uint8Array }[] = [];
  for (const [name, content] of dir.files) {
    const blob = await object("blob", encoder.encode(content));
    into.push(blob);
    entries.push({ sortKey: name, bytes: concat([encoder.encode(`100644 ${name}\0`), blob.id]) });
  }
  for (const [name, sub] of dir.dirs) {
    const child = await tree(sub, into);
    entries.push({ sortKey: `${name}/`, bytes: concat([encoder.encode(`40000 ${name}\0`), child.id]) });
  }
  entries.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  const built = await object("tree", concat(entries.map((entry) => entry.bytes)));
  into.push(built);
  return built;
}

/** The pack entry header: type and size, seven bits at a time after the first four. */
function entryHeader(type: GitObject["type"], size: number): Uint8Array {
  const bytes: number[] = [];
  let byte = (TYPE_CODE[type] << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return new Uint8Array(bytes);
}

/** One commit of these files (author and message given), packed. */
export async function packRepository(files: readonly RepositoryFile[], message: string): Promise<PackedRepository> {
  const objects: GitObject[] = [];
  const root = await tree(directoryOf(files), objects);
  const signature = `Waymark <waymark@localhost> ${COMMIT_TIME}`;
  const commit = await object(
    "commit",
    encoder.encode(`tree ${hex(root.id)}\nauthor ${signature}\ncommitter ${signature}\n\n${message}\n`),
  );
  objects.push(commit);
  const count = new Uint8Array(4);
  new DataView(count.buffer).setUint32(0, objects.length);
  const parts: Uint8Array[] = [encoder.encode("PACK"), new Uint8Array([0, 0, 0, 2]), count];
  for (const entry of objects) parts.push(entryHeader(entry.type, entry.body.length), await deflate(entry.body));
  const body = concat(parts);
  return { head: hex(commit.id), pack: concat([body, await sha1(body)]) };
}

/** One pkt-line: four hex digits of length (themselves included), then the data. */
export function pktLine(data: string | Uint8Array): Uint8Array {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return concat([encoder.encode((bytes.length + 4).toString(16).padStart(4, "0")), bytes]);
}

export const FLUSH = encoder.encode("0000");

/** The pkt-lines of a request body (flushes as null), or null when it is not pkt-lines. */
export function readPktLines(body: Uint8Array): (string | null)[] | null {
  const decoder = new TextDecoder();
  const lines: (string | null)[] = [];
  for (let at = 0; at < body.length; ) {
    const length = Number.parseInt(decoder.decode(body.subarray(at, at + 4)), 16);
    if (!Number.isInteger(length) || (length !== 0 && length < 4) || at + Math.max(length, 4) > body.length) return null;
    lines.push(length === 0 ? null : decoder.decode(body.subarray(at + 4, at + length)).replace(/\n$/, ""));
    at += length === 0 ? 4 : length;
  }
  return lines;
}

/** Data on side-band channel 1 (the pack), in pieces of at most 65515 bytes, as side-band-64k allows. */
export function sideBand(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += 65515) parts.push(pktLine(concat([new Uint8Array([1]), data.subarray(at, at + 65515)])));
  return concat(parts);
}

export { concat };
