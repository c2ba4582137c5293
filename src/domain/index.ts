/**
 * @module domain
 * Pure logic of the edge, importable in one line (benches and tests use it).
 */

export * from "./area-scope";
export * from "./changes";
export * from "./overlap";
export * from "./paths";
