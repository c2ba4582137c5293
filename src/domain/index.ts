/**
 * @module domain
 * Pure logic of the edge, importable in one line: the benches bundle this file by its path
 * (bench/lib/domain.ts), in this checkout and in an older tree they compare against.
 */
export * from "@waymark/protocol/paths";
export * from "./area-scope";
export * from "./changes";
export * from "./overlap";
