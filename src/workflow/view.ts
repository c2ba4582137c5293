/** Transitional re-export: the read model lives in src/domain/view.ts. */
export * from "../domain/view";
