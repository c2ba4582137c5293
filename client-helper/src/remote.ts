/**
 * @module remote
 * The connection to the remote Waymark endpoint. Every request has a hard deadline:
 * an agent waiting on a tool call must get an answer, never a hang.
 */
import {
  Client,
  ProtocolError,
  type RequestMethod,
  type ResultTypeMap,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";

export type FailureCode = "UNAUTHORIZED" | "UNAVAILABLE" | "TOO_LARGE";

/** A failure to reach or be accepted by the endpoint (as opposed to an answer from it). */
export class RemoteFailure extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = "RemoteFailure";
  }
}

export type RemoteOptions = {
  url: string;
  token: string | undefined;
  timeoutMs: number;
  version: string;
};

function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

function httpStatus(error: unknown): number | undefined {
  if (error instanceof SdkHttpError) return error.status;
  const match = error instanceof Error ? /\bHTTP (\d{3})\b|\b(\d{3})\b.*(?:Unauthorized|Forbidden)/i.exec(error.message) : null;
  return match ? Number(match[1] ?? match[2]) : undefined;
}

export class Remote {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  /** Why this process last closed its connection: requests still pending on it fail for that reason, not as "Connection closed". */
  private closedFor: RemoteFailure | null = null;

  constructor(private readonly options: RemoteOptions) {}

  private seconds(): string {
    return `${Math.round(this.options.timeoutMs / 100) / 10} s`;
  }

  /** Maps transport and HTTP failures to a code and an instruction the agent can act on. */
  classify(error: unknown): Error {
    if (error instanceof RemoteFailure || error instanceof ProtocolError) return error;
    const url = this.options.url;
    const status = httpStatus(error);
    if (error instanceof UnauthorizedError || status === 401 || status === 403) {
      const hint = this.options.token
        ? "the token was rejected; check WAYMARK_TOKEN (or --token) in the MCP server configuration"
        : "no token configured; set WAYMARK_TOKEN (or pass --token) in the MCP server configuration";
      return new RemoteFailure("UNAUTHORIZED", `${url} answered HTTP ${status ?? 401}: ${hint}.`);
    }
    if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
      return new RemoteFailure(
        "UNAVAILABLE",
        `no answer from ${url} within ${this.seconds()}; retry later (retrying complete_task is safe).`,
      );
    }
    if (status === 413) {
      // Retrying sends the same body: saying "retry later" would be a lie.
      return new RemoteFailure(
        "TOO_LARGE",
        `${url} answered HTTP 413: the request is larger than the endpoint accepts. Retrying the same call fails the same way; shorten the text fields of this call, or update the helper (it keeps its own data within the limits).`,
      );
    }
    if (status !== undefined) {
      return new RemoteFailure(
        "UNAVAILABLE",
        `${url} answered HTTP ${status}; check --url, or retry later (retrying complete_task is safe).`,
      );
    }
    const code = causeCode(error);
    const detail = code ?? (error instanceof Error ? error.message : String(error));
    return new RemoteFailure(
      "UNAVAILABLE",
      `cannot reach ${url} (${detail}); check that the endpoint is up and --url is right, then retry (retrying complete_task is safe).`,
    );
  }

  private async connect(signal: AbortSignal): Promise<Client> {
    if (this.client) return this.client;
    if (!this.connecting) {
      const headers: Record<string, string> = {};
      if (this.options.token) headers.Authorization = `Bearer ${this.options.token}`;
      const transport = new StreamableHTTPClientTransport(new URL(this.options.url), { requestInit: { headers } });
      const client = new Client({
        name: "waymark-helper",
        version: this.options.version,
      });
      client.onclose = () => {
        if (this.client === client) this.client = null;
      };
      this.connecting = client
        .connect(transport, { timeout: this.options.timeoutMs, signal })
        .then(() => {
          this.client = client;
          return client;
        })
        .catch(async (error: unknown) => {
          await client.close().catch(() => {});
          throw error;
        })
        .finally(() => {
          this.connecting = null;
        });
    }
    return this.connecting;
  }

  /** Drops the connection so the next request starts a fresh one. */
  private async reset(reason?: RemoteFailure): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client && reason) this.closedFor = reason;
    await client?.close().catch(() => {});
  }

  /** Sends one request with a deadline covering connect + request; failures are classified. */
  async request<M extends RequestMethod>(method: M, params: Record<string, unknown> | undefined): Promise<ResultTypeMap[M]> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new SdkError(SdkErrorCode.RequestTimeout, "deadline"));
      }, this.options.timeoutMs);
    });
    try {
      const run = async (): Promise<ResultTypeMap[M]> => {
        const client = await this.connect(controller.signal);
        return client.request({ method, params }, { timeout: this.options.timeoutMs, signal: controller.signal });
      };
      return await Promise.race([run(), deadline]);
    } catch (error) {
      // Past the deadline whatever failed failed because we aborted it (a connection cut
      // mid-handshake reads as "cannot reach"): it is a timeout.
      const closedUnderIt = this.closedFor !== null && error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed;
      const classified =
        closedUnderIt && this.closedFor
          ? this.closedFor
          : this.classify(controller.signal.aborted ? new SdkError(SdkErrorCode.RequestTimeout, "deadline") : error);
      if (classified instanceof RemoteFailure) await this.reset(classified);
      throw classified;
    } finally {
      clearTimeout(timer);
    }
  }

  capabilities(): ReturnType<Client["getServerCapabilities"]> {
    return this.client?.getServerCapabilities();
  }

  async close(): Promise<void> {
    await this.reset();
  }
}
