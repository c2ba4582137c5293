export * from "./changes";
export * from "./overlap";
export * from "./paths";
export * from "./scope";
