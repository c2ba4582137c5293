/** @module annotations — the MCP tool annotations Waymark's tools share. */
import type { ToolAnnotations } from "@modelcontextprotocol/server";

/** Writing tools only append to Waymark's own record: not destructive, no outside world. */
export const WRITES: ToolAnnotations = { destructiveHint: false, openWorldHint: false };
/** Reading tools change nothing. */
export const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
