/**
 * test/support/device-keys.ts loaded into Node for the benches: it imports @waymark/protocol,
 * whose TypeScript imports carry no extension (Node's type stripping cannot resolve them), so it
 * is bundled with esbuild into one temporary module first, as bench/lib/domain.ts does for src/domain.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

/** What the benches use of test/support/device-keys.ts (its own types need the Worker's lib). */
export interface BenchDevice {
  key: string;
  signSnapshot<T extends Record<string, unknown>>(snapshot: T, workflowId: string): Promise<T>;
  signChanges<T extends Record<string, unknown>>(changes: T, metrics: unknown, taskId: string, startNonce?: string): Promise<T>;
}

export interface DeviceKeys {
  testDevice(): Promise<BenchDevice>;
  nonceOf(data: object): string;
}

export async function loadDeviceKeys(): Promise<DeviceKeys> {
  const root = join(import.meta.dirname, "..", "..");
  const result = await build({
    entryPoints: [join(root, "test", "support", "device-keys.ts")],
    absWorkingDir: root,
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    logLevel: "silent",
  });
  const file = join(mkdtempSync(join(tmpdir(), "waymark-bench-device-keys-")), "device-keys.mjs");
  writeFileSync(file, result.outputFiles[0]?.text ?? "");
  return (await import(pathToFileURL(file).href)) as DeviceKeys;
}

/** A new device, approved by the owner on `server` (POST /api/devices, as the dashboard does): what signs a bench's evidence. */
export async function approvedDevice(server: { url: string; token: string }, keys: DeviceKeys): Promise<BenchDevice> {
  const device = await keys.testDevice();
  const approved = await fetch(`${server.url}/api/devices`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "bench box", key: device.key }),
  });
  if (approved.status !== 201) throw new Error(`device approval answered ${approved.status}: ${await approved.text()}`);
  return device;
}
