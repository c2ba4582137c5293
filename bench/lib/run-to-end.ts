/**
 * A benchmarked command run as a process to its end, its output drained (counted, not kept),
 * optionally under GNU time so its CPU seconds (its own and its waited-for children's) are known.
 */
import { spawn } from "node:child_process";

/** GNU time: `-f "%U %S" -o <file>` writes user and system seconds. */
export const GNU_TIME = "/usr/bin/time";

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Run under GNU time, writing "user system" seconds to this file. */
  cpuFile?: string;
}

/** Resolves with the bytes the command wrote to stdout; rejects with its exit code and stderr's end. */
export function runToEnd(command: string, args: readonly string[], options: RunOptions = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const [file, argv] = options.cpuFile ? [GNU_TIME, ["-f", "%U %S", "-o", options.cpuFile, command, ...args]] : [command, [...args]];
    const child = spawn(file, argv, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let bytes = 0;
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-2000);
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(bytes) : reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${errors}`)),
    );
  });
}
