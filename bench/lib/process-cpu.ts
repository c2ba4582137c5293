/**
 * CPU time of a running process as /proc tells it, for per-call CPU figures of a long-lived
 * process (the helper's `waymark mcp`): its threads' own time (each thread's schedstat, in
 * nanoseconds: the main thread, libuv's pool, V8's helpers) plus the time of the children it
 * has waited for (git; /proc's stat in clock ticks of 10 ms, so a per-call figure is a sum over
 * many calls divided by their number, never one call's delta). Linux only.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's stat fields (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** Fields after "(comm) ": utime, stime, cutime, cstime are fields 14-17 of stat, at indexes 11-14 here. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU ms of the children `pid` has waited for (their own children included). */
export function waitedChildrenCpuMs(pid: number = process.pid): number {
  const fields = statFields(pid);
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
}

/** CPU ms of `pid`'s live threads, from their schedstat (nanoseconds on the CPU). */
function threadsCpuMs(pid: number): number {
  let ns = 0;
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e6;
}

/** CPU ms `pid` has used so far: its threads' and its waited-for children's. */
export function processCpuMs(pid: number): number {
  return threadsCpuMs(pid) + waitedChildrenCpuMs(pid);
}
