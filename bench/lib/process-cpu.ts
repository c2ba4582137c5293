/**
 * CPU time of a `wrangler dev` server's processes, from the kernel's scheduler statistics
 * (/proc/<pid>/task/<tid>/schedstat: nanoseconds on a CPU, every thread summed): the workerd
 * that runs the Worker and its Durable Objects, wrangler's proxy workerd and wrangler's own Node
 * process, told apart. Time spent waiting for a core is not in it, so a loaded machine inflates
 * latency but not these figures (caches and frequency aside).
 * Also a long-lived client process's own CPU (the helper's `waymark mcp`): its threads' plus the
 * children it has waited for (git; /proc's stat in clock ticks of 10 ms, so a per-call figure is a
 * sum over many calls divided by their number, never one call's delta). Linux only.
 */
import { readdirSync, readFileSync } from "node:fs";
import { devServerGroup, processesInGroup } from "../../test/support/dev-server.ts";

export type ServerProcess = "worker (workerd)" | "proxy (workerd)" | "wrangler (node)" | "other";

export interface ServerProcessInfo {
  pid: number;
  role: ServerProcess;
}

/** The processes of the `wrangler dev` serving `port`, each with its role. */
export function serverProcesses(port: number): ServerProcessInfo[] {
  const group = devServerGroup(port);
  if (group === null) throw new Error(`no wrangler dev process group for port ${port}`);
  return processesInGroup(group).map(({ pid, comm, cmdline }) => ({
    pid,
    role:
      comm === "workerd"
        ? cmdline.includes("--inspector-addr")
          ? "worker (workerd)"
          : "proxy (workerd)"
        : cmdline.includes("wrangler")
          ? "wrangler (node)"
          : "other",
  }));
}

/** schedstat's field `field` (0: ns on a CPU, 1: ns runnable but waiting for one) summed over every thread of `pid` (0 once it is gone). */
function schedstat(pid: number, field: 0 | 1): number {
  let total = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[field]);
      } catch {
        // The thread ended while we looked.
      }
    }
  } catch {
    return 0;
  }
  return total;
}

/** Nanoseconds on a CPU of every thread of `pid` (0 once it is gone). */
export function cpuNanos(pid: number): number {
  return schedstat(pid, 0);
}

/** Nanoseconds the threads of `pid` were ready to run but waited for a core: what other load on the machine takes from it. */
export function runQueueNanos(pid: number): number {
  return schedstat(pid, 1);
}

/** What each process spent between `cpuMeter` and the call of the function it returns: CPU ms and ms waited for a core, by role. */
export interface CpuSpent {
  cpuMs: Record<string, number>;
  waitMs: Record<string, number>;
}

/**
 * Starts counting the CPU each of the server's processes (and this process, the client) spends;
 * the function returned reads what each spent since, and how long each waited for a core while
 * ready to run (`waitMs`).
 */
export function cpuMeter(port: number): () => CpuSpent {
  const watched = [...serverProcesses(port), { pid: process.pid, role: "client (this node)" }];
  const before = watched.map((m) => [cpuNanos(m.pid), runQueueNanos(m.pid)] as const);
  return () => {
    const cpuMs: Record<string, number> = {};
    const waitMs: Record<string, number> = {};
    watched.forEach((m, i) => {
      cpuMs[m.role] = (cpuMs[m.role] ?? 0) + (cpuNanos(m.pid) - (before[i]?.[0] ?? 0)) / 1e6;
      waitMs[m.role] = (waitMs[m.role] ?? 0) + (runQueueNanos(m.pid) - (before[i]?.[1] ?? 0)) / 1e6;
    });
    return { cpuMs, waitMs };
  };
}

/** Milliseconds of CPU each of the server's processes (and this process, the client) spent during `operation` (cpuMeter). */
export async function cpuDuring<T>(port: number, operation: () => Promise<T>): Promise<CpuSpent & { value: T }> {
  const spent = cpuMeter(port);
  const value = await operation();
  return { value, ...spent() };
}

/** Clock ticks per second of /proc's stat fields (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU ms of the children `pid` has waited for (their own children included): stat's cutime and cstime. */
export function waitedChildrenCpuMs(pid: number = process.pid): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
}

/** CPU ms `pid` has used so far: its threads' and its waited-for children's. */
export function processCpuMs(pid: number): number {
  return cpuNanos(pid) / 1e6 + waitedChildrenCpuMs(pid);
}
