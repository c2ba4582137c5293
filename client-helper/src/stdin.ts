/**
 * @module stdin
 * All of standard input as UTF-8: a hook's payload, or a file a command reads from `-`.
 */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
