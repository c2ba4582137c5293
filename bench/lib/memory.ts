/**
 * Peak memory of a local process during one operation, from /proc (Linux). The Worker's
 * isolate cannot be observed from outside `wrangler dev`, so the benches report the whole
 * workerd process: its peak resident set (VmHWM, reset just before the operation through
 * /proc/<pid>/clear_refs) above what it held before.
 */
import { readFileSync, writeFileSync } from "node:fs";

export interface PeakMemory {
  /** Resident set before the operation, bytes. */
  before: number;
  /** Peak resident set during the operation, bytes. */
  peak: number;
  /** How the peak was found: the kernel's high-water mark, or sampling every few ms. */
  method: "VmHWM" | "sampled VmRSS";
}

function statusField(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

export async function peakMemoryDuring<T>(pid: number, operation: () => Promise<T>): Promise<{ value: T; memory: PeakMemory }> {
  const before = statusField(pid, "VmRSS");
  let resetHighWater = true;
  try {
    // "5" resets the peak resident set size to the current one (Linux >= 4.0).
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    resetHighWater = false;
  }
  if (resetHighWater) {
    const value = await operation();
    return { value, memory: { before, peak: statusField(pid, "VmHWM"), method: "VmHWM" } };
  }
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, statusField(pid, "VmRSS"));
  }, 2);
  try {
    const value = await operation();
    peak = Math.max(peak, statusField(pid, "VmRSS"));
    return { value, memory: { before, peak, method: "sampled VmRSS" } };
  } finally {
    clearInterval(sampler);
  }
}
